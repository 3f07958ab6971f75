"""Fact precedence made safe between processes: read-time claims, folds and the per-key slot cache."""
