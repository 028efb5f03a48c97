"""LLM-call plumbing: prompt fitting, interleaved images for vision models, constraint patterns."""

from __future__ import annotations

import re

from PIL import Image

from agents.defame.calls import _interleave, fit_record, judge_regex, plan_regex
from agents.defame.config import DefameConfig, DefameContext
from agents.defame.document import claim_block


def test_fit_record_keeps_claim_and_latest_blocks():
    record = '## Claim\nClaim: "x"\n' + "old evidence " * 400 + "\n## Elaboration\nnewest"
    cut = fit_record(record, 600)
    assert len(cut) <= 600 and cut.startswith("## Claim") and cut.endswith("newest") and "was cut" in cut
    assert fit_record("short", 600) == "short"


def test_vision_models_get_interleaved_images(tmp_path):
    from core.llm.gateway import build_messages

    path = tmp_path / "a.png"
    Image.new("RGB", (8, 8), "red").save(path)
    parts = _interleave('Claim: "<image:1> shows snow" and <image:2>', {"1": str(path)})
    assert parts == ['Claim: "<image:1>', path, ' shows snow" and <image:2>', ""]
    msgs = build_messages(parts, model="openai/gpt-4o")
    content = msgs[-1]["content"]
    assert [p["type"] for p in content] == ["text", "image_url", "text", "text"]
    assert content[0]["text"].endswith("<image:1>") and content[1]["image_url"]["url"].startswith("data:image/png")


def test_text_only_models_are_told_the_image_is_not_viewable():
    block = claim_block({"text": "<image:1> The Sahara in snow."}, text_only=True)
    assert "<image:1> [image not viewable by this model] The Sahara" in block


def test_constraint_patterns_accept_well_formed_answers_and_compile():
    plan = plan_regex(["web_search", "ocr"], ["1"])
    assert re.fullmatch(plan, 'Check it\n```\nweb_search("bridge opening year")\nocr(<image:1>)\n```')
    assert not re.fullmatch(plan, '```\nfoo("x")\n```')
    judge = judge_regex(["supported", "refuted"])
    assert re.fullmatch(judge, "The sources give 1937, not 1952. `refuted`")
    assert not re.fullmatch(judge, "`maybe`")
    from core.llm.backends.constraints import ConstraintSpec, compile_spec

    compile_spec(ConstraintSpec(regex=plan))
    compile_spec(ConstraintSpec(regex=judge))


def test_context_defaults():
    ctx = DefameContext()
    assert ctx.config.max_iterations == 3 and ctx.config.max_actions == 5 and ctx.config.temperature == 0.01
    assert DefameConfig(benchmark="averitec").limit_per_search is None  # 5 from the benchmark
