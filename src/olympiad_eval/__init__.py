"""olympiad-eval: reproducible evaluation of LLMs on olympiad physics and maths."""

__version__ = "0.1.0"
