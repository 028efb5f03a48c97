"""EcoLevels page: the probe registry, a target task, and a run's level × ecological-validity grid coloured by
effect size, with the labelled conflicts (R1–R4) and the generalisation predictions.

Talks to the API only: ``GET /v1/ecolevels/probes`` and ``/targets``, ``POST /v1/ecolevels/classify``,
``POST /v1/ecolevels/runs`` (an ``ecolevels.run`` job), then ``GET /v1/jobs/{id}`` and its report.
"""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
import streamlit as st

from ui.client import ApiError
from ui.components import follow_job, get_client, method_schema, schema_form, submit_job

PAGE = {"title": "Bias probes (EcoLevels)", "icon": ":material/balance:", "section": "Methods", "order": 75}
_STATE_JOB = "ecolevels_job"
METHOD = "ecolevels.run"
LEVELS = ["L1", "L2", "L3", "L4"]
LEVEL_NAMES = {"L1": "Representation", "L2": "Association", "L3": "Explicit attitude", "L4": "Behaviour"}


def grid_png(results: list[dict[str, Any]], target_name: str) -> io.BytesIO:
    """Level × EV with each probe a dot coloured by its bias index (red = stereotype-consistent)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 3.6))
    ax = fig.add_subplot(1, 1, 1)
    for x in (0.4, 0.8):
        ax.axvline(x, color="grey", lw=0.6, ls="--")
    sc = None
    for i, r in enumerate(results):
        y = LEVELS.index(r["level"]) + 0.12 * ((i % 3) - 1)
        sc = ax.scatter([r["ev"]], [y], c=[r["effect"]], cmap="coolwarm", vmin=-1, vmax=1, s=170, edgecolors="k")
        ax.annotate(
            f"{r['probe_id']} {r['effect']:+.2f}", (r["ev"], y), textcoords="offset points", xytext=(9, -3), fontsize=7
        )
    ax.set_yticks(range(4), [f"{lv} {LEVEL_NAMES[lv]}" for lv in LEVELS])
    ax.set_xlim(-0.05, 1.3)
    ax.set_ylim(-0.6, 3.6)
    ax.set_xlabel(f"ecological validity for {target_name} (low | medium | high)")
    if sc is not None:
        fig.colorbar(sc, ax=ax, label="bias index")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf


def _registry(client, target: str) -> list[dict[str, Any]]:
    try:
        probes = client.get("/v1/ecolevels/probes")
    except ApiError as exc:
        st.error(f"Cannot read the registry: {exc.message}")
        return []
    rows = []
    for p in probes:
        try:
            c = client.post("/v1/ecolevels/classify", json={"metadata": p["metadata"], "target": target})
        except ApiError:
            continue
        rows.append(
            {
                "probe": p["id"],
                "name": p["name"],
                "level": c["level"],
                "EV": c["ev"],
                "band": c["ev_band"],
                "runnable": bool(p.get("runner")),
            }
        )
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    return probes


def _results(body: dict[str, Any]) -> None:
    data = body.get("data") or {}
    results = data.get("results") or []
    st.subheader(body.get("title", "Results"))
    st.markdown(body.get("summary", ""))
    if not results:
        st.warning("This report has no probe results.")
        return
    st.image(grid_png(results, data.get("target", {}).get("name", "target")), caption="Level × EV grid")
    st.dataframe(
        pd.DataFrame(
            [
                {k: r[k] for k in ("probe_id", "level", "ev", "effect", "ci_low", "ci_high", "verdict", "n_units")}
                for r in results
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    for c in data.get("conflicts", []):
        st.markdown(f"**{c['label']}** · {c['a']} × {c['b']} — {c['explanation']}")
        if c.get("proposal"):
            st.caption(c["proposal"])
    if data.get("predictions"):
        st.markdown("**Generalisation predictions**")
        for p in data["predictions"]:
            st.markdown(f"- *{p['strength']}* — {p['statement']}  \n  falsifier: {p['falsifier']}")
    for s in body.get("sections", []):
        if s["title"] == "Reading":
            st.info(s["markdown"])


def render() -> None:
    st.title("EcoLevels: where does a bias probe sit?")
    st.caption("Two axes: the level at which bias is probed, and ecological validity for a declared target task.")
    client = get_client()
    try:
        targets = client.get("/v1/ecolevels/targets")
    except ApiError as exc:
        st.error(f"Cannot reach the API: {exc.message}")
        return
    target = st.selectbox("Target task", list(targets), format_func=lambda k: targets[k]["question"] or k)
    probes = _registry(client, target)
    runnable = [p["id"] for p in probes if p.get("runner")]
    schema = method_schema(client, METHOD)
    if schema is None:
        return
    chosen = st.multiselect(
        "Probes",
        runnable,
        default=[],
        help="The registry's runnable probes (empty = the §3.3 selection for the target).",
        key="ecolevels-probes",
    )
    params = schema_form(
        schema,
        "ecolevels",
        only=["model", "n_units", "paraphrases", "seeds"],
        more=True,
        columns=4,
        submit_label="Run probes",
        fixed={"target": target, "probes": chosen},
    )
    if params is not None:
        job_id = submit_job(client, METHOD, params, path="/v1/ecolevels/runs", schema=schema)
        if job_id:
            st.session_state[_STATE_JOB] = job_id
    job_id = st.session_state.get(_STATE_JOB) or st.query_params.get("job")
    if job_id:
        job = follow_job(client, job_id, label="EcoLevels", cancel="Cancel", log=True)
        if job and job["status"] == "succeeded":
            try:
                _results(client.report(job_id)["body"])
            except ApiError as exc:
                st.error(f"Cannot read the report: {exc.message}")
