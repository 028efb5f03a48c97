"""any4 page: quantize a model to a chosen format, see perplexity vs fp32, and inspect learned LUTs.

Talks to the API only: ``POST /v1/jobs`` with ``any4.quantize``, then the job's report.
The report's data carries the learned table of the first rows of one layer together with
the int4 (min–max) and nf4/fp4 (absmax) levels of the same group, which the page plots.
"""

from __future__ import annotations

import io
import uuid
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, schema_form, show_api_error

PAGE = {"title": "Quantization (any4)", "icon": ":material/memory:", "section": "Methods", "order": 45}
# Display names only: the choices themselves (models, formats, group sizes...) come from the schema.
MODELS = {
    "clean-llama": "clean llama (trained from scratch, fp32)",
    "smollm2-135m-instruct": "SmolLM2-135M (weights pre-quantized, Q4_1)",
}
FORM_FIELDS = ["model", "fmt", "group_size", "calibration", "eval_windows", "seqlen"]
LABELS = {
    "model": "Model",
    "fmt": "Format",
    "group_size": "Group size g",
    "calibration": "Calibration (any-formats)",
    "eval_windows": "WikiText-2 windows",
    "seqlen": "Tokens per window",
}
HELPS = {
    "group_size": "SmolLM2 (K = 576) needs 32 or 64.",
    "calibration": "Sample weights |mean activation| × group scale from the single prompt.",
}


def _form(client) -> dict[str, Any] | None:
    """The quantize form: fields, defaults, enums and bounds come from ``any4.quantize``'s params schema."""
    try:
        spec = next((m for m in client.methods() if m["name"] == "any4.quantize"), None)
    except ApiError as exc:
        st.error(f"Cannot list methods ({exc.status}): {exc.message}")
        return None
    if spec is None:
        st.error("The API has no any4.quantize method.")
        return None
    return schema_form(
        spec["params_schema"],
        key="any4",
        only=FORM_FIELDS,
        labels=LABELS,
        helps=HELPS,
        format_funcs={"model": lambda m: MODELS.get(m, m)},
        columns=3,
        submit_label="Quantize",
        client=client,
        method="any4.quantize",
    )


def _lut_figure(row: dict[str, Any], fmt: str):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    ax.hist(row["weights"], bins=30, color="0.85", label="weights of the group")
    series = [
        (f"{fmt} (learned)" if fmt.startswith("any") else fmt, row["learned"]),
        ("int4", row["int4"]),
        ("nf4", row["nf4"]),
        ("fp4", row["fp4"]),
    ]
    for i, (name, levels) in enumerate(series):
        ax.plot(levels, [-(i + 1) * 0.5] * len(levels), "|", ms=14, mew=2, label=name)
    ax.set_yticks([])
    ax.set_xlabel("weight value")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf


def _show_result(client, job_id: str) -> None:
    body = client.report(job_id)["body"]
    data = body.get("data", {})
    st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
    for t in body.get("tables", []):
        import pandas as pd

        df = pd.DataFrame(t["rows"], columns=t["columns"])
        st.table(df.set_index(df.columns[0]))
        if t.get("note"):
            st.caption(t["note"])
    rows = data.get("row_luts") or []
    if rows:
        fmt = data.get("config", {}).get("fmt", "any4")
        st.markdown(f"**Learned table vs fixed grids** — layer `{data.get('inspect_layer')}`, first group of a row")
        pick = st.selectbox("Row", [r["row"] for r in rows], key="any4-row")
        row = next(r for r in rows if r["row"] == pick)
        st.image(_lut_figure(row, fmt), caption=f"row {pick}: {len(row['learned'])} levels of {fmt} vs int4/nf4/fp4")
    if data.get("checkpoint"):
        st.caption(f"Checkpoint saved as `{data['checkpoint']}` (any4.evaluate reloads it without k-means).")


def _history(client) -> None:
    """Perplexity of every finished quantization job, as a table and a plot."""
    try:
        jobs = [j for j in client.jobs(limit=30, method="any4.quantize") if j["status"] == "succeeded"]
    except ApiError as exc:
        st.error(f"Cannot list jobs: {exc.message}")
        return
    if not jobs:
        st.caption("No finished quantization job yet.")
        return
    import pandas as pd

    recs = []
    for j in jobs[:12]:
        data = client.report(j["id"])["body"].get("data", {})
        cfg, ppl = data.get("config", {}), data.get("ppl", {})
        if ppl:
            label = cfg.get("fmt", "?") + (
                f" ({cfg.get('calibration')})" if cfg.get("fmt", "").startswith("any") else ""
            )
            recs.append(
                {
                    "model": data.get("model"),
                    "format": label,
                    "g": cfg.get("group_size"),
                    "fp32 ppl": round(ppl["fp"], 3),
                    "quantized ppl": round(ppl["quantized"], 3),
                }
            )
    if not recs:
        return
    df = pd.DataFrame(recs)
    st.dataframe(df, hide_index=True, width="stretch")
    st.bar_chart(
        df.assign(run=df["model"].str[:12] + " · " + df["format"] + " g" + df["g"].astype(str)).set_index("run")[
            "quantized ppl"
        ]
    )


def render() -> None:
    client = get_client()
    st.title("any4: learned 4-bit weights")
    st.caption(
        "Per-row lookup tables learned by weighted k-means on group-normalized weights (ICML 2025), "
        "against int4, nf4 and fp4. Perplexity on WikiText-2 windows; evaluation runs through the Triton "
        "LUT kernel on a GPU worker and a dequantized fp32 path on CPU."
    )
    params = _form(client)
    if params is not None:
        try:
            job = client.submit("any4.quantize", params, idempotency_key=uuid.uuid4().hex)
            st.session_state["any4_job"] = job["id"]
        except ApiError as exc:
            show_api_error(exc, labels=LABELS)
    job_id = st.session_state.get("any4_job")
    if job_id:
        job = follow_job(client, job_id, label="quantize", cancel="Cancel")
        if job is not None and job["status"] == "succeeded":
            _show_result(client, job_id)
    st.subheader("Runs so far")
    _history(client)
