"""AGD (spec §3.4, §7): one direction per step, only its parameters move, schedules, sampling, controls.

Synthetic features stand in for the frozen encoders here (the real ones cost minutes): text tokens
are a fixed random map of the image's pooled features plus noise, so the pairing is learnable.
"""

import numpy as np
import pytest
import torch

from methods.m3_jepa.model import M3Predictor, PredictorConfig
from methods.m3_jepa.train import Features, TrainConfig, lr_wd, run, step_loss, task_probability, train


def _features(n_fit=240, n_val=60, n_test=60, d_img=16, d_txt=24, seed=0) -> Features:
    g = torch.Generator().manual_seed(seed)
    proj = torch.randn(d_img, d_txt, generator=g)
    feats = Features(img={}, txt={}, mask={}, labels={}, prompts=None, prompt_mask=None, prompts_per_class=1)
    for name, n in (("fit", n_fit), ("val", n_val), ("test", n_test)):
        labels = torch.arange(n) % 10
        centers = torch.randn(10, d_img, generator=torch.Generator().manual_seed(99))
        img = centers[labels][:, None, :] + 0.8 * torch.randn(n, 4, d_img, generator=g)
        txt = (img.mean(1) @ proj)[:, None, :] + 0.3 * torch.randn(n, 5, d_txt, generator=g)
        mask = torch.ones(n, 5, dtype=torch.bool)
        mask[::2, 4] = False
        feats.img[name], feats.txt[name], feats.mask[name], feats.labels[name] = img, txt, mask, labels
    feats.prompts = (centers @ proj)[:, None, :].repeat(1, 5, 1)
    feats.prompt_mask = torch.ones(10, 5, dtype=torch.bool)
    return feats


SMALL = {"hidden": 32, "experts": 4, "top_k": 2, "batch_size": 60, "epochs": 3, "patience": 0}


def test_a_t2i_step_moves_only_t2i_and_shared_parameters():
    torch.manual_seed(0)
    f = _features()
    m = M3Predictor(PredictorConfig(d_img=16, d_txt=24, hidden=32, experts=4, top_k=2, dropout=0.0))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
    before = {k: p.detach().clone() for k, p in m.named_parameters()}
    loss, _ = step_loss(m, TrainConfig(), "t2i", f.img["fit"][:60], f.txt["fit"][:60], f.mask["fit"][:60])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    for k, p in m.direction_parameters("i2t").items():
        assert p.grad is None, k
    for k, p in m.direction_parameters("t2i").items():
        assert p.grad is not None and p.grad.abs().sum() > 0, k
    assert m.block.gate.weight.grad.abs().sum() > 0
    opt.step()
    for k, p in m.named_parameters():
        moved = not torch.equal(p, before[k])
        assert moved == (k not in m.direction_parameters("i2t")), k  # AdamW (with weight decay) skips grad-less params


def test_round_robin_alternates_and_summed_uses_both():
    f = _features()
    rr, _ = run(TrainConfig(**SMALL), f)
    assert rr["alternates"] and rr["task_counts"]["t2i"] == rr["task_counts"]["i2t"] == rr["steps"] // 2
    summed, _ = run(TrainConfig(**SMALL, schedule="summed"), f)
    assert summed["task_counts"] == {"t2i": 0, "i2t": 0, "both": summed["steps"]}


def test_sampled_schedule_favours_the_weaker_direction():
    assert task_probability(0.2, 0.6, 1) > 0.5  # t2i weaker → more t2i steps
    assert task_probability(0.6, 0.2, 1) < 0.5
    assert task_probability(0.0, 1.0, 1) == 0.7 and task_probability(1.0, 0.0, 1) == 0.3  # clipped
    assert abs(task_probability(0.2, 0.6, 25) - 0.5) < abs(task_probability(0.2, 0.6, 1) - 0.5)  # step decay
    _, hist = train(TrainConfig(**SMALL, schedule="sampled"), _features())
    assert set(hist["tasks"]) <= {"t2i", "i2t"} and len(hist["p_t2i"]) == SMALL["epochs"]


def test_direction_schedules():
    # t2i warms up over 0.1 epoch, i2t over 10 % of the epochs; both start at peak/1.5 and end at the final lr
    assert lr_wd("t2i", 0.0, 50, 1e-3)[0] == pytest.approx(1e-3 / 1.5)
    assert lr_wd("t2i", 0.1, 50, 1e-3)[0] == pytest.approx(1e-3)
    assert lr_wd("i2t", 0.1, 50, 1e-3)[0] < 0.7e-3 and lr_wd("i2t", 5.0, 50, 1e-3)[0] == pytest.approx(1e-3)
    assert lr_wd("i2t", 50.0, 50, 1e-3)[0] == pytest.approx(1e-3 * 5.5e-6 / 1.5e-3)
    assert lr_wd("t2i", 0.0, 50, 1e-3)[1] == pytest.approx(0.005) and lr_wd("t2i", 50.0, 50, 1e-3)[1] == pytest.approx(
        0.2
    )


def test_learns_true_pairs_and_random_captions_stay_at_chance():
    f = _features()
    fast = {**SMALL, "epochs": 10, "lr": 5e-3}
    good, _ = run(TrainConfig(**fast), f)
    rnd, _ = run(TrainConfig(**fast, shuffle_captions=True), f)
    chance = 1 / 60
    assert good["metrics"]["mean_r1"] > 6 * chance
    assert good["metrics"]["t2i_class_r1"] > 0.8 and good["metrics"]["i2t_class_r1"] > 0.8
    assert rnd["metrics"]["mean_r1"] < 4 * chance
    assert rnd["metrics"]["t2i_class_r1"] < 0.4
    assert good["usage"]["t2i/cl"]["mass"] < 1.0  # top-2 of 4: unnormalised weights sum below one


def test_without_contrastive_loss_the_contrastive_space_stays_untrained():
    f = _features()
    torch.manual_seed(0)
    fast = {**SMALL, "epochs": 6, "lr": 5e-3}
    _, hist = train(TrainConfig(**fast, w_cl=0.0), f)
    _, hist_full = train(TrainConfig(**fast), f)
    assert np.mean([v["mean_recall"] for v in hist["val"]]) < np.mean([v["mean_recall"] for v in hist_full["val"]])


def test_frozen_image_encoder_is_bitwise_unchanged():
    from methods.m3_jepa.data import PatchEncoder, image_tokens, state_digest

    torch.manual_seed(0)
    enc = PatchEncoder().eval()
    for p in enc.parameters():
        p.requires_grad_(False)
    digest = state_digest(enc)
    f = _features(d_img=64)
    imgs = np.random.default_rng(0).random((300, 8, 8)).astype(np.float32)
    toks = image_tokens(enc, imgs)
    assert toks.shape == (300, 16, 64) and not toks.requires_grad
    f.img["fit"], f.img["val"], f.img["test"] = toks[:240], toks[240:], toks[240:]
    run(TrainConfig(**{**SMALL, "epochs": 2}), f)
    assert state_digest(enc) == digest


# --- the loop on core.train.fit reproduces the old own loop bit for bit (CPU, fp32) -----------------
# ``train_golden.json`` beside this file is the OUTPUT OF THE OLD CODE (methods/m3_jepa/train.py's and
# data.py's own loops before they moved onto core.train.fit; commit 401c525) on the synthetic features
# above: per-step losses, L_cl / L_reg terms, tasks and learning rates, per-epoch validation recalls and
# AGD sampling probabilities, the best / early-stopped epochs, and SHA-256 digests of the final weights;
# and the frozen image encoder's pretraining (2 epochs, seed 1) as a weight digest.
GOLDEN_CASES = {
    "round_robin": {**SMALL, "epochs": 3, "patience": 0, "seed": 1},
    "sampled_es": {**SMALL, "schedule": "sampled", "epochs": 8, "patience": 2, "lr": 5e-2, "seed": 2},
    "sampled_stop": {**SMALL, "schedule": "sampled", "shuffle_captions": True, "epochs": 8, "patience": 2, "seed": 0},
    "summed": {**SMALL, "schedule": "summed", "epochs": 2, "patience": 0, "seed": 0},
    "clip": {**SMALL, "model": "clip", "epochs": 2, "patience": 0, "seed": 0},
    "shuffled_k1_mlp": {**SMALL, "block": "mlp", "shuffle_captions": True, "epochs": 2, "patience": 0, "seed": 4},
}


def _golden() -> dict:
    import json
    from pathlib import Path

    return json.loads((Path(__file__).parent / "train_golden.json").read_text())


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_training_is_bit_identical_to_the_old_loop(name):
    from methods.m3_jepa.data import state_digest

    old = _golden()[name]
    model, hist = train(TrainConfig(**GOLDEN_CASES[name]), _features())
    for key in ("tasks", "loss", "cl", "reg", "lr", "val", "p_t2i", "steps"):
        assert hist[key] == old[key], key
    assert hist.get("best_epoch") == old["best_epoch"] and hist.get("stopped_epoch") == old["stopped_epoch"]
    assert state_digest(model) == old["weights"]


def test_run_metrics_are_bit_identical_to_the_old_loop():
    old = _golden()
    res, _ = run(TrainConfig(**GOLDEN_CASES["round_robin"]), _features())
    assert res["metrics"] == old["run_metrics"] and res["usage"] == old["run_usage"]


def test_encoder_pretraining_is_bit_identical_to_the_old_loop():
    from methods.m3_jepa.data import pretrain_encoder, state_digest

    assert state_digest(pretrain_encoder(epochs=2, seed=1)) == _golden()["encoder"]
