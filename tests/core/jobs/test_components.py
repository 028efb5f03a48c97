"""One registry: plug-ins run by a job (continual learners) are components of core.jobs' registry."""

from __future__ import annotations

import pytest

from core.jobs import UnknownMethod, get_component, list_components, register_component, registry, registry_snapshot


def test_components_register_find_list_and_refuse_a_second_owner():
    with registry_snapshot():
        register_component("test.kind", "b", 2)
        register_component("test.kind", "a", 1)
        assert get_component("test.kind", "a") == 1 and list(list_components("test.kind")) == ["a", "b"]
        register_component("test.kind", "a", 1)  # the same object again (a module imported twice): fine
        with pytest.raises(ValueError, match="registered twice"):
            register_component("test.kind", "a", 3)
        register_component("test.kind", "a", 3, same=lambda old, new: True)
        assert get_component("test.kind", "a") == 3
        with pytest.raises(UnknownMethod, match="unknown test.kind 'zzz'; known: a, b"):
            get_component("test.kind", "zzz")
    assert "test.kind" not in registry._COMPONENTS  # the snapshot restored the registry
    assert list_components("test.kind") == {}


def test_dpcr_and_lada_learners_live_in_the_one_registry():
    from methods.continual.learner import KIND, get_learner, list_learners

    learners = list_components(KIND)
    assert {"dpcr", "lada"} <= set(learners)
    assert get_learner("dpcr") is learners["dpcr"] and get_learner("lada") is learners["lada"]
    assert {s.name for s in list_learners("class_incremental")} | {s.name for s in list_learners("xtail")} == set(
        learners
    )
    assert not hasattr(__import__("methods.continual.learner", fromlist=["x"]), "_LEARNERS")  # no second table
    with pytest.raises(KeyError, match="unknown continual method 'nope'; known: .*dpcr"):
        get_learner("nope")


def test_a_learner_registered_in_a_snapshot_is_gone_after_it():
    from pydantic import BaseModel

    from methods.continual.learner import KIND, get_learner, register_learner

    class Opts(BaseModel):
        pass

    with registry_snapshot():
        register_learner("test_snapshot_learner", options=Opts)(lambda options, *, seed, stream: None)
        assert get_learner("test_snapshot_learner").name == "test_snapshot_learner"
    assert "test_snapshot_learner" not in list_components(KIND)


def test_the_api_lists_the_registered_learners(api_client):
    res = api_client.get("/v1/continual/methods")
    assert res.status_code == 200, res.text
    assert "dpcr" in {m["name"] for m in res.json()}
