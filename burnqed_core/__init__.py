"""burnqed core library: Lean REPL pool, search, policy clients, training, EBM,
data and evaluation. Plain Python: this package never imports Dagster."""

__version__ = "0.1.0"
