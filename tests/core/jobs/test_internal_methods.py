"""Internal methods (``register_method(..., internal=True)``): runnable by name, left out of every listing."""

from __future__ import annotations

from pydantic import BaseModel

from core.jobs import JobContext, Report, get_method, list_methods, register_method, registry_snapshot


class _Params(BaseModel):
    n: int = 1


def _run(params: _Params, progress: JobContext) -> Report:
    return Report(title="internal", summary=str(params.n))


def test_an_internal_method_is_found_by_name_but_not_listed():
    with registry_snapshot():
        register_method("test_internal.hidden", internal=True)(_run)
        register_method("test_internal.public", params=_Params)(lambda params, progress: _run(params, progress))
        listed = {m.name for m in list_methods()}
        assert "test_internal.public" in listed and "test_internal.hidden" not in listed
        assert "test_internal.hidden" in {m.name for m in list_methods(include_internal=True)}
        spec = get_method("test_internal.hidden")
        assert spec.internal and not get_method("test_internal.public").internal
        assert spec.run(spec.validate({"n": 3}), JobContext()).summary == "3"


def test_a_package_s_entries_leave_internal_methods_out():
    from core.jobs.registry import load_package

    def hidden(params: _Params, progress: JobContext) -> Report:
        return _run(params, progress)

    def shown(params: _Params, progress: JobContext) -> Report:
        return _run(params, progress)

    hidden.__module__ = shown.__module__ = "methods.test_internal_pkg.jobs"  # as if registered by that package
    with registry_snapshot():
        register_method("test_internal_pkg.hidden", internal=True)(hidden)
        register_method("test_internal_pkg.shown")(shown)
        assert [m.name for m in load_package("test_internal_pkg")] == ["test_internal_pkg.shown"]


def test_an_internal_job_is_still_submitted_and_run():
    from core.jobs.execute import execute_job
    from core.jobs.submit import submit_job

    with registry_snapshot():
        register_method("test_internal.job", internal=True)(_run)
        sent: list = []
        job, _ = submit_job("test_internal.job", {"n": 5}, owner="local", enqueue=sent.append)
        assert [j.id for j in sent] == [job.id]
        execute_job(job.id)
        from core.db import crud
        from core.db.session import session_scope

        with session_scope() as s:
            assert crud.get_job(s, job_id=job.id).status == "succeeded"


def test_langgraph_run_is_internal_and_hidden_from_the_api_and_mcp(api_client):
    import services.api.agent_exec as agent_exec
    from services.mcp.server import tool_list

    spec = get_method(agent_exec.METHOD)
    assert spec.name == "langgraph.run" and spec.internal
    assert "langgraph.run" not in {m.name for m in list_methods()}
    listed = api_client.get("/v1/methods")
    assert listed.status_code == 200
    names = {m["name"] for m in listed.json()}
    assert "langgraph.run" not in names and "diag.sleep" in names
    tools = {t.name for t in tool_list()}
    assert "langgraph.run" not in tools and "diag.sleep" in tools
