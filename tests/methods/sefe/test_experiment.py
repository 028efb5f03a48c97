"""The experiment on a tiny random Llama with the SmolLM2 tokenizer: split model = full model, arms,
shared and resumable stage cache, RegLoRA shrinking the update at stored positions."""

import json

import numpy as np
import pytest
import torch

import methods.sefe.experiment as experiment
from methods.sefe.config import preset_config
from methods.sefe.lora import END, chat_prompt
from methods.sefe.split import SplitLM


@pytest.fixture(scope="module")
def tiny():
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from core.llm.local_models import converted_dir

    tok = AutoTokenizer.from_pretrained(str(converted_dir()))
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(cfg).eval(), tok


def test_split_generation_equals_full_model_generate(tiny):
    model, tok = tiny
    prompts = ["Which iris species is it?", "A much longer question about a wine: alcohol 13.2, proline 1050?"]
    split = SplitLM(model, tok, adapt_layers=1)
    got = split.generate(prompts, max_new_tokens=5)
    again = split.generate(prompts, max_new_tokens=5)  # the cached prefix is reused unchanged
    end = tok.convert_tokens_to_ids(END)
    tok.padding_side = "left"
    enc = tok([chat_prompt(p) for p in prompts], return_tensors="pt", padding=True, add_special_tokens=False)
    out = model.generate(**enc, max_new_tokens=5, do_sample=False, eos_token_id=end, pad_token_id=tok.pad_token_id)
    ref = []
    for row in out[:, enc["input_ids"].shape[1] :].tolist():
        row = row[: row.index(end)] if end in row else row
        ref.append(tok.decode(row, skip_special_tokens=True).strip())
    assert got == ref == again
    # features + upper part = the full model's logits
    ids = enc["input_ids"][:1, -6:]
    mask = torch.ones_like(ids)
    with torch.no_grad():
        full = model(input_ids=ids).logits
        part = split.upper(inputs_embeds=split.features(ids, mask), attention_mask=mask).logits
    assert torch.allclose(full, part, atol=1e-5)


@pytest.fixture(scope="module")
def tiny_run(tiny, tmp_path_factory):
    """Every arm once on the tiny model (module-scoped: the tests below read it)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(experiment, "load_base", lambda: tiny)
    cache = tmp_path_factory.mktemp("sefe-cache")
    cfg = preset_config(
        "tiny", arms=["seq", "asd", "reglora", "sefe", "multitask"], lr=5e-3, lam=1e5, n_train=16, batch_size=4
    )
    exps = experiment.run_experiment(cfg, cache_dir=cache)
    zs = experiment.zero_shot(cfg, cache_dir=cache)
    yield cfg, exps, zs, cache
    mp.undo()


def test_arms_share_task_one_and_reglora_protects(tiny_run):
    cfg, exps, _, cache = tiny_run
    assert set(exps) == {"seq", "asd", "reglora", "sefe", "multitask"}
    seq, reg = exps["seq"].runs[0], exps["reglora"].runs[0]
    assert len(seq.matrices["accuracy"]) == 2
    # task 1 has no penalty: RegLoRA reuses the sequential arm's task-1 stage (same adapter, same answers)
    assert seq.diagnostics[0]["train_s"] == reg.diagnostics[0]["train_s"]
    assert json.dumps(seq.matrices["accuracy"][0]) == json.dumps(reg.matrices["accuracy"][0])
    assert exps["asd"].runs[0].diagnostics[0]["train_s"] == exps["sefe"].runs[0].diagnostics[0]["train_s"]
    assert exps["asd"].runs[0].diagnostics[0]["n_transformed"] == round(16 * 0.2)
    stages = [p for p in cache.iterdir() if (p / "adapter.pt").exists()]
    assert len(stages) == 7  # seq ×2, reglora task 2, asd ×2, sefe task 2, multitask
    # the penalty is 0 at the first step of task 2 (B = 0) and positive later; it shrinks |B·A| at K
    assert reg.diagnostics[1]["reg_first"] == 0.0 and reg.diagnostics[1]["reg_last"] > 0
    assert reg.diagnostics[1]["key_mag"] < seq.diagnostics[1]["key_mag"]
    assert reg.diagnostics[1]["key_positions"] == 2 * reg.diagnostics[0]["key_positions"]
    mt = exps["multitask"].runs[0].matrix()
    assert np.isnan(mt[0, 0]) and not np.isnan(mt[1]).any()  # only the final row is filled


def test_a_second_run_comes_from_the_cache(tiny_run, tiny, monkeypatch):
    cfg, exps, _, cache = tiny_run
    monkeypatch.setattr(experiment, "load_base", lambda: tiny)

    def boom(*a, **k):
        raise AssertionError("should come from the cache")

    monkeypatch.setattr(experiment, "train_task", boom)
    again = experiment.run_experiment(cfg, cache_dir=cache)
    for arm in exps:
        assert json.dumps(again[arm].runs[0].matrices) == json.dumps(exps[arm].runs[0].matrices)


def test_report_builds_with_checks_and_examples(tiny_run):
    from methods.sefe.report import build_report, expected_direction_checks, reading

    cfg, exps, zs, _ = tiny_run
    rep = build_report(cfg, exps, zero_shot=zs, unit_checks=[("unit", True, "ok")])
    titles = [t.title for t in rep.tables]
    assert any("Spec §7 checks" in t for t in titles) and any("Superficially forgotten" in t for t in titles)
    checks = expected_direction_checks(exps)
    assert len(checks) == 6 and all(ok in (True, False) for _, ok, _ in checks)
    assert {"accuracy_matrix.png", "compliance_matrix.png", "runs.json"} <= set(rep.pending_files())
    assert rep.metrics["seq.accuracy.MFN"] is not None
    assert "What would change the conclusion" in reading(exps, checks)
