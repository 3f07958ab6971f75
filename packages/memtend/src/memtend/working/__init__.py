"""Working memory: session state, the side-effect ledger and the memory tool an agent calls."""
