"""The probe registry (spec §3.2 / §6): probe records with construct and classification metadata.

Probes come from ``probes.yaml`` (the seed) and live in the ``ecolevels_probes`` table; :func:`seed`
upserts the YAML into the table and :func:`load_probes` reads the table (or the YAML without a DB).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

SEED_FILE = Path(__file__).with_name("probes.yaml")

Observes = Literal["representation", "likelihood", "generation"]
GroupSignal = Literal["explicit", "name", "implicit"]
OutputFormat = Literal["forced_choice", "score", "free_text"]


class Construct(BaseModel):
    """What a probe measures: a bias dimension, the groups, the attributes and the stereotyped direction."""

    dimension: str = Field(..., max_length=80)
    groups: list[str] = Field(..., min_length=1, max_length=10)
    attributes: list[str] = Field(default_factory=list, max_length=10)
    direction: str = Field("", max_length=200, description="Which pairing is stereotype-consistent.")

    def key(self) -> str:
        return f"{self.dimension}:{'/'.join(sorted(self.groups))}"


class ProbeMetadata(BaseModel):
    """The fields the level classifier reads (spec §3.2) plus those the EV scorer compares (§3.1)."""

    model_config = ConfigDict(extra="forbid")

    observes: Observes
    asks_about_group: bool
    individual_target: bool
    task_context: str = Field("", max_length=300)
    group_signal: GroupSignal
    output_format: OutputFormat
    task_type: str = Field("none", max_length=60, description="The decision/task the probe poses.")
    naturalistic_inputs: bool = Field(False, description="Real-world inputs rather than templates.")
    interaction_framing: str = Field("bare_prompt", max_length=60, description="How the prompt is framed.")
    moderators: dict[str, str] = Field(default_factory=dict, description="Settings that may bound the effect.")


class Probe(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    id: str = Field(..., pattern=r"^[a-z0-9_]{2,60}$")
    name: str = Field(..., max_length=120)
    description: str = Field("", max_length=1000)
    bias_construct: Construct = Field(..., alias="construct", description="What the probe measures.")
    metadata: ProbeMetadata
    dataset: str = Field("", max_length=200)
    metric: str = Field("", max_length=300)
    expected_direction: str = Field("", max_length=200)
    runner: str | None = Field(None, description="Name of the runnable implementation (probes.RUNNERS).")


@functools.lru_cache(maxsize=1)
def seed_probes() -> tuple[Probe, ...]:
    """The YAML seed, validated."""
    raw = yaml.safe_load(SEED_FILE.read_text())
    return tuple(Probe.model_validate(p) for p in raw["probes"])


def seed() -> int:
    """Upsert the YAML seed into ``ecolevels_probes``; returns how many rows were written."""
    from core.db.session import session_scope
    from methods.ecolevels.models import EcoProbe

    n = 0
    with session_scope() as s:
        for p in seed_probes():
            row = s.get(EcoProbe, p.id) or EcoProbe(id=p.id)
            row.name, row.record = p.name, p.model_dump(mode="json", by_alias=True)
            s.add(row)
            n += 1
    return n


def register_probe(probe: Probe) -> None:
    """Add or replace one probe in the table."""
    from core.db.session import session_scope
    from methods.ecolevels.models import EcoProbe

    with session_scope() as s:
        row = s.get(EcoProbe, probe.id) or EcoProbe(id=probe.id)
        row.name, row.record = probe.name, probe.model_dump(mode="json", by_alias=True)
        s.add(row)


def load_probes(*, from_db: bool = True) -> list[Probe]:
    """Every registered probe (the table, seeded on first use; the YAML when ``from_db`` is False)."""
    if not from_db:
        return list(seed_probes())
    from sqlalchemy import select

    from core.db.session import session_scope
    from methods.ecolevels.models import EcoProbe

    with session_scope() as s:
        rows = s.scalars(select(EcoProbe)).all()
        records: list[dict[str, Any]] = [r.record for r in rows]
    if not records:
        seed()
        return list(seed_probes())
    return sorted((Probe.model_validate(r) for r in records), key=lambda p: p.id)


def get_probe(probe_id: str) -> Probe:
    for p in load_probes(from_db=False):
        if p.id == probe_id:
            return p
    for p in load_probes():
        if p.id == probe_id:
            return p
    raise KeyError(f"unknown probe {probe_id!r}")
