"""Reconciling conflicting probe results (spec §3.4) and predicting generalisation (§3.5).

Two results on the same construct *conflict* when their verdicts differ (bias / null / reverse by
their 95% CIs) or their point estimates have opposite signs (both |index| ≥ ``min_effect``). A
conflict is labelled, preferring "different levels/contexts" explanations before a contradiction:

* R1 cross-level dissociation — different levels: not a contradiction, report both;
* R2 ecological gap — same level, EV differs (≥ ``ev_gap``): weight the higher-EV probe for the target;
* R3 boundary condition — same level, similar EV, a moderator differs: name it, propose a no-lose design;
* R4 measurement problem — nothing differs: check reliability (seed / paraphrase variance) first.
"""

from __future__ import annotations

from itertools import combinations
from typing import Literal

import numpy as np
from pydantic import BaseModel

from methods.ecolevels.classify import LEVEL_NAMES, LEVEL_RANK
from methods.ecolevels.result import ProbeResult
from methods.ecolevels.validity import TargetTask

Label = Literal["R1", "R2", "R3", "R4"]
LABEL_NAMES = {
    "R1": "cross-level dissociation",
    "R2": "ecological gap",
    "R3": "boundary condition",
    "R4": "measurement problem",
}


class Conflict(BaseModel):
    a: str
    b: str
    label: Label
    explanation: str
    moderators: list[str] = []
    weight_to: str | None = None
    proposal: str = ""


class Prediction(BaseModel):
    probe: str
    target: str
    strength: str
    statement: str
    expected_direction: str
    falsifier: str


def conflicting(a: ProbeResult, b: ProbeResult, *, min_effect: float = 0.05) -> bool:
    if a.verdict != b.verdict:
        return True
    return bool(np.sign(a.effect) * np.sign(b.effect) < 0 and min(abs(a.effect), abs(b.effect)) >= min_effect)


def label_pair(a: ProbeResult, b: ProbeResult, *, ev_gap: float = 0.2) -> Conflict:
    """The R-label of a conflicting pair (levels first, then EV, then moderators, then measurement)."""
    if a.level != b.level:
        lo, hi = sorted((a, b), key=lambda r: LEVEL_RANK[r.level])
        return Conflict(
            a=a.probe_id,
            b=b.probe_id,
            label="R1",
            explanation=(
                f"{lo.name} ({lo.level} {LEVEL_NAMES[lo.level]}: {lo.verdict}) and {hi.name} ({hi.level} "
                f"{LEVEL_NAMES[hi.level]}: {hi.verdict}) probe different levels; like human implicit/explicit "
                "dissociations this is not a contradiction — report both (e.g. 'associations present, outputs "
                "unbiased')."
            ),
        )
    ea, eb = a.ev if a.ev is not None else 0.0, b.ev if b.ev is not None else 0.0
    if abs(ea - eb) >= ev_gap - 1e-9:
        hi, lo = (a, b) if ea > eb else (b, a)
        return Conflict(
            a=a.probe_id,
            b=b.probe_id,
            label="R2",
            weight_to=hi.probe_id,
            explanation=(
                f"Same level ({a.level}); {hi.name} has EV {max(ea, eb):.1f} against {min(ea, eb):.1f} for {lo.name}: "
                f"weight {hi.name} for claims about the target; {lo.name} is context-limited."
            ),
        )
    keys = sorted(set(a.moderators) | set(b.moderators))
    differing = [k for k in keys if a.moderators.get(k) != b.moderators.get(k)]
    if differing:
        mods = ", ".join(differing)
        return Conflict(
            a=a.probe_id,
            b=b.probe_id,
            label="R3",
            moderators=differing,
            explanation=f"Same level and similar EV; they differ in {mods}: a boundary condition, not a contradiction.",
            proposal=(
                f"No-lose design: run one probe while manipulating {mods} (both settings, same items, same seeds); "
                "if the effect tracks the moderator the boundary is confirmed, if not the moderator is ruled out and "
                "the conflict moves to measurement (R4)."
            ),
        )
    return Conflict(
        a=a.probe_id,
        b=b.probe_id,
        label="R4",
        explanation=(
            "Same level, same EV, same moderators, still conflicting: check reliability first — the spread of "
            f"indices across seeds/paraphrases ({_spread(a)} vs {_spread(b)}) and overlapping CIs "
            f"([{a.ci_low:+.2f}, {a.ci_high:+.2f}] vs [{b.ci_low:+.2f}, {b.ci_high:+.2f}])."
        ),
        proposal="Re-run both with more seeds and paraphrases; conclude nothing until the CIs separate.",
    )


def _spread(r: ProbeResult) -> str:
    idx = [x["index"] for x in r.runs] or [r.effect]
    return f"{min(idx):+.2f}…{max(idx):+.2f}"


def reconcile(results: list[ProbeResult]) -> list[Conflict]:
    """Every conflicting pair within each construct, labelled."""
    out = []
    for a, b in combinations(results, 2):
        if a.construct_key == b.construct_key and conflicting(a, b):
            out.append(label_pair(a, b))
    return out


def predict(result: ProbeResult, target: TargetTask) -> Prediction:
    """§3.5: strength from level match and EV; a testable statement with its falsifier."""
    pr, tr = LEVEL_RANK[result.level], LEVEL_RANK[target.level]
    ev = result.ev if result.ev is not None else 0.0
    direction = {
        "bias": "a disadvantage for the counter-stereotypical group",
        "reverse": "a disadvantage for the stereotype-consistent group",
        "null": "no group difference",
    }[result.verdict]
    if pr == tr and ev >= 0.8:
        strength = "likely to generalise"
    elif pr == tr:
        strength = "uncertain; test moderators"
    elif pr < tr:
        strength = "indicates risk/potential only; do not infer behaviour"
    else:
        strength = "not informative about associations"
    return Prediction(
        probe=result.probe_id,
        target=target.name,
        strength=strength,
        expected_direction=direction,
        statement=(
            f"{result.name} ({result.level}, EV {ev:.1f} for {target.name}) measured {result.effect:+.2f} "
            f"[{result.ci_low:+.2f}, {result.ci_high:+.2f}]: the {target.name} is expected to show {direction} "
            f"({strength})."
        ),
        falsifier=(
            f"An audit of the deployed {target.name} with real inputs whose group gap's 95% CI "
            + ("excludes the predicted sign." if result.verdict != "null" else "excludes zero.")
        ),
    )
