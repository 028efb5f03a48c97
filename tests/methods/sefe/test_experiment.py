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
    assert len(checks) == 6 and all(ok in ("holds", "fails", "not resolved") for _, ok, _ in checks)
    assert "results.json" in rep.pending_files() and rep.sections[0].title.startswith("Summary")
    assert {"accuracy_matrix.png", "compliance_matrix.png", "runs.json"} <= set(rep.pending_files())
    assert rep.metrics["seq.accuracy.MFN"] is not None
    assert "What would change the conclusion" in reading(exps, checks)


def test_lambda_sweep_runs_on_the_first_seeds_only_and_is_reported(tiny_run, tiny, monkeypatch):
    from methods.sefe.report import build_report, lambda_sweep, reading

    cfg0, _, _, cache = tiny_run
    monkeypatch.setattr(experiment, "load_base", lambda: tiny)
    cfg = cfg0.model_copy(
        update={"arms": ("seq", "reglora"), "seeds": (0, 1), "lam_sweep": (10.0, cfg0.lam), "sweep_seeds": 1}
    )
    assert [a for a, _, _ in cfg.arm_plan_for(0)] == ["seq", "reglora", "reglora_l10"]
    assert [a for a, _, _ in cfg.arm_plan_for(1)] == ["seq", "reglora"]
    exps = experiment.run_experiment(cfg, cache_dir=cache)
    assert [r.seed for r in exps["reglora_l10"].runs] == [0]
    assert [r.seed for r in exps["seq"].runs] == [0, 1]
    sweep = lambda_sweep(exps, cfg.lam)
    assert sweep["seeds"] == [0]
    assert [r["lam"] for r in sweep["rows"]] == [0.0, 10.0, cfg.lam]
    seq0 = exps["seq"].runs[0]
    assert sweep["rows"][0]["ratio"] == 1.0 and sweep["rows"][0]["MFN"][0] == seq0.summary()["MFN"]
    # a larger λ shrinks the update at the stored positions more
    assert sweep["rows"][2]["key"] < sweep["rows"][1]["key"] <= sweep["rows"][0]["key"] * 1.01
    rep = build_report(cfg, exps)
    table = next(t for t in rep.tables if t.title.startswith("λ sweep"))
    assert len(table.rows) == 3
    assert any("RegLoRA only, λ = 10 (1 seed)" in str(t.rows) for t in rep.tables)
    assert "λ sweep without ASD (seed(s) 0)" in reading(exps, [], cfg.lam)


def _fake(arm: str, acc: list[list[float]], ess: list[list[float]], seed: int = 0):
    from methods.continual.task_incremental import TIExperiment, TIRun

    comp = [[1.0 if not np.isnan(v) else np.nan for v in row] for row in acc]
    run = TIRun(seed=seed, tasks=["iris", "cancer"], matrices={"accuracy": acc, "compliance": comp, "essential": ess})
    run.diagnostics = [{}, {}]
    return TIExperiment(arm=arm, tasks=["iris", "cancer"], runs=[run])


def test_reading_tells_learned_tasks_and_essential_forgetting():
    from methods.sefe.report import reading

    nan = float("nan")
    exps = {
        "seq": _fake("seq", [[0.95, nan], [0.0, 0.9]], [[0.95, nan], [0.0, 0.9]]),
        "asd": _fake("asd", [[0.95, nan], [0.6, 0.9]], [[0.95, nan], [0.6, 0.9]]),
        "sefe": _fake("sefe", [[0.95, nan], [0.8, 0.9]], [[0.95, nan], [0.8, 0.9]]),
    }
    text = reading(exps, [])
    assert "every task is learned beyond its majority answer (iris 95 % (majority 32 %), cancer 90 %" in text
    assert (
        "ASD's essential BWT is -35.0 ± 0.0 points, SEFE's -15.0 ± 0.0: RegLoRA on top of ASD reduces it by 20.0"
        in text
    )
    assert "more training per task" not in text
    # a task at its majority baseline is called out, and the advice to train more comes back
    exps["seq"] = _fake("seq", [[0.3, nan], [0.0, 0.9]], [[0.3, nan], [0.0, 0.9]])
    text = reading(exps, [])
    assert "iris (30 % vs majority 32 %) are not learned" in text and "more training per task" in text


def _seeded(arm: str, seeds_acc: list[tuple[float, float, float]], comp_drop: float, key_mag: float):
    """An arm over several seeds on two tasks: per seed (task-1 acc after task 1, after task 2, task-2 acc); task 1's
    compliance falls by ``comp_drop`` when task 2 is learned; ``key_mag`` is |B·A| at the stored positions."""
    from methods.continual.task_incremental import TIExperiment, TIRun

    nan = float("nan")
    runs = []
    for seed, (a11, a21, a22) in enumerate(seeds_acc):
        acc = [[a11, nan], [a21, a22]]
        comp = [[1.0, nan], [1.0 - comp_drop, 1.0]]
        ess = [[a11, nan], [a21 / (1.0 - comp_drop) if comp_drop < 1 else nan, a22]]
        run = TIRun(
            seed=seed, tasks=["iris", "cancer"], matrices={"accuracy": acc, "compliance": comp, "essential": ess}
        )
        run.diagnostics = [{}, {"key_mag": key_mag, "free_mag": 1e-3}]
        runs.append(run)
    return TIExperiment(arm=arm, tasks=["iris", "cancer"], runs=runs)


def test_expected_directions_are_decided_by_paired_intervals():
    """Issue #49: the check rows are verdicts of paired intervals over seeds, and they can fail or stay open."""
    from methods.sefe.report import evidence, expected_direction_checks

    seq = _seeded("seq", [(0.9, 0.0, 0.9), (0.92, 0.0, 0.88), (0.88, 0.0, 0.9)], 1.0, 4e-4)
    exps = {
        "seq": seq,
        "asd": _seeded("asd", [(0.8, 0.5, 0.9), (0.82, 0.4, 0.88), (0.78, 0.6, 0.9)], 0.0, 4e-4),
        # RegLoRA alone: MFN within noise of sequential (one seed up, one down, one level)
        "reglora": _seeded("reglora", [(0.9, 0.1, 0.9), (0.92, 0.0, 0.80), (0.88, 0.0, 0.9)], 1.0, 2e-5),
        "sefe": _seeded("sefe", [(0.8, 0.7, 0.9), (0.82, 0.6, 0.88), (0.78, 0.75, 0.9)], 0.0, 2e-5),
    }
    checks = expected_direction_checks(exps)

    def row(start: str) -> str:
        return next(ok for name, ok, _ in checks if name.startswith(start))

    got = {h.claim: h.result["verdict"] for h in evidence(exps).headlines}
    assert got["ASD raises final format compliance over sequential LoRA"] == "holds"
    assert got["RegLoRA alone raises final accuracy (MFN) over sequential LoRA"] == "not resolved"
    assert got["SEFE (ASD + RegLoRA) beats ASD alone on final accuracy (MFN)"] == "holds"
    assert got["RegLoRA shrinks the new update |B·A| at the stored key positions ≥ 5×"] == "holds"
    assert row("Without ASD, task 2 (YN) breaks task 1's format") == "holds"
    assert row("RegLoRA: final average accuracy") == "not resolved"
    # ASD that keeps no format and a RegLoRA that does not suppress: those checks fail
    exps["asd"] = _seeded("asd", [(0.8, 0.0, 0.9), (0.82, 0.0, 0.88), (0.78, 0.0, 0.9)], 1.0, 4e-4)
    exps["reglora"] = _seeded("reglora", [(0.9, 0.0, 0.9), (0.92, 0.0, 0.88), (0.88, 0.0, 0.9)], 1.0, 3.9e-4)
    got = {h.claim: h.result["verdict"] for h in evidence(exps).headlines}
    assert got["ASD: task 1's compliance drop after task 2 is under half of sequential LoRA's"] == "fails"
    assert got["RegLoRA shrinks the new update |B·A| at the stored key positions ≥ 5×"] == "fails"
