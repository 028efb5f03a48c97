"""Patch-size scaling page: run a sweep over p for Tiny-ViT / Tiny-Adventurer on digits, see accuracy
against the number of tokens, and drill down into one patch size (per-seed accuracy, FLOPs, wall-clock).

Talks to the API only: ``POST /v1/patch_scaling/sweep``, the job's report, ``GET /v1/patch_scaling/paper``.
"""

from __future__ import annotations

import io

import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, submit_job

PAGE = {"title": "Patch-size scaling", "icon": ":material/grid_on:", "section": "Methods", "order": 65}
METHOD = "patch_scaling.sweep"


def _show(client, job_id: str) -> None:
    import pandas as pd

    body = client.report(job_id)["body"]
    st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
    plot = next((a for a in body.get("artifacts", []) if a["name"] == "scaling.png" and a.get("id")), None)
    left, right = st.columns([3, 2])
    if plot is not None:
        left.image(io.BytesIO(client.artifact(plot["id"])), caption="Accuracy vs tokens (log axis)")
    for t in body.get("tables", []):
        where = right if t["title"].startswith("§7.5") else st
        where.markdown(f"**{t['title']}**")
        where.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True)
    results = body.get("data", {}).get("results", [])
    if results:
        df = pd.DataFrame(results)
        st.subheader("Drill down")
        p = st.selectbox("Patch size p", sorted(df["patch"].unique(), reverse=True), key="ps-p")
        sel = df[df["patch"] == p][["backbone", "seed", "tokens", "accuracy", "flops", "params", "train_s"]]
        st.dataframe(sel, hide_index=True)
    for s in body.get("sections", []):
        if s["title"] != "Plot":
            with st.expander(s["title"]):
                st.markdown(s["markdown"])


def render() -> None:
    st.title("Scaling laws in patchification")
    st.caption(
        "Shrink the patch size p at fixed model size: p = 1 gives one token per pixel. The paper reaches 84.6 % "
        "ImageNet top-1 with 50,176 tokens; here Tiny-ViT and Tiny-Adventurer (Mamba-2) train on 8×8 digits."
    )
    client = get_client()
    st.session_state.setdefault("ps_job", None)
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    fields = schema_form(schema, key="ps", columns=3, submit_label="Run sweep", client=client, method=METHOD)
    if fields is not None:
        job_id = submit_job(client, METHOD, fields, path="/v1/patch_scaling/sweep", schema=schema)
        if job_id:
            st.session_state["ps_job"] = job_id
    with st.expander("Paper (ImageNet-1k, 224²) — context"):
        try:
            st.dataframe(client.get("/v1/patch_scaling/paper"), hide_index=True)
        except ApiError as exc:
            st.error(f"{exc.status}: {exc.message}")
    job_id = st.session_state.get("ps_job")
    if job_id:
        job = follow_job(client, job_id, label="Sweep", cancel="Cancel")
        if job is not None and job["status"] == "succeeded":
            _show(client, job_id)
