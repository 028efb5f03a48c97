"""GMAIL page: preview real/generated pairs, run one alignment experiment, and see the real-vs-generated
embedding map (without alignment vs GMAIL), the gap and the stage-2 arms on real images.

Talks to the API only: ``GET /v1/gmail/pairs.png``, ``POST /v1/gmail/align``, the job's report and artifacts.
"""

from __future__ import annotations

import io

import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, show_api_error, submit_job

PAGE = {"title": "GMAIL", "icon": ":material/join_inner:", "section": "Methods", "order": 72}
METHOD = "gmail.align"
PANEL_TITLES = {"naive": "without alignment (generated through f_r)", "dual-noalign": "dual encoder, no L_align",
                "gmail": "GMAIL (generated through aligned f_g)"}  # fmt: skip


def _embedding_map(coords: dict) -> None:
    import pandas as pd

    if not coords:
        return
    st.subheader("Real vs generated embeddings")
    panel = st.radio("Generated images through", list(coords), format_func=lambda a: PANEL_TITLES.get(a, a),
                     horizontal=True, key="gm-panel")  # fmt: skip
    rows = [{"x": x, "y": y, "modality": kind} for kind in ("real", "generated") for x, y in coords[panel][kind]]
    st.scatter_chart(pd.DataFrame(rows), x="x", y="y", color="modality", size=12)
    st.caption("PCA of the held-out pairs' embeddings; real images always go through f_r.")


def _show(client, job_id: str) -> None:
    import pandas as pd

    body = client.report(job_id)["body"]
    st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
    _embedding_map(body.get("data", {}).get("embedding_map", {}))
    plot = next((a for a in body.get("artifacts", []) if a["name"] == "embeddings.png" and a.get("id")), None)
    if plot is not None:
        st.image(io.BytesIO(client.artifact(plot["id"])), caption="All three panels (PCA)")
    for t in body.get("tables", []):
        st.markdown(f"**{t['title']}**")
        st.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True)
        if t.get("note"):
            st.caption(t["note"])


def render() -> None:
    st.title("GMAIL: generated images as their own modality")
    st.caption(
        "A LoRA copy f_g of the frozen real-image encoder f_r (with its own projection) is aligned to f_r on "
        "generated images (InfoNCE, τ = 0.07); downstream models then train on generated images through f_g while "
        "real images keep going through f_r. Here the generator is the artifact renderer of the spec (colour cast, "
        "checkerboard, blur, noise) over procedural scenes, and f_r is the tiny CLIP."
    )
    client = get_client()
    st.session_state.setdefault("gm_job", None)
    with st.expander("Preview pairs", expanded=False):
        strengths = st.text_input("Strengths (comma-separated, 0–2)", "0.5,1.0,1.5", key="gm-strengths")
        if st.button("Show pairs", key="gm-preview"):
            try:
                png = client.get_bytes(f"/v1/gmail/pairs.png?count=8&strengths={strengths}")
                st.image(io.BytesIO(png), caption="Top: real renders; below: the generator at each strength")
            except ApiError as exc:
                show_api_error(exc, what="No preview")
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    fields = schema_form(schema, key="gm", columns=3, submit_label="Run GMAIL", client=client, method=METHOD)
    if fields is not None:
        job_id = submit_job(client, METHOD, fields, path="/v1/gmail/align", schema=schema)
        if job_id:
            st.session_state["gm_job"] = job_id
    job_id = st.session_state.get("gm_job")
    if job_id:
        job = follow_job(client, job_id, label="GMAIL", cancel="Cancel")
        if job is not None and job["status"] == "succeeded":
            _show(client, job_id)
