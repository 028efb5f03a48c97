"""LMS3: LLM-oriented demonstration selection with rejection (spec ``lms3.md``).

Library use::

    from methods.lms3 import Lms3Service, PoolSpec
    svc = Lms3Service()
    svc.index(PoolSpec("mawps"))
    result = svc.select("A pencil weighs 28.3 grams ...", PoolSpec("mawps"))
"""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RepresentationConfig": "methods.lms3.config",
        "SelectionConfig": "methods.lms3.config",
        "PoolSpec": "methods.lms3.data",
        "Lms3Service": "methods.lms3.selection",
    },
)
