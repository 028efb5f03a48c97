"""LMS3: LLM-oriented demonstration selection with rejection (spec ``lms3.md``).

Library use::

    from methods.lms3 import Lms3Service, PoolSpec
    svc = Lms3Service()
    svc.index(PoolSpec("mawps"))
    result = svc.select("A pencil weighs 28.3 grams ...", PoolSpec("mawps"))
"""

from methods.lms3.config import RepresentationConfig, SelectionConfig
from methods.lms3.data import PoolSpec
from methods.lms3.selection import Lms3Service

__all__ = ["Lms3Service", "PoolSpec", "RepresentationConfig", "SelectionConfig"]
