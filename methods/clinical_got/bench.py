"""The benchmark as cases on disk: generate, render and describe a case once, then reuse it.

:func:`prepare_case` draws case ``caseNNN`` of a :class:`~methods.clinical_got.config.BenchConfig`,
renders its middle-third slice triples under ``<cache_dir>/clinical_got/<config key>/<case>/`` and
reads them back through the visual-findings adapter. :func:`qa_items` lists the case's QA pairs
(tasks 1, 2, 2.5, 3, 4, 5 of spec §3.3; six per case).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from methods.clinical_got.config import BenchConfig
from methods.clinical_got.generate import case_index, make_case
from methods.clinical_got.render import render_case

TASKS = ("1", "2", "2.5", "3", "4", "5")


@dataclass(frozen=True)
class PreparedCase:
    """A rendered case: its id, ground truth, slice triples (PNG paths) and the adapter's text."""

    case_id: str
    truth: dict[str, Any]
    triples: list[dict[str, Any]] = field(default_factory=list)
    findings: str = ""


def bench_dir(cfg: BenchConfig) -> Path:
    from core.config import get_settings

    return Path(get_settings().cache_dir) / "clinical_got" / cfg.key()


@functools.lru_cache(maxsize=512)
def _prepare(cfg_json: str, case_id: str, adapter: str) -> PreparedCase:
    from methods.clinical_got.findings import findings

    cfg = BenchConfig.model_validate_json(cfg_json)
    idx = case_index(case_id)
    if idx >= cfg.n_cases:
        raise ValueError(f"{case_id} is outside this benchmark ({cfg.n_cases} cases)")
    out = bench_dir(cfg) / case_id
    done = out / "case.json"
    if done.exists():
        meta = json.loads(done.read_text())
    else:
        case = make_case(cfg, idx)
        triples = render_case(case, out)
        meta = {"truth": case.truth, "triples": triples}
        tmp = done.with_name(f".case.json.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(meta))
        os.replace(tmp, done)  # written last and whole: its presence means the images are complete
    text = findings(meta["triples"], adapter)
    return PreparedCase(case_id, meta["truth"], meta["triples"], text)


_prepare_lock = threading.Lock()


def prepare_case(cfg: BenchConfig, case_id: str, adapter: str = "pixels") -> PreparedCase:
    """Case ``case_id`` rendered and described (cached on disk and in memory). One thread renders a case at
    a time: the graph's parallel nodes asked for the same case at once and one read an image the other was
    still writing (PIL.UnidentifiedImageError in a full test run)."""
    with _prepare_lock:
        return _prepare(cfg.model_dump_json(), case_id, adapter)


def qa_items(case_id: str, truth: dict[str, Any]) -> list[dict[str, Any]]:
    """The case's six QA pairs with their ground-truth answers."""
    return [
        {
            "task": "1",
            "question": "What is the lesion grade of this ADC?",
            "answer": {"grade": truth["grade"], "p": truth["lesion_p"]},
        },
        {"task": "2", "question": "Which of the 62 ROIs are injured?", "answer": {"rois": truth["injured"]}},
        {
            "task": "2.5",
            "question": "Are there lesions in uncommon regions, and which?",
            "answer": {"any": truth["rare_any"], "rois": truth["uncommon"]},
        },
        {"task": "3", "question": "What is the MRI injury score (0-3)?", "answer": {"score": truth["score"]}},
        {
            "task": "4",
            "question": "Will the 2-year neurocognitive outcome be adverse (1) or normal (0)?",
            "answer": {"outcome": truth["outcome"]},
        },
        {"task": "5", "question": "Write the MRI interpretation summary.", "answer": {"caption": truth["caption"]}},
    ]
