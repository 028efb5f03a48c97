"""LMS3 page: pick a demonstration pool, type a problem, see the chosen demonstrations.

Talks to the API only: ``GET /v1/lms3/pools`` (indexed pools), ``POST /v1/lms3/index``
(an indexing job, followed with a progress bar), ``POST /v1/lms3/select`` (demos with
Sim, Stab and Score, whether rejection fired, the final prompt), and an ``lms3.select``
job with ``generate`` to run the prompt through the model.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import (
    follow_job,
    get_client,
    method_schema,
    schema_inputs,
    show_api_error,
    submit_button,
    submit_job,
)

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
METHOD = "lms3.select"
EXAMPLE = "Sara has 31.0 red and 15.0 green balloons . How many balloons does she have in total ?"


def _ended(client, job_key: str, label: str, result_key: str) -> None:
    """Follow the job in ``session_state[job_key]`` with the shared follower; once it has ended forget it,
    and on success keep its report body in ``result_key``."""
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
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    pool = schema_inputs(
        schema,
        "lms3-pool",
        only=["dataset", "pool_size", "seed"],
        format_funcs={"dataset": lambda d: DATASETS.get(d, d)},
        columns=3,
    )
    dataset, size, seed = pool.params.get("dataset", "mawps"), pool.params.get("pool_size"), pool.params.get("seed", 0)
    try:
        pools = client.get("/v1/lms3/pools")
    except ApiError as exc:
        show_api_error(exc, what="Cannot list pools")
        pools = []
    name = f"{dataset}-full" if not size else f"{dataset}-n{size}s{seed}"
    have = next(
        (p for p in pools if p["pool"] == name and p["mode"] == "reference" and p["layer"] == "final_norm_output"), None
    )
    if have:
        st.caption(f"Pool `{name}` is indexed ({have['items']} items).")
    else:
        st.info(f"Pool `{name}` is not indexed yet: indexing embeds every item once (one forward pass each).")
        if submit_button("Index this pool", "lms3-index", pool.errors, primary=False):
            job_id = submit_job(client, "lms3.index", pool.params, path="/v1/lms3/index", schema=schema)
            if job_id:
                st.session_state["lms3_index_job"] = job_id
    if st.session_state.get("lms3_index_job"):
        _ended(client, "lms3_index_job", "indexing", "lms3_index_report")

    st.session_state.setdefault("lms3-query", EXAMPLE)  # the query input's first value (the schema has none)
    subject = st.selectbox("MATH subject", SUBJECTS, key="lms3-subject") if dataset == "math" else ""
    form = schema_inputs(
        schema,
        "lms3",
        only=["query", "arm", "k", "l", "min_lambda", "orientation"],
        more=True,
        format_funcs={
            "arm": lambda a: ARMS.get(a, a),
            "orientation": {"reference": "W̃_K·W_Q (code)", "attention": "W̃_Kᵀ·W_Q"}.get,
        },
        columns=3,
        fixed={**pool.params, "subject": subject, "generate": False},
    )
    errors = pool.errors + form.errors
    b1, b2 = st.columns(2)
    if submit_button("Select demonstrations", "lms3-select", errors, where=b1):
        try:
            st.session_state["lms3_selection"] = client.post("/v1/lms3/select", json=form.params)
            st.session_state["lms3_generated"] = None
        except ApiError as exc:
            st.session_state["lms3_selection"] = None
            show_api_error(exc, schema=schema)
    if submit_button("Run the prompt through the model", "lms3-generate", errors, primary=False, where=b2):
        job_id = submit_job(client, METHOD, {**form.params, "generate": True}, schema=schema)
        if job_id:
            st.session_state["lms3_gen_job"] = job_id
    if st.session_state.get("lms3_gen_job"):
        _ended(client, "lms3_gen_job", "generation", "lms3_generated")
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
