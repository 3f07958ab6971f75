"""memtend: keeps an AI agent's memory healthy."""
