"""The shared decoding state: stop strings, max tokens, streaming hold-back, masks (no model run)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.llm.backends.base import GenerationRequest
from core.llm.backends.chat import eos_ids
from core.llm.backends.constraints import ConstraintError, compile_spec, spec_from
from core.llm.backends.decoding import Sequence, _held_suffix


def _feed(seq: Sequence, ids: list[int]) -> list[str]:
    pieces = []
    for t in ids:
        pieces.append(seq.push(t))
        if seq.finished:
            break
    return pieces


def _req(**kw) -> GenerationRequest:
    return GenerationRequest(messages=[{"role": "user", "content": "x"}], **kw)


def test_held_suffix_keeps_back_only_a_possible_stop_prefix():
    assert _held_suffix("Thought: abc\nAct", ["\nAction:"]) == 4
    assert _held_suffix("Thought: abc", ["\nAction:"]) == 0
    assert _held_suffix("abc\n", ["\nAction:", "\n\n"]) == 1


def test_stop_string_cuts_text_and_stream_never_shows_it(tokenizer):
    ids = tokenizer("Paris is nice. END of story and more", add_special_tokens=False)["input_ids"]
    seq = Sequence(_req(stop=["END"]), [1, 2, 3], tokenizer, eos_ids(tokenizer))
    pieces = _feed(seq, ids)
    assert seq.finished and seq.finish_reason == "stop"
    assert seq.text == "Paris is nice. "
    assert "".join(pieces) == seq.text
    assert all("E" not in p for p in pieces)


def test_max_tokens_gives_length_and_exact_count(tokenizer):
    ids = tokenizer("one two three four five six seven", add_special_tokens=False)["input_ids"]
    seq = Sequence(_req(max_tokens=3), [1], tokenizer, eos_ids(tokenizer))
    _feed(seq, ids)
    res = seq.result()
    assert res.finish_reason == "length" and res.completion_tokens == 3 and res.token_ids == ids[:3]
    assert res.text == tokenizer.decode(ids[:3])


def test_end_of_turn_token_finishes_with_stop(tokenizer):
    ids = tokenizer("Hi there", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id, 42]
    seq = Sequence(_req(), [1], tokenizer, eos_ids(tokenizer))
    pieces = _feed(seq, ids)
    assert seq.finished and seq.finish_reason == "stop" and "".join(pieces) == "Hi there"
    assert seq.result().completion_tokens == len(ids) - 1  # the EOS is counted, the token after is not


def test_json_mask_forces_a_valid_object(tokenizer):
    """Random logits, masked by the schema, always decode into a valid instance."""
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": -99, "maximum": 999}},
        "required": ["ok", "n"],
        "additionalProperties": False,
    }
    rng = np.random.default_rng(0)
    for _ in range(5):
        seq = Sequence(_req(json_schema=schema, max_tokens=40), [1], tokenizer, eos_ids(tokenizer))
        while not seq.finished:
            logits = rng.normal(size=len(tokenizer)).astype(np.float32)
            logits[tokenizer.eos_token_id] -= 5.0  # make early stopping unlikely, not impossible
            seq.push(seq.choose(logits))
        assert seq.finish_reason == "stop"  # the grammar closed the object well inside the budget
        obj = json.loads(seq.text)
        assert (
            -99 <= obj["n"] <= 999
            and set(obj) == {"ok", "n"}
            and isinstance(obj["ok"], bool)
            and isinstance(obj["n"], int)
        )


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({"json_schema": {"type": "nonsense"}}, "invalid JSON schema"),
        ({"json_schema": {"type": "object", "required": "x"}}, "invalid JSON schema"),
        ({"regex": "(abc"}, "invalid regex"),
        ({"grammar": 'root ::= ( "a"'}, "invalid grammar"),
    ],
)
def test_bad_constraints_raise_clear_errors(kw, needle):
    spec = spec_from(kw.get("json_schema"), kw.get("regex"), kw.get("grammar"))
    with pytest.raises(ConstraintError, match=needle):
        compile_spec(spec)


def test_two_constraints_at_once_are_refused():
    with pytest.raises(ConstraintError, match="at most one"):
        spec_from({"type": "object"}, "a+", None)
