"""The PAE graph's state: small, JSON-serialisable, checkpointed after every node.

Trajectories, steps and screenshots live in the database; the state only carries ids
and the per-iteration metrics, so a checkpoint stays tiny and a resumed run re-reads
everything it needs.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class InputState(TypedDict):
    """What starts a run: the id of a ``pae_runs`` row holding its :class:`~agents.pae.config.RunConfig`."""

    run_id: str


class PaeState(InputState, total=False):
    iteration: int
    """Completed policy updates so far (0 before the first update). Overwritten by each node."""

    policy: dict[str, Any]
    """The current policy reference (:mod:`agents.pae.runtime`). Overwritten by the train/SFT nodes."""

    kept: list[str]
    """Trajectory ids the last filter kept (the next update's data). Overwritten by the filter node."""

    tested: list[int]
    """Iterations whose policy has been tested. Overwritten (the test node appends and rewrites it)."""

    history: Annotated[list[dict[str, Any]], operator.add]
    """Metrics records, appended by every node (reducer: list concatenation)."""
