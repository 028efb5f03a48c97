"""Outbound-call control (issue #27 item 3): clients name only allowed models; credentials go only where configured."""

import pytest

from core.config import get_settings
from core.llm import allowlist, gateway


@pytest.fixture
def configure(monkeypatch):
    def set_env(**env: str) -> None:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        get_settings.cache_clear()

    yield set_env
    get_settings.cache_clear()


def test_default_allow_list_is_local_models_plus_the_configured_default(configure):
    configure()
    allowed = allowlist.allowed_models()
    assert "local/smollm2-135m-instruct" in allowed and get_settings().llm_model in allowed
    assert not allowlist.is_allowed("ollama/x")
    assert not allowlist.is_allowed("openai/gpt-4o")
    assert not allowlist.is_allowed("local//etc")  # a directory outside the app's stores
    assert allowlist.is_allowed(f"local/{get_settings().home}/pae/run1/policy")  # a fine-tune in the stores
    assert allowlist.is_allowed("scripted/any")  # in-process, no network


def test_operator_list_replaces_the_default(configure):
    configure(PAPERWORKS_LLM_ALLOWED_MODELS="openai/gpt-4o-mini, hosted_vllm/qwen")
    assert allowlist.allowed_models() == sorted({"openai/gpt-4o-mini", "hosted_vllm/qwen", get_settings().llm_model})
    assert allowlist.is_allowed("hosted_vllm/qwen") and not allowlist.is_allowed("local/qwen2.5-coder-1.5b-instruct")


def test_gateway_refuses_before_any_call_and_sends_the_key_only_to_configured_models(configure, monkeypatch):
    configure(
        PAPERWORKS_LLM_MODEL="openai/gpt-4o-mini",
        PAPERWORKS_LLM_API_KEY="sk-server-secret",
        PAPERWORKS_LLM_API_BASE="https://llm.example.internal",
        PAPERWORKS_LLM_ALLOWED_MODELS="openai/gpt-4o-mini,local/smollm2-135m-instruct,anthropic/claude-x",
    )
    calls = []

    class _Resp:
        choices = [type("C", (), {"message": type("M", (), {"content": "ok"})(), "finish_reason": "stop"})()]
        usage = None

    import types

    fake = types.SimpleNamespace(completion=lambda **kw: calls.append(kw) or _Resp())
    monkeypatch.setattr(gateway, "_litellm", lambda: fake)  # litellm itself is not needed to see what it gets

    with pytest.raises(allowlist.ModelNotAllowed, match="ollama/x"):
        gateway.complete("hi", model="ollama/x")
    assert calls == []  # refused before litellm was called

    gateway.complete("hi")  # the configured default gets the key
    assert calls[-1]["api_key"] == "sk-server-secret" and calls[-1]["api_base"] == "https://llm.example.internal"
    gateway.complete("hi", model="anthropic/claude-x")  # operator-listed: configured by name
    assert calls[-1]["api_key"] == "sk-server-secret"
    assert allowlist.gets_credentials("local/smollm2-135m-instruct") is False
    with pytest.raises(allowlist.ModelNotAllowed):
        gateway.complete("hi", model="scripted/x", api_base="http://evil")  # no credentials smuggled in extra


def test_api_refuses_unlisted_models_with_a_422_listing_the_allowed_ones(api_client, configure):
    configure()
    cases = [
        ("llm.complete", {"prompts": ["x"], "model": "ollama/x"}, "model"),
        ("defame.check", {"claim": "c", "model": "openai/gpt-4o"}, "model"),
        ("pae.train", {"policy_model": "openai/gpt-4o"}, "policy_model"),
        ("pae.train", {"judge_model": "ollama/llama3"}, "judge_model"),
    ]
    for method, params, field in cases:
        r = api_client.post("/v1/jobs", json={"method": method, "params": params})
        assert r.status_code == 422, (method, r.text)
        detail = r.json()["detail"]
        assert field in detail["message"] and "local/smollm2-135m-instruct" in detail["allowed_models"]
    ok = api_client.post("/v1/jobs", json={"method": "llm.complete", "params": {"prompts": ["x"]}})
    assert ok.status_code == 201
    ok = api_client.post(
        "/v1/jobs",
        json={"method": "llm.complete", "params": {"prompts": ["x"], "model": "local/smollm2-135m-instruct"}},
    )
    assert ok.status_code == 201
    # an enum field that merely happens to be called "model" is not an LLM
    assert allowlist.check_params({"model": "digits"}, {"properties": {"model": {"enum": ["digits"]}}}) is None


def test_batch_items_naming_unlisted_models_are_refused_alone(api_client, configure):
    configure()
    r = api_client.post(
        "/v1/jobs:batch",
        json={
            "jobs": [
                {"method": "llm.complete", "params": {"prompts": ["a"]}},
                {"method": "llm.complete", "params": {"prompts": ["b"], "model": "ollama/x"}},
            ]
        },
    )
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert [i["status"] for i in items] == [201, 422]
    assert "ollama/x" in items[1]["error"]["message"] and items[1]["job"] is None
    only_bad = api_client.post(
        "/v1/jobs:batch", json={"jobs": [{"method": "llm.complete", "params": {"prompts": ["b"], "model": "ollama/x"}}]}
    )
    assert [i["status"] for i in only_bad.json()["items"]] == [422]
