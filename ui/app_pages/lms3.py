"""LMS3 page: pick a demonstration pool, type a problem, see the chosen demonstrations.

Talks to the API only: ``GET /v1/lms3/pools`` (indexed pools), ``POST /v1/lms3/index``
(an indexing job, followed with a progress bar), ``POST /v1/lms3/select`` (demos with
Sim, Stab and Score, whether rejection fired, the final prompt), and an ``lms3.select``
job with ``generate`` to run the prompt through the model.
"""

from __future__ import annotations

import uuid
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import device_inputs, follow_job, get_client

PAGE = {
    "title": "Demonstration selection (LMS3)",
    "icon": ":material/format_list_numbered:",
    "section": "Methods",
    "order": 35,
}
DATASETS = {"mawps": "MAWPS (1,537 pool)", "gsm8k": "GSM8K (7,473 pool)", "math": "MATH (7,500 pool, per subject)"}
SUBJECTS = [
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
]
ARMS = {
    "lms3": "LMS3 (Score + rejection)",
    "score_no_reject": "Score top-k, no rejection",
    "sim_only": "Sim only",
    "stab_only": "Stab only",
    "cosine": "Cosine top-k",
    "random": "Random",
    "zero_shot": "Zero-shot",
}
EXAMPLE = "Sara has 31.0 red and 15.0 green balloons . How many balloons does she have in total ?"


def _pool_fields(dataset: str, size: int) -> dict[str, Any]:
    return {"dataset": dataset, "pool_size": size or None, "seed": 0}


def _follow(client, job_key: str, label: str, result_key: str) -> None:
    """Follow the job in ``session_state[job_key]``; once it ends forget it, and on success store its
    report body in ``result_key`` and rerun the page."""
    job = follow_job(client, st.session_state[job_key], label=label)
    if job is None:
        return
    st.session_state[job_key] = None
    if job["status"] == "succeeded":
        st.session_state[result_key] = client.report(job["id"])["body"]
        st.rerun()


def _show_selection(res: dict[str, Any]) -> None:
    import pandas as pd

    st.markdown(
        f"Pool `{res['pool']}`{' / ' + res['subject'] if res.get('subject') else ''}: |D| = "
        f"{res['pool_size']}, λ = {res['lam']}."
    )
    if res["rejected"]:
        st.warning(
            "Rejection fired: no Score top-k candidate is among the Sim top-λ, so the query gets the zero-shot prompt."
        )
    elif res["arm"] == "zero_shot":
        st.info("Zero-shot arm: no demonstration.")
    else:
        st.success(f"{len(res['demos'])} demonstration(s) kept.")
    rows = [
        {
            "rank": d["rank"] + 1,
            "kept": d["index"] in {x["index"] for x in res["demos"]},
            "pool index": d["index"],
            "Sim": round(d["sim"], 4),
            "Stab": round(d["stab"], 4),
            "Score": round(d["score"], 4),
            "cosine dist.": round(d["cosine_distance"], 4),
            "in Sim top-λ": d["in_sim_top_lambda"],
            "problem": d["problem"],
        }
        for d in res["candidates"]
    ]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    for d in res["demos"]:
        with st.expander(f"Demonstration {d['rank'] + 1}: pool item {d['index']}"):
            st.markdown(f"**Q:** {d['problem']}")
            st.markdown(f"**A:** {d['answer']}")
    st.markdown("**Prompt**")
    st.code(res["prompt"], language="text")


def render() -> None:
    st.title("Choose few-shot demonstrations (LMS3)")
    st.caption(
        "LMS3 scores every pool demonstration by Sim × Stab: Sim is the distance between the problem's "
        "representation and the demonstration's after the model's own last-layer query/key maps, Stab "
        "the norm of its value projection. It keeps the k lowest and rejects any that is not also among "
        "the λ = int(l·|D|) most similar, falling back to zero-shot. Representations come from the local "
        "model (SmolLM2-135M-Instruct)."
    )
    client = get_client()
    for k in ("lms3_selection", "lms3_index_job", "lms3_index_report", "lms3_gen_job", "lms3_generated"):
        st.session_state.setdefault(k, None)
    c1, c2 = st.columns([2, 1])
    dataset = c1.selectbox("Demonstration pool", list(DATASETS), format_func=DATASETS.get, key="lms3-dataset")
    size = int(c2.number_input("Pool subset size (0 = full)", 0, 10000, 0, step=50, key="lms3-size"))
    try:
        pools = client.get("/v1/lms3/pools")
    except ApiError as exc:
        st.error(f"Cannot list pools ({exc.status}): {exc.detail}")
        pools = []
    name = f"{dataset}-full" if not size else f"{dataset}-n{size}s0"
    device = device_inputs("lms3")  # indexing and generation jobs (selection itself is a quick API call)
    have = next(
        (p for p in pools if p["pool"] == name and p["mode"] == "reference" and p["layer"] == "final_norm_output"), None
    )
    if have:
        st.caption(f"Pool `{name}` is indexed ({have['items']} items).")
    else:
        st.info(f"Pool `{name}` is not indexed yet: indexing embeds every item once (one forward pass each).")
        if st.button("Index this pool", key="lms3-index"):
            try:
                job = client.post("/v1/lms3/index", json={**_pool_fields(dataset, size), **device})
                st.session_state["lms3_index_job"] = job["id"]
            except ApiError as exc:
                st.error(f"Rejected ({exc.status}): {exc.detail}")
    if st.session_state.get("lms3_index_job"):
        _follow(client, "lms3_index_job", "indexing", "lms3_index_report")

    query = st.text_area("Problem", value=EXAMPLE, height=100, max_chars=8000, key="lms3-query")
    subject = st.selectbox("MATH subject", SUBJECTS, key="lms3-subject") if dataset == "math" else ""
    c1, c2, c3, c4, c5 = st.columns(5)
    arm = c1.selectbox("Selector", list(ARMS), format_func=ARMS.get, key="lms3-arm")
    k = int(c2.number_input("k", 1, 8, 1, key="lms3-k"))
    frac = float(c3.number_input("l (rejection fraction)", 0.0, 1.0, 0.01, step=0.01, format="%.3f", key="lms3-l"))
    min_lambda = int(c4.number_input("min λ", 0, 1000, 0, key="lms3-minlam"))
    orientation = c5.selectbox(
        "P",
        ["reference", "attention"],
        key="lms3-orient",
        format_func={"reference": "W̃_K·W_Q (code)", "attention": "W̃_Kᵀ·W_Q"}.get,
    )
    params = {
        **_pool_fields(dataset, size),
        "query": query,
        "subject": subject,
        "arm": arm,
        "k": k,
        "l": frac,
        "min_lambda": min_lambda,
        "orientation": orientation,
    }
    b1, b2 = st.columns(2)
    if b1.button("Select demonstrations", type="primary", key="lms3-select"):
        try:
            st.session_state["lms3_selection"] = client.post("/v1/lms3/select", json=params)
            st.session_state["lms3_generated"] = None
        except ApiError as exc:
            st.session_state["lms3_selection"] = None
            st.error(f"Rejected ({exc.status}): {exc.detail}")
    if b2.button("Run the prompt through the model", key="lms3-generate"):
        try:
            job = client.submit(
                "lms3.select",
                {**params, "generate": True, "max_new_tokens": 128, **device},
                idempotency_key=uuid.uuid4().hex,
            )
            st.session_state["lms3_gen_job"] = job["id"]
        except ApiError as exc:
            st.error(f"Rejected ({exc.status}): {exc.detail}")
    if st.session_state.get("lms3_gen_job"):
        _follow(client, "lms3_gen_job", "generation", "lms3_generated")
    res = st.session_state.get("lms3_selection")
    gen = st.session_state.get("lms3_generated")
    if gen:
        res = gen["data"]
    if res:
        st.divider()
        _show_selection(res)
    if gen and "completion" in gen.get("data", {}):
        st.markdown("**Model output**")
        st.code(gen["data"]["completion"], language="text")
