"""SEFE page: run sequential LoRA / ASD / RegLoRA / SEFE / multitask on the instruction-task sequence,
then look at the per-task accuracy matrix, the format-compliance matrix (superficial forgetting) and
examples of superficially forgotten answers.

Talks to the API only: ``GET /v1/methods`` (the ``sefe.run`` form), ``POST /v1/sefe/run``,
``GET /v1/sefe/asd`` (ASD preview), the job and its report.
"""

from __future__ import annotations

import io
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, submit_job

PAGE = {"title": "SEFE (continual instruction tuning)", "icon": ":material/style:", "section": "Methods", "order": 42}
METHOD = "sefe.run"
_JOB = "sefe_job"


def _matrix_frame(matrix: list[list[float]], tasks: list[str]):
    import pandas as pd

    rows = [[None if v is None or v != v else round(v * 100, 1) for v in row] for row in matrix]
    return pd.DataFrame(rows, columns=tasks, index=[f"after {t}" for t in tasks])


def _mean(runs: list[dict[str, Any]], kind: str) -> list[list[float]]:
    import numpy as np

    stack = np.array([[[np.nan if v is None else v for v in row] for row in r["matrices"][kind]] for r in runs], float)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(stack, axis=0).tolist()


def _show(client, job_id: str) -> None:
    import pandas as pd

    body = client.report(job_id)["body"]
    st.markdown(f"**{body.get('title')}** — {body.get('summary')}")
    for name, caption in (("accuracy_matrix.png", "Accuracy matrix"), ("compliance_matrix.png", "Format compliance")):
        art = next((a for a in body.get("artifacts", []) if a["name"] == name and a.get("id")), None)
        if art is not None:
            st.image(io.BytesIO(client.artifact(art["id"])), caption=caption)
    data = body.get("data", {})
    arms = data.get("arms", {})
    if arms:
        tasks = data.get("tasks", [])
        arm = st.selectbox("Arm", list(arms), key="sefe-arm")
        kind = st.radio("Matrix", ["accuracy", "compliance", "essential"], horizontal=True, key="sefe-kind")
        st.markdown(f"**{kind} (%) — rows: after task t, columns: task j (mean over seeds)**")
        st.dataframe(_matrix_frame(_mean(arms[arm]["runs"], kind), tasks))
        rows = []
        for r in arms[arm]["runs"]:
            for t, exs in (r["examples"][-1] if r["examples"] else {}).items():
                rows += [
                    {
                        "seed": r["seed"],
                        "task": t,
                        "question": e["prompt"].split("\n")[0][:100],
                        "expected": e["answer"],
                        "answer": e["output"],
                    }
                    for e in exs
                    if not e["compliant"]
                ]
        st.markdown("**Superficially forgotten answers (wrong format) after the last task**")
        if rows:
            st.dataframe(pd.DataFrame(rows), hide_index=True)
        else:
            st.caption("None: every stored answer of this arm is in its task's native format.")
    for t in body.get("tables", []):
        with st.expander(t["title"]):
            st.dataframe(pd.DataFrame(t["rows"], columns=t["columns"]), hide_index=True)


def _asd_preview(client) -> None:
    with st.expander("ASD preview: a task's training data rewritten into the five answer styles"):
        c1, c2 = st.columns(2)
        task = c1.selectbox("Task", ["iris", "cancer", "wine", "digits"], key="sefe-asd-task")
        x = c2.slider("X (% rewritten)", 0, 100, 20, key="sefe-asd-x")
        try:
            res = client.get("/v1/sefe/asd", task=task, x_percent=x, limit=5)
        except ApiError as exc:
            st.error(f"{exc.status}: {exc.message}")
            return
        st.write({k: res["counts"].get(k, 0) for k in ("YN", "MCQ", "SA", "BE", "DE")})
        for e in res["examples"]:
            st.code(f"[{e['style']}] {e['prompt']}\n→ {e['answer']}")


def render() -> None:
    st.title("SEFE: superficial and essential forgetting")
    st.caption(
        "Each task has its own answer style (iris: a word, cancer: yes/no, wine: a letter, digits: a word). "
        "Sequential LoRA makes the model answer old tasks in the newest style (superficial forgetting); ASD "
        "rewrites X % of each task into all styles, RegLoRA protects the largest entries of past LoRA updates."
    )
    client = get_client()
    st.session_state.setdefault(_JOB, None)
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    fields = schema_form(schema, key="sefe", columns=3, submit_label="Run", client=client, method=METHOD)
    if fields is not None:
        job_id = submit_job(client, METHOD, fields, path="/v1/sefe/run", schema=schema)
        if job_id:
            st.session_state[_JOB] = job_id
    _asd_preview(client)
    job_id = st.session_state.get(_JOB)
    if job_id:
        job = follow_job(client, job_id, label="SEFE run", cancel="Cancel")
        if job is not None and job["status"] == "succeeded":
            _show(client, job_id)
