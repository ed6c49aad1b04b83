"""olympiad-eval: reproducible evaluation of LLMs on olympiad physics and maths."""

import importlib.util
import sys
from types import ModuleType

__version__ = "0.1.0"


def lazy_import(name: str) -> ModuleType:
    """`name`, imported on first use of one of its attributes (the standard library's LazyLoader
    recipe). A stage is a process of its own, so an import it never uses is paid on every run:
    pandas costs about 0.4 s, and the benchmark modules need it only to write tables."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
