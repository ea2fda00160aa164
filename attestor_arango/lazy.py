"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package that re-exports names from its heavy modules would load all of them
(numpy, the engines) whenever any light module inside it is imported, such as
the report types the HTTP client decodes. With ``lazy_exports`` a name is
imported from its module on first access, and ``from package import Name``
keeps working.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``names[attr]`` (a module path) on first use."""

    def __getattr__(attr: str) -> Any:
        module = names.get(attr)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {attr!r}")
        return getattr(importlib.import_module(module), attr)

    return __getattr__
