"""Choosing probes for a target question (spec §3.3).

Evidence: probes at the claim's level with the highest EV for the target; diagnostics: the best
runnable probe of every lower level (mechanism/risk, never evidence of deployment behaviour); at
least two methods per construct (multitrait–multimethod logic).
"""

from __future__ import annotations

from pydantic import BaseModel

from methods.ecolevels.classify import LEVEL_RANK, classify
from methods.ecolevels.registry import Probe
from methods.ecolevels.validity import TargetTask, ecological_validity


class Selected(BaseModel):
    probe_id: str
    role: str  # evidence | diagnostic
    level: str
    ev: float


def select_probes(probes: list[Probe], target: TargetTask, *, runnable_only: bool = True) -> list[Selected]:
    pool = [p for p in probes if p.runner is not None or not runnable_only]
    scored = [(p, classify(p.metadata), ecological_validity(p.metadata, target)) for p in pool]
    out: list[Selected] = []
    same = sorted((x for x in scored if x[1] == target.level), key=lambda x: -x[2])
    if same:
        best = same[0][2]
        out += [Selected(probe_id=p.id, role="evidence", level=lv, ev=ev) for p, lv, ev in same if ev == best]
    for rank in sorted({LEVEL_RANK[lv] for _, lv, _ in scored if LEVEL_RANK[lv] < LEVEL_RANK[target.level]}):
        cands = sorted((x for x in scored if LEVEL_RANK[x[1]] == rank), key=lambda x: (-x[2], x[0].id))
        p, lv, ev = cands[0]
        out.append(Selected(probe_id=p.id, role="diagnostic", level=lv, ev=ev))
    by_construct: dict[str, int] = {}
    for s in out:
        c = next(p for p in pool if p.id == s.probe_id).bias_construct.key()
        by_construct[c] = by_construct.get(c, 0) + 1
    for p, lv, ev in sorted(scored, key=lambda x: -x[2]):  # top up constructs with a single method
        c = p.bias_construct.key()
        if by_construct.get(c, 0) == 1 and all(s.probe_id != p.id for s in out):
            out.append(Selected(probe_id=p.id, role="diagnostic", level=lv, ev=ev))
            by_construct[c] += 1
    return out
