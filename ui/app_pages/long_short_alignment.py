"""Long-short alignment page: run a synthetic length-generalization job, the regularized byte LM, or the
SmolLM2 misalignment smoke test, and see loss against test length (MSE per length for the synthetic
tasks; perplexity per evaluation length and α for the LM, one chart per stage-B variant: B1 keeps
l_train, B2 extends it ×2 with RoPE interpolation) or the misalignment values with their controls.

Talks to the API only: ``POST /v1/jobs`` with ``lsa.synthetic``, ``lsa.lm`` or ``lsa.smollm2``, then the
job's report.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from ui.components import follow_job, get_client, method_schema, schema_form, submit_job

PAGE = {"title": "Long-short alignment", "icon": ":material/straighten:", "section": "Methods", "order": 75}
METHODS = {
    "Synthetic tasks": "lsa.synthetic",
    "Byte LM + regularizer": "lsa.lm",
    "SmolLM2 misalignment": "lsa.smollm2",
}


def _log10(v: Any) -> float | None:
    return math.log10(v) if isinstance(v, int | float) and v > 0 else None


def _show_synthetic(data: dict[str, Any]) -> None:
    mse = data["mse"]
    st.caption("log10 MSE against test length (trained on l ≤ 10); missing points = refused by learned positions")
    st.line_chart({"l": [int(k) for k in mse], "log10 MSE": [_log10(v) for v in mse.values()]}, x="l", y="log10 MSE")
    st.table({"l": list(mse), "MSE": [v if v is not None else "refused" for v in mse.values()]})


def _show_lm(data: dict[str, Any]) -> None:
    runs = data["runs"]
    for variant in dict.fromkeys(r.get("variant", "b1") for r in runs):
        final: dict[float, dict[str, Any]] = {}
        for r in runs:
            if r.get("variant", "b1") == variant:
                final[r["alpha"]] = r  # last save per α
        first = next(iter(final.values()))
        lengths = sorted({int(k.split("@")[1]) for k in first["ppl"]})
        chart: dict[str, list[Any]] = {"eval length": lengths}
        for a, r in final.items():
            chart[f"α={a}"] = [r["ppl"][f"heldout@{k}"]["ppl"] for k in lengths]
        label = "B1, l_train kept" if variant == "b1" else "B2, context ×2 with RoPE interpolation"
        st.caption(
            f"{label} (l_train = {first.get('l_train', lengths[0])}): held-out perplexity (GSM8K+MATH test text) "
            "against evaluation length, per α"
        )
        st.line_chart(chart, x="eval length", y=[k for k in chart if k != "eval length"])
        st.table(
            {
                "α": list(final),
                "L_misalign SCE": [r["misalign"]["sce"] for r in final.values()],
                "SKL": [r["misalign"]["skl"] for r in final.values()],
                "train NLL": [r["train_loss"] for r in final.values()],
            }
        )


def _show_smol(data: dict[str, Any]) -> None:
    s = data["summary"]
    st.caption(
        f"{data['model']}: next-token distributions after two suffixes of WikiText-2 with the same ending, "
        f"lengths in [{data['l_train'] // 2}, {data['l_train']}] tokens, {data['n_samples']} pairs"
    )
    rows = [
        ("SCE(long, short)", "sce"),
        ("SKL(long, short)", "skl"),
        ("control: SKL, same input twice", "skl_same"),
        ("control: SKL, extra context from elsewhere", "skl_shuffled"),
        ("entropy H(long)", "h_long"),
    ]
    st.table({"quantity": [r[0] for r in rows], "mean": [s[k]["mean"] for _, k in rows]})


def render() -> None:
    st.title("Long-short alignment")
    st.write(
        "Length generalization depends on the output side: outputs whose range grows with length (predicting l) "
        "fail beyond the training lengths; the misalignment regularizer keeps next-token distributions of long "
        "and short views of the same ending consistent."
    )
    client = get_client()
    kind = st.radio("Experiment", list(METHODS), horizontal=True, key="lsa-kind")
    method = METHODS[kind]
    schema = method_schema(client, method)
    if schema is None:
        return
    params = schema_form(schema, key=f"lsa-{method}", columns=3, submit_label="Train", client=client, method=method)
    if params is not None:
        job_id = submit_job(client, method, params, schema=schema)
        if job_id:
            st.session_state[f"lsa-job-{method}"] = job_id
    job_id = st.session_state.get(f"lsa-job-{method}")
    if not job_id:
        return
    job = follow_job(client, job_id, label=kind, cancel="Cancel")
    if job is None or job["status"] != "succeeded":
        return
    data = client.report(job_id)["body"].get("data") or {}
    if method == "lsa.synthetic":
        _show_synthetic(data)
    elif method == "lsa.lm":
        _show_lm(data)
    else:
        _show_smol(data)
