"""LMS3: LLM-oriented demonstration selection with rejection (spec ``lms3.md``).

Library use::

    from methods.lms3 import Lms3Service, PoolSpec
    svc = Lms3Service()
    svc.index(PoolSpec("mawps"))
    result = svc.select("A pencil weighs 28.3 grams ...", PoolSpec("mawps"))
"""

from __future__ import annotations

import importlib
from typing import Any

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
_EXPORTS = {
    "RepresentationConfig": "methods.lms3.config",
    "SelectionConfig": "methods.lms3.config",
    "PoolSpec": "methods.lms3.data",
    "Lms3Service": "methods.lms3.selection",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'methods.lms3' has no attribute {name!r}")
