"""The per-user retrieval index and its word index."""
