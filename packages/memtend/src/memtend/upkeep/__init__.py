"""Review and forget for one user: log compaction, the retention schedule, fact folding and purge after grace."""
