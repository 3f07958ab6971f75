"""How changes reach storage: the write journal, guarded writes between processes, last-used stamps."""
