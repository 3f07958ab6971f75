"""Consistency between processes sharing a store, in one place: fact precedence resolved when facts are read
(claims, folds, the slot cache), all-or-nothing changes (the write journal) and read-check-write without
compare-and-set (guarded writes). The invariants are on one page: docs/consistency.md."""
