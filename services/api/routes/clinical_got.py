"""Clinical GoT and the synthetic HIE-Reasoning benchmark over HTTP (``/v1/clinical``).

* ``GET /v1/clinical/graph``: the CGoT DAG and the direct baseline's (nodes, titles, edges);
* ``GET /v1/clinical/cases?n_cases=&seed=&limit=``: case ids with grade, score, outcome and pattern;
* ``GET /v1/clinical/cases/{case_id}``: ground truth, QA items, the visual-findings text, slice indices;
* ``GET /v1/clinical/cases/{case_id}/slices/{k}/{kind}``: one rendered PNG (``adc``, ``zmap`` or ``roi``);
* ``POST /v1/clinical/trace``: submit a ``clinical_got.case`` job (one case through the graph; 201, the job);
* ``POST /v1/clinical/runs``: submit a ``clinical_got.run`` job (an arm over many cases; 201, the job).

The two submissions are the generated job routes (:mod:`services.api.job_routes`; also at
``POST /v1/clinical_got/case`` and ``/run``): their bodies are the params models, kept here by ``JOB_PATHS``.

The cases are the seeded synthetic stand-in (the real MRI data are under a data-use agreement).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query
from fastapi.responses import FileResponse

from services.api.deps import ApiKeyDep

router = APIRouter(prefix="/clinical", tags=["clinical_got"])
JOB_PATHS = {"/clinical/trace": "clinical_got.case", "/clinical/runs": "clinical_got.run"}

CaseId = Annotated[str, Path(pattern=r"^case\d{3,4}$", description="A case id (case000…).")]
NCases = Annotated[int, Query(ge=1, le=2000, description="Benchmark size.")]
Seed = Annotated[int, Query(ge=0, le=2**31 - 1, description="Benchmark seed.")]


def _bench(n_cases: int, seed: int):
    from methods.clinical_got.config import BenchConfig

    return BenchConfig(n_cases=n_cases, seed=seed)


def _case(case_id: str, n_cases: int, seed: int):
    from methods.clinical_got.bench import prepare_case

    try:
        return prepare_case(_bench(n_cases, seed), case_id)
    except ValueError as exc:
        raise HTTPException(404, str(exc)) from None


@router.get("/graph")
def graph_shape(_: ApiKeyDep) -> dict[str, Any]:
    """Nodes (with titles) and edges of the CGoT graph and of the direct baseline."""
    from agents.clinical_got.graph import direct_graph, graph
    from agents.clinical_got.nodes import NODE_TITLES

    def edges(g) -> list[list[str]]:
        return sorted([e.source, e.target] for e in g.get_graph().edges)

    return {"nodes": NODE_TITLES, "cgot": edges(graph), "direct": edges(direct_graph)}


@router.get("/cases")
def cases(
    _: ApiKeyDep,
    n_cases: NCases = 133,
    seed: Seed = 0,
    limit: Annotated[int, Query(ge=1, le=200, description="Cases listed (the first ones).")] = 20,
) -> list[dict[str, Any]]:
    """The first ``limit`` cases with their headline labels."""
    bench = _bench(n_cases, seed)
    out = []
    for cid in bench.case_ids()[:limit]:
        t = _case(cid, n_cases, seed).truth
        out.append(
            {
                "case_id": cid,
                "pattern": t["pattern"],
                "grade": t["grade"],
                "lesion_pct": round(100 * t["lesion_p"], 3),
                "score": t["score"],
                "outcome": t["outcome"],
                "n_injured": len(t["injured"]),
            }
        )
    return out


@router.get("/cases/{case_id}")
def case_detail(case_id: CaseId, _: ApiKeyDep, n_cases: NCases = 133, seed: Seed = 0) -> dict[str, Any]:
    """Ground truth, the six QA items, the visual-findings text and the rendered slice indices."""
    from methods.clinical_got.bench import qa_items

    c = _case(case_id, n_cases, seed)
    return {
        "case_id": c.case_id,
        "truth": c.truth,
        "qa": qa_items(c.case_id, c.truth),
        "findings": c.findings,
        "slices": [t["slice"] for t in c.triples],
    }


@router.get("/cases/{case_id}/slices/{k}/{kind}", response_class=FileResponse)
def slice_png(
    case_id: CaseId,
    k: Annotated[int, Path(ge=0, le=512, description="Slice index (one of the case's middle third).")],
    kind: Literal["adc", "zmap", "roi"],
    _: ApiKeyDep,
    n_cases: NCases = 133,
    seed: Seed = 0,
) -> FileResponse:
    """One rendered slice image (PNG)."""
    c = _case(case_id, n_cases, seed)
    t = next((t for t in c.triples if t["slice"] == k), None)
    if t is None:
        raise HTTPException(404, f"slice {k} is not rendered (middle third: {[x['slice'] for x in c.triples]})")
    return FileResponse(t[kind], media_type="image/png")
