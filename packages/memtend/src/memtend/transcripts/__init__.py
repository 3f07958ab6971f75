"""The transcript tier: framework-neutral messages, compaction and structured summaries."""
