"""PAE web agent page: start a run, watch per-iteration success and the upper bound, browse trajectories.

Talks to the API only (``/v1/webagent/...``). Curves are computed from the run's
trajectory rows, so they grow while the run is going. A trajectory opens directly
with ``?run=<id>&traj=<id>``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import streamlit as st

from ui.client import ApiError
from ui.components import get_client, method_schema, schema_form, submit_job

PAGE = {"title": "Web agent (PAE)", "icon": ":material/travel_explore:", "section": "Agents", "order": 20}
SITES = ["shop", "recipes", "dictionary", "news", "map"]


METHOD = "pae.train"
DEFAULT_SITES = {"train_sites": ["shop", "recipes", "dictionary", "map"], "heldout_sites": ["news"]}
LABELS = {
    "name": "Name",
    "train_sites": "Training sites",
    "heldout_sites": "Held-out sites",
    "reward": "Reward",
    "iterations": "Iterations",
    "rollouts_per_iteration": "Rollouts per iteration",
    "tasks_per_site": "Tasks per site",
    "sft_demos_per_site": "SFT demos per site",
    "dispatch": "Dispatch",
    "test_temperature": "Test temperature",
}
REWARDS = {"llm": "LLM judge (the method)", "oracle": "sites' oracle (sanity check)", "random": "random (control)"}


def _start_form(client) -> None:
    """A ``pae.train`` run: every input from its params schema (the main ones first, the rest under "More")."""
    with st.expander("Start a PAE run", expanded=False):
        schema = method_schema(client, METHOD)
        if schema is None:
            return
        for name, sites in DEFAULT_SITES.items():  # the schema requires them without a default
            st.session_state.setdefault(f"pae-start-{name}", "\n".join(sites))  # one site per line
        params = schema_form(
            schema,
            "pae-start",
            only=[
                "name", "train_sites", "heldout_sites", "reward", "iterations", "rollouts_per_iteration",
                "tasks_per_site", "sft_demos_per_site", "dispatch", "test_temperature",
            ],
            more=True,
            labels=LABELS,
            format_funcs={"reward": lambda r: REWARDS.get(r, r)},
            columns=3,
            submit_label="Start",
            fixed={"run_id": None},
        )  # fmt: skip
        if params is not None:
            job_id = submit_job(client, METHOD, params, path="/v1/webagent/runs", schema=schema, labels=LABELS)
            if job_id:
                st.success(f"queued job {job_id}")


def curves(rows: list[dict[str, Any]]) -> dict[str, dict[int, float]]:
    """Rollout success (oracle), training reward, upper bound (cumulative), test success per split."""
    out: dict[str, dict[int, float]] = defaultdict(dict)
    by_it: dict[int, list[dict[str, Any]]] = defaultdict(list)
    tests: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in rows:
        if r["phase"] == "rollout":
            by_it[r["iteration"]].append(r)
        elif r["phase"] == "test" and r["oracle_reward"] is not None:
            tests[(r["split"], r["iteration"])].append(r["oracle_reward"])
    solved: dict[str, bool] = {}
    for it in sorted(by_it):
        rs = by_it[it]
        out["rollout success (oracle)"][it] = sum(r["oracle_reward"] or 0 for r in rs) / len(rs)
        out["training reward"][it] = sum(r["reward"] or 0 for r in rs) / len(rs)
        for r in rs:
            solved[r["task_id"]] = solved.get(r["task_id"], False) or (r["reward"] or 0) > 0
        out["upper bound"][it] = sum(solved.values()) / len(solved)
    for (split, it), v in sorted(tests.items()):
        out[f"test: {split}"][it] = sum(v) / len(v)
    return dict(out)


def _label(r: dict[str, Any]) -> str:
    mark = {1.0: "✓", 0.0: "✗"}.get(r["oracle_reward"], "?")
    return f"it{r['iteration']} {r['phase']} #{r['slot']} [{r['site']}] {mark} {r['question'][:70]}"


def _trajectory(client, tid: str) -> None:
    d = client.get(f"/v1/webagent/trajectories/{tid}")
    t = d["task"]
    st.markdown(f"**Task** ({t['site']}, {t['split']}, proposed by {t['proposer']}): {t['question']}")
    cols = st.columns(4)
    cols[0].metric("Answer", d["answer"] if d["answer"] is not None else "— (no ANSWER)")
    cols[1].metric("Steps", d["n_steps"])
    cols[2].metric("Oracle", "n/a" if d["oracle_reward"] is None else f"{d['oracle_reward']:.0f}")
    cols[3].metric("Judge", "n/a" if d["judge_reward"] is None else f"{d['judge_reward']:.0f}")
    if t["reference"]:
        st.caption(f"reference: {t['reference']}")
    for v in d["verdicts"]:
        st.caption(f"verdict [{v['evaluator']}] reward {v['reward']:.0f}: {v['text'][:300]}")
    steps = d["steps"]
    if not steps:
        return
    i = st.slider("Step", 1, len(steps), 1, key=f"step_{tid}") if len(steps) > 1 else 1
    s = steps[i - 1]
    left, right = st.columns([3, 2])
    sha = s["screenshots"].get("before")
    if sha:
        left.image(client.get_bytes(f"/v1/webagent/screenshots/{sha}"), caption=f"Step {i}: {s['url']}")
    right.markdown(f"#### Step {i} of {len(steps)}")
    right.markdown(f"**Thought:** {s['thought'] or '—'}")
    right.code(s["action"] or s["reply"], language=None)
    if s["format_error"] or s["message"]:
        right.warning(s["message"] or "format error")
    right.caption(f"URL: {s['url']}")


def render() -> None:
    st.title("Web agent (PAE)")
    st.caption("Proposer → agent → evaluator on the self-hosted sites; successful trajectories fine-tune the policy.")
    client = get_client()
    _start_form(client)
    try:
        runs = client.get("/v1/webagent/runs")
    except ApiError as exc:
        st.error(f"API error {exc.status}: {exc.message}")
        return
    if not runs:
        st.info("No PAE runs yet: start one above or run `paperworks pae run --preset small`.")
        return
    ids = [r["id"] for r in runs]
    wanted = st.query_params.get("run")
    idx = ids.index(wanted) if wanted in ids else 0
    run_id = st.selectbox(
        "Run",
        ids,
        index=idx,
        format_func=lambda i: next(
            f"{r['name']} ({r['status']}, iteration {r['iteration']}) {i[:8]}" for r in runs if r["id"] == i
        ),
    )
    rows = client.get(f"/v1/webagent/runs/{run_id}/trajectories", limit=2000)
    cv = curves(rows)
    if cv:
        st.subheader("Per-iteration success and upper bound")
        its = sorted({it for v in cv.values() for it in v})
        st.line_chart({name: [v.get(it) for it in its] for name, v in cv.items()})
        st.dataframe([{"iteration": it, **{name: v.get(it) for name, v in cv.items()}} for it in its], hide_index=True)
    st.subheader("Trajectories")
    c1, c2, c3 = st.columns(3)
    phase = c1.selectbox("Phase", ["all", "rollout", "test", "demo"])
    sites = sorted({r["site"] for r in rows})
    site = c2.selectbox("Site", ["all", *sites])
    only = c3.selectbox("Outcome", ["all", "success", "failure"])
    shown = [
        r
        for r in rows
        if (phase == "all" or r["phase"] == phase)
        and (site == "all" or r["site"] == site)
        and (only == "all" or ((r["oracle_reward"] or 0) > 0) == (only == "success"))
    ]
    if not shown:
        st.info("No trajectories match.")
        return
    tids = [r["id"] for r in shown]
    want_t = st.query_params.get("traj")
    tid = st.selectbox(
        "Trajectory",
        tids,
        index=tids.index(want_t) if want_t in tids else 0,
        format_func=lambda t: _label(next(r for r in shown if r["id"] == t)),
    )
    _trajectory(client, tid)
