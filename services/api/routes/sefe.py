"""SEFE (``methods/sefe``): ``POST /v1/sefe/run``, ``GET /v1/sefe/tasks``, ``GET /v1/sefe/asd``.

``POST /v1/sefe/run`` is generated (:mod:`services.api.job_routes`): its body is the ``sefe.run`` params model (arms, seeds ≤ 5, sizes within the spec's caps),
validated before anything is queued (422); it returns the job (201). The report (accuracy and
format-compliance matrices, superficially forgotten answers) is read through the generic job
routes, which check ownership (``may_access``). The other two routes read no job: the task
catalogue, and a preview of one task's ASD-rewritten training data (no model involved).
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/sefe", tags=["sefe"])


@router.get("/tasks")
def tasks(_: ApiKeyDep) -> list[dict[str, Any]]:
    """The task sequence: name, native answer style, classes, and one native test prompt."""
    from methods.sefe.asd import eval_examples
    from methods.sefe.tasks import TASK_ORDER, TASKS, majority_accuracy

    out = []
    for name in TASK_ORDER:
        d = TASKS[name]
        ex = eval_examples(name, n_test=1)[0]
        out.append(
            {
                "name": name,
                "title": d.title,
                "native_style": d.native,
                "classes": list(d.classes),
                "majority_accuracy": majority_accuracy(name),
                "example": {"prompt": ex.prompt, "answer": ex.answer},
            }
        )
    return out


@router.get("/asd")
def asd_preview(
    _: ApiKeyDep,
    task: Literal["iris", "cancer", "wine", "digits"] = "iris",
    n_train: Annotated[int, Query(ge=4, le=600)] = 40,
    x_percent: Annotated[float, Query(ge=0, le=100)] = 20.0,
    seed: Annotated[int, Query(ge=0, le=10_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=20)] = 8,
) -> dict[str, Any]:
    """ASD on one task's training data: the count per style and up to ``limit`` rewritten examples."""
    from methods.sefe.asd import train_examples

    ex = train_examples(task, n_train=n_train, seed=seed, x_percent=x_percent)
    rewritten = [e for e in ex if e.transformed][:limit]
    return {
        "task": task,
        "n": len(ex),
        "counts": dict(Counter(e.style for e in ex)),
        "examples": [{"style": e.style, "prompt": e.prompt, "answer": e.answer} for e in rewritten],
    }
