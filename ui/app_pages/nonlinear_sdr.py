"""Sufficient dimension reduction page: upload a CSV (or pick a bundled dataset), choose the response
column and the method, see the 2-D sufficient plot and the estimated directions.

Talks to the API only: ``POST /v1/sdr/fit`` (an uploaded CSV) or ``POST /v1/jobs`` with
``nonlinear_sdr.fit`` (a dataset bundled with scikit-learn), then the job's report. The form's
fields, defaults and choices come from the job's params schema.
"""

from __future__ import annotations

import io
import uuid
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, show_api_error

PAGE = {"title": "Sufficient dimension reduction", "icon": ":material/scatter_plot:", "section": "Methods", "order": 60}
METHOD = "nonlinear_sdr.fit"
FORM_FIELDS = [
    "method", "n_components", "loss", "lam", "n_slices", "response_type", "multiclass", "evaluate", "neural_steps",
]  # fmt: skip
LABELS = {
    "method": "Method",
    "n_components": "Dimensions d",
    "loss": "Loss",
    "lam": "λ",
    "n_slices": "Slices H",
    "response_type": "Response is",
    "multiclass": "Classes as",
    "evaluate": "5-fold k-NN score vs PCA",
}
HELPS = {
    "method": "linear / kernel / neural principal SVM, or a classical comparator (SIR, SAVE, DR, pHd).",
    "n_components": "0 = auto: the BIC-type order.",
    "loss": "ensemble = hinge + logistic + squared hinge + least squares.",
}


def _source(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The data: a bundled dataset name, or an uploaded CSV with its response column."""
    kind = st.radio("Data", ["Bundled dataset", "Upload a CSV"], horizontal=True, key="sdr-kind")
    if kind == "Bundled dataset":
        prop = schema["properties"]["dataset"]
        names = next((a["enum"] for a in prop.get("anyOf", [prop]) if "enum" in a), [])
        default = prop.get("default")
        index = names.index(default) if default in names else 0
        return {
            "dataset": st.selectbox(
                "Dataset (scikit-learn)", names, index=index, key="sdr-ds", help=prop.get("description")
            )
        }
    upload = st.file_uploader("CSV with a header row", type=["csv"], key="sdr-upload")
    if upload is None:
        return None
    import pandas as pd

    try:
        head = pd.read_csv(io.BytesIO(upload.getvalue()), nrows=200)
    except Exception as exc:  # a bad file: say so, submit nothing
        st.error(f"Cannot read {upload.name}: {exc}")
        return None
    st.dataframe(head.head(5), hide_index=True)
    columns = [str(c) for c in head.columns]
    response = st.selectbox("Response column", columns, index=len(columns) - 1, key="sdr-response")
    return {"upload": upload, "response": response}


def _submit(client, source: dict[str, Any], fields: dict[str, Any], schema: dict[str, Any] | None = None) -> None:
    try:
        if "upload" in source:
            up = source["upload"]
            data = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in fields.items()}
            job = client.post(
                "/v1/sdr/fit",
                files={"table": (up.name, up.getvalue(), "text/csv")},
                data={**data, "response": source["response"]},
            )
        else:
            job = client.submit(METHOD, {**fields, "dataset": source["dataset"]}, idempotency_key=uuid.uuid4().hex)
    except ApiError as exc:
        show_api_error(exc, schema=schema, labels=LABELS)
        return
    st.session_state["sdr_job"] = job["id"]


def _show(client, job_id: str) -> None:
    body = client.report(job_id)["body"]
    st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
    left, right = st.columns([3, 2])
    plot = next((a for a in body.get("artifacts", []) if a["name"] == "sufficient_plot.png" and a.get("id")), None)
    if plot is not None:
        left.image(io.BytesIO(client.artifact(plot["id"])), caption="Sufficient plot: (ĝ₁, ĝ₂) coloured by Y")
    import pandas as pd

    for t in body.get("tables", []):
        where = right if t["title"].startswith(("Eigenvalues", "5-fold")) else st
        where.markdown(f"**{t['title']}**")
        where.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True)
    data = body.get("data", {})
    if data.get("predictors"):
        pts = pd.DataFrame(data["predictors"], columns=["g1", "g2"][: len(data["predictors"][0])])
        with st.expander("The sufficient predictors (data)"):
            st.dataframe(pts.assign(y=data.get("y")), hide_index=True)


def render() -> None:
    st.title("Sufficient dimension reduction (principal SVM ensembles)")
    st.caption(
        "The response is turned into an ensemble of yes/no questions (Y above each quantile, or each class against "
        "the rest); a support vector machine answers each, and the principal components of their normal vectors — "
        "or normal functions, for the kernel and neural machines — are the sufficient predictors ĝ(X): a few "
        "functions of X that carry everything X says about Y."
    )
    client = get_client()
    st.session_state.setdefault("sdr_job", None)
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    source = _source(schema)
    fields = schema_form(
        schema,
        key="sdr",
        only=FORM_FIELDS,
        labels=LABELS,
        helps=HELPS,
        columns=4,
        submit_label="Reduce",
        fixed={"dataset": source["dataset"]} if source and "dataset" in source else None,
    )
    if fields is not None:
        if source is None:
            st.warning("Upload a CSV first.")
        else:
            _submit(client, source, {k: v for k, v in fields.items() if k != "dataset"}, schema)
    job_id = st.session_state.get("sdr_job")
    if job_id:
        job = follow_job(client, job_id, label="Reduction", cancel="Cancel")
        if job is not None and job["status"] == "succeeded":
            _show(client, job_id)
