"""The LLM gateway: the real local model through litellm, the scripted provider, usage tallies."""

import os

import pytest


def test_real_local_model_answers_through_litellm():
    from core.llm.gateway import ensure_providers

    ensure_providers()
    import litellm

    resp = litellm.completion(
        model="local/smollm2-135m-instruct",
        messages=[{"role": "user", "content": "What is 2+3?"}],
        max_tokens=12,
        temperature=0,
    )
    text = resp.choices[0].message.content
    assert "5" in text
    assert 0 < resp.usage.completion_tokens <= 12 and resp.usage.prompt_tokens > 5
    assert os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP") == "True"


def test_gateway_complete_honours_stop_and_max_tokens():
    from core.llm import complete

    c = complete("Count from 1 to 30, separated by commas.", max_tokens=40, stop=["7"])
    assert "7" not in c.text and "1" in c.text
    short = complete("Write a long story about a dragon.", max_tokens=5)
    assert short.completion_tokens <= 5 and short.finish_reason == "length"


def test_scripted_provider_and_usage_tally(scripted_llm):
    from core.llm import complete, track_usage

    provider = scripted_llm("unit", ["first", "second"])
    with track_usage() as tally:
        assert complete("a", model="scripted/unit", tag="plan").text == "first"
        assert complete("b", model="scripted/unit", tag="judge").text == "second"
    assert tally.calls == 2 and tally.by_tag == {"plan": 1, "judge": 1}
    assert provider.calls["unit"][0][-1]["content"] == "a"
    with pytest.raises(Exception, match="ran out"):
        complete("c", model="scripted/unit")


def test_images_become_markers_for_text_only_models():
    from PIL import Image

    from core.llm.gateway import build_messages

    msgs = build_messages(["Look at ", Image.new("RGB", (4, 4)), " and say"], model="local/x")
    assert msgs[-1]["content"] == "Look at [image 1] and say"


def test_local_model_registry_is_shared_and_has_internals():
    import torch

    from core.llm import get_local_model, model_hash

    lm = get_local_model()
    assert lm is get_local_model()
    ids = lm.tokenizer("Hello", return_tensors="pt")
    with torch.no_grad():
        out = lm.model(**ids, output_hidden_states=True)
    assert out.logits.shape[-1] == lm.model.config.vocab_size
    assert len(out.hidden_states) == lm.model.config.num_hidden_layers + 1
    assert len(model_hash()) == 12
