"""X-TAIL learners are listed apart from the class-incremental ones and refused by continual.run."""

import pytest


def test_xtail_learners_are_not_class_incremental():
    from methods.continual.learner import list_learners

    xtail = {s.name for s in list_learners("xtail")}
    ci = {s.name for s in list_learners("class_incremental")}
    assert {"lada", "xtail_zeroshot", "xtail_finetune", "xtail_lwf", "xtail_rail"} <= xtail
    assert "dpcr" in ci and not (xtail & ci)


def test_continual_run_refuses_an_xtail_learner():
    from methods.continual.jobs import ContinualParams

    with pytest.raises(ValueError, match="X-TAIL learners run with job lada.xtail"):
        ContinualParams(method="lada")


def test_continual_methods_route_lists_only_class_incremental(api_client):
    names = {m["name"] for m in api_client.get("/v1/continual/methods").json()}
    assert "dpcr" in names and "lada" not in names
