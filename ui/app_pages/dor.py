"""DOR calibration page: run one prompt-tuning job (CoOp / KgCoOp, ± DOR) and look at its reliability diagrams.

Talks to the API only: ``POST /v1/jobs`` with ``dor.tune``; the report (tables, reliability diagrams,
loss curves, the outlier pool) is rendered by the shared report component.
"""

from __future__ import annotations

import uuid

import streamlit as st

from ui.client import ApiError
from ui.components import device_inputs, follow_job, get_client, jobs_table, render_report

PAGE = {"title": "Calibrated prompt tuning (DOR)", "icon": ":material/tune:", "section": "Methods", "order": 55}


def render() -> None:
    st.title("Calibrated prompt tuning (DOR)")
    st.caption(
        "Prompt tuning (CoOp) fits the base classes and tends to make unseen classes over-confident. DOR keeps the "
        "text features of near-OOD WordNet nouns where zero-shot CLIP put them (λ·(1 − cos)), a fresh batch each "
        "step. Base images are scored among the base classes, new images among the new ones."
    )
    client = get_client()
    st.session_state.setdefault("dor_job", None)
    c1, c2, c3, c4 = st.columns(4)
    host = c1.radio("Host", ["coop", "kgcoop"], key="dor-host")
    use_dor = c2.checkbox("DOR regulariser", value=True, key="dor-on")
    epochs = int(c3.number_input("Epochs", 1, 1000, 50, key="dor-epochs"))
    seed = int(c4.number_input("Seed", 0, 10_000, 1, key="dor-seed"))
    c1, c2, c3 = st.columns(3)
    pool = c1.selectbox("Outlier pool", ["near", "far", "random", "oracle"], key="dor-pool")
    k = int(c2.number_input("Pool size K", 1, 60000, 500, key="dor-k"))
    b = int(c3.number_input("Outliers per step B", 1, 1024, 64, key="dor-b"))
    device = device_inputs("dor")
    if st.button("Tune", type="primary", key="dor-go"):
        params = {"host": host, "dor": use_dor, "epochs": epochs, "seed": seed, "pool": pool, "outlier_k": k,
                  "outlier_batch": b, **device}  # fmt: skip
        try:
            job = client.submit("dor.tune", params, idempotency_key=uuid.uuid4().hex)
        except ApiError as exc:
            st.error(f"Rejected ({exc.status}): {exc.detail}")
        else:
            st.session_state["dor_job"] = job["id"]
    job_id = st.session_state.get("dor_job")
    if job_id:
        done = follow_job(client, job_id, cancel="Cancel", log=True)
        if done is not None and done["status"] == "succeeded":
            render_report(client, job_id)
    with st.expander("Earlier calibration runs"):
        jobs = jobs_table(client, method="dor.tune", limit=10)
        done_ids = [j["id"] for j in jobs if j.get("status") == "succeeded"]
        if done_ids:
            pick = st.selectbox("Show the report of", done_ids, key="dor-pick")
            if st.button("Show", key="dor-show"):
                st.session_state["dor_job"] = pick
                st.rerun()
