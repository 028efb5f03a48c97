"""DOR calibration page: run one prompt-tuning job (CoOp / KgCoOp, ± DOR) and look at its reliability diagrams.

Talks to the API only: ``POST /v1/jobs`` with ``dor.tune``; the report (tables, reliability diagrams,
loss curves, the outlier pool) is rendered by the shared report component. The form is the job's params
schema (fields, defaults, ranges and help from the params model).
"""

from __future__ import annotations

import streamlit as st

from ui.components import follow_job, get_client, jobs_table, method_schema, render_report, schema_form, submit_job

PAGE = {"title": "Calibrated prompt tuning (DOR)", "icon": ":material/tune:", "section": "Methods", "order": 55}
METHOD = "dor.tune"
FORM_FIELDS = ["host", "dor", "epochs", "seed", "pool", "outlier_k", "outlier_batch", "shots"]


def render() -> None:
    st.title("Calibrated prompt tuning (DOR)")
    st.caption(
        "Prompt tuning (CoOp) fits the base classes and tends to make unseen classes over-confident. DOR keeps the "
        "text features of near-OOD WordNet nouns where zero-shot CLIP put them (λ·(1 − cos)), a fresh batch each "
        "step. Base images are scored among the base classes, new images among the new ones."
    )
    client = get_client()
    st.session_state.setdefault("dor_job", None)
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    params = schema_form(
        schema, key="dor", only=FORM_FIELDS, more=True, columns=4, submit_label="Tune", client=client, method=METHOD
    )
    if params is not None:
        job_id = submit_job(client, METHOD, params, schema=schema)
        if job_id:
            st.session_state["dor_job"] = job_id
    job_id = st.session_state.get("dor_job")
    if job_id:
        done = follow_job(client, job_id, cancel="Cancel", log=True)
        if done is not None and done["status"] == "succeeded":
            render_report(client, job_id)
    with st.expander("Earlier calibration runs"):
        jobs = jobs_table(client, method=METHOD, limit=10)
        done_ids = [j["id"] for j in jobs if j.get("status") == "succeeded"]
        if done_ids:
            pick = st.selectbox("Show the report of", done_ids, key="dor-pick")
            if st.button("Show", key="dor-show"):
                st.session_state["dor_job"] = pick
                st.rerun()
