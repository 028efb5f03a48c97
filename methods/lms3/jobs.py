"""LMS3 job types (``lms3.index``, ``lms3.select``) and the ``lms3`` reproducer.

``device``/``amp`` (:class:`core.device.DeviceParams`) choose where the local transformers model
(SmolLM2) computes the representations (hidden states) and, in the reproducer, the gold-NLL
logits and greedy decoding. ``lms3.select`` with ``generate`` runs the prompt through
``core.llm.complete`` (llama.cpp or the gateway), whose device is a deployment setting.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from core.config import get_settings
from core.device import DeviceParams, device_provenance, resolve_device
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.lms3.config import PRESETS, DatasetName, RepresentationConfig, SelectionConfig
from methods.lms3.params import IndexParams, PoolParams, SelectParams

if TYPE_CHECKING:
    from methods.lms3.selection import Lms3Service

log = logging.getLogger(__name__)

MODEL_NAME: str | None = None
"""The local model the jobs encode with (``None``: the registry's default, SmolLM2-135M-Instruct)."""


def _service(p: PoolParams, orientation: str = "reference") -> Lms3Service:
    from methods.lms3.selection import Lms3Service  # torch: imported when a job runs, not at registration

    return Lms3Service(
        model_name=MODEL_NAME,
        representation=RepresentationConfig(mode=p.mode, layer=p.layer, orientation=orientation),
        device=resolve_device(p.device),
        amp=p.amp,
    )


@register_method(
    "lms3.index",
    title="LMS3: index a demonstration pool",
    description="Embed a pool once into Chroma (x, P·x, Stab per item); re-indexing is skipped.",
)
def index_job(params: IndexParams, progress: JobContext) -> Report:
    """Embed a dataset's demonstration pool with the local model and store it in Chroma."""
    svc = _service(params)
    keys = None
    if params.all_representations:
        keys = [
            (m, layer)
            for m in ("reference", "last_token", "eos_appended")
            for layer in ("final_norm_output", "last_layer_attn_input")
        ]
    stats = svc.index(params.pool(), keys=keys, progress=progress)
    progress(1.0, "indexed" if stats.encoded else "already indexed")
    report = Report(
        title=f"LMS3 pool {stats.pool}",
        summary=(
            f"{stats.items} items; encoded {stats.encoded} now ({stats.items_per_s:.1f} items/s)"
            if stats.encoded
            else f"{stats.items} items already indexed: nothing encoded."
        ),
    )
    report.metrics.update(
        {
            "items": stats.items,
            "encoded": stats.encoded,
            "forward_passes": stats.forward_passes,
            "seconds": round(stats.seconds, 2),
            "model_hash": svc.model_hash,
            **device_provenance(svc.device, params.amp),
        }
    )
    report.add_table("Collections", ["collection"], [[c] for c in stats.collections])
    return report


@register_method(
    "lms3.select",
    title="LMS3: choose demonstrations for a problem",
    description="Query → demonstrations with Sim, Stab, Score, whether rejection fired, and the prompt.",
)
def select_job(params: SelectParams, progress: JobContext) -> Report:
    """Select demonstrations for one query from an indexed pool (optionally run the prompt)."""
    svc = _service(params, params.orientation)
    spec = params.pool()
    if params.index_if_missing:
        svc.index(spec, progress=progress.sub(0.0, 0.8))
    progress(0.85, "selecting")
    res = svc.select(
        params.query,
        spec,
        subject=params.subject,
        arm=params.arm,
        selection=SelectionConfig(k=params.k, l=params.l, min_lambda=params.min_lambda),
        normalize=params.normalize,
    )
    report = Report(
        title=f"LMS3 selection ({params.arm}) from {res.pool}"
        + (f" [non-reference Sim: {params.normalize}]" if params.normalize != "none" else ""),
        summary=(
            "Rejected: every candidate lies outside the Sim top-λ, so the query gets the zero-shot prompt."
            if res.rejected
            else f"{len(res.demos)} demonstration(s) chosen."
        ),
    )
    report.metrics.update(
        {
            "rejected": res.rejected,
            "demos": len(res.demos),
            "lambda": res.lam,
            "pool_size": res.pool_size,
            "normalize": params.normalize,
            **device_provenance(svc.device, params.amp),
        }
    )
    cols = ["rank", "pool index", "Sim", "Stab", "Score", "cosine distance", "in Sim top-λ", "problem"]

    def rows(items):
        return [
            [d.rank + 1, d.index, d.sim, d.stab, d.score, d.cosine_distance, d.in_sim_top_lambda, d.problem[:160]]
            for d in items
        ]

    report.add_table("Chosen demonstrations", cols, rows(res.demos))
    report.add_table("Score top-k candidates (before rejection)", cols, rows(res.candidates))
    report.add_section("Prompt", "```text\n" + res.prompt + "\n```")
    data = res.to_dict()
    if params.generate:
        from core.llm import complete

        progress(0.9, "running the prompt through the model")
        out = complete(res.prompt, max_tokens=params.max_new_tokens, tag="lms3")
        report.add_section("Model output", "```text\n" + out.text + "\n```")
        data["completion"] = out.text
        report.metrics["completion_tokens"] = out.completion_tokens
    report.data = data
    progress(1.0, "done")
    return report


class Lms3Options(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce lms3``; the sizes of each preset are in ``methods/lms3/config.py``."""

    preset: Literal["cpu_small", "spec_cpu", "tiny"] = Field(
        "cpu_small",
        description="Experiment sizes (config.PRESETS): cpu_small (the results run), spec_cpu "
        "(the spec's CPU sizes, hours), tiny (tests).",
    )
    datasets: list[DatasetName] = Field(
        default_factory=list, description="Subset of gsm8k, mawps, math (empty = the preset's)."
    )
    accuracy: bool = Field(True, description="Greedy-decode the preset's accuracy queries (false skips decoding).")
    all_modes: bool = Field(
        True,
        description="Index every representation mode and layer for the query-dependence table "
        "(false: the reference representation only, half the encoding cost).",
    )
    nll_queries: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="Cap on the gold-NLL queries per dataset (per subject for MATH); empty = the preset's.",
    )
    theory_queries: int | None = Field(
        None, ge=1, le=1000, description="Cap on the theory-check queries per dataset; empty = the preset's."
    )

    @field_validator("datasets", mode="before")
    @classmethod
    def _comma_separated(cls, v: object) -> object:
        return [d.strip() for d in v.split(",") if d.strip()] if isinstance(v, str) else v


@register_reproducer(
    "lms3", options=Lms3Options, description="LMS3 §6 experiment on GSM8K, MAWPS and MATH (gold NLL, theory check)."
)
def reproduce(options: Lms3Options, progress: JobContext) -> Report:
    """Run the CPU experiment; the registry writes ``lms3.md`` (+ ``lms3/``)."""
    from core.llm import model_hash
    from core.vectorstore import get_vectorstore
    from methods.lms3.experiment import run_experiment
    from methods.lms3.report import build_report

    cfg = PRESETS[options.preset]
    if options.datasets:
        cfg = cfg.with_datasets(tuple(options.datasets))
    cfg = cfg.with_limits(
        accuracy=options.accuracy,
        all_modes=options.all_modes,
        nll_queries=options.nll_queries,
        theory_queries=options.theory_queries,
    )
    cache = Path(get_settings().cache_dir) / "lms3" / f"results-{model_hash()}.jsonl"
    t0 = time.perf_counter()
    results = run_experiment(
        cfg, store=get_vectorstore(), progress=progress, cache_path=cache, device=options.device, amp=options.amp
    )
    wall = time.perf_counter() - t0
    report = build_report(
        results,
        cfg,
        wall_s=wall,
        command="paperworks reproduce lms3" + options.cli_options(),
        options=options.model_dump(mode="json"),
    )
    report.metrics.update(device_provenance(resolve_device(options.device), options.amp))
    return report
