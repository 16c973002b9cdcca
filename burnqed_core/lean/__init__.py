"""Lean: one interface (`ProofEnv`), two backends (embedded WebAssembly Lean,
Pantograph), a pool, tracing, the whole-proof checker and the tactic sandbox."""
