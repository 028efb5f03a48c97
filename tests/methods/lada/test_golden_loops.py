"""LADA's and the fine-tuning baselines' training loops run on ``core.train.fit`` bit-identically (issue #46).

The literal losses and fingerprints below are the output of the loops these learners wrote for
themselves before they moved onto :func:`core.train.fit` (recorded on the CPU, one torch thread,
at commit 3451c6d, with ``sys.setprofile`` catching each ``learn_task``'s local ``losses``): the
new path must reproduce every per-step loss and every final weight exactly. A learner trained
by the old loop is therefore the same learner today.
"""

from __future__ import annotations

import hashlib

import pytest
import torch

from core.jobs import null_context
from methods.lada.config import FinetuneConfig, LadaConfig
from methods.lada.domains import DOMAIN_ORDER, _domain_classes, build_stream, pool_features


def _backbone():
    from methods.vlm.backbone import tiny_clip
    from methods.vlm.config import TinyCLIPConfig
    from methods.vlm.tokenizer import WordTokenizer

    torch.manual_seed(0)
    names = [n for d in DOMAIN_ORDER for n in _domain_classes()[d]]
    tok = WordTokenizer.build(["a photo of a ."] + names)
    cfg = TinyCLIPConfig(
        vision_layers=1, text_layers=1, vision_width=32, text_width=32, embed_dim=32, wordnet=False,
        word_vectors="random",
    )  # fmt: skip
    return tiny_clip(cfg, tok).eval().requires_grad_(False)


def _images(n_classes: int, per_class: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    colours = torch.rand(n_classes, 3, 1, 1, generator=torch.Generator().manual_seed(99 + n_classes))
    y = torch.arange(n_classes).repeat(per_class)
    return (0.8 * colours[y] + 0.2 * torch.rand(len(y), 3, 32, 32, generator=g)).clamp(0, 1), y


def golden_stream(domains=("colours", "shapes", "textures"), shots=4, seed=0):
    """An X-TAIL stream on an untrained tiny CLIP (the same as tests/methods/lada/conftest.py builds)."""
    backbone = _backbone()
    names = _domain_classes()
    pools = {
        d: {"train": _images(len(names[d]), 6, 10 + i), "test": _images(len(names[d]), 3, 50 + i)}
        for i, d in enumerate(DOMAIN_ORDER)
    }
    feats = pool_features(backbone, pools)
    return build_stream(backbone, seed=seed, shots=shots, domains=domains, pools=pools, features=feats)


def fingerprint(tensors) -> str:
    """sha256 (16 hex digits) of the raw bytes of ``tensors`` (CPU float32/64), in order."""
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def lada_state(learner, stream) -> list[torch.Tensor]:
    """Every trained tensor of a LADA learner plus its union scores of every test domain."""
    out = [*learner.adapters.parameters(), *learner.memory.blocks, learner.text]
    return out + [learner.scores(t.test, h) for h in learner.heads for t in stream]


def finetune_state(learner, stream) -> list[torch.Tensor]:
    return [*learner.model.parameters()] + [learner.scores(t.test) for t in stream]


LADA_CASES = {
    # the full method: memory + adapters + GMM prototypes (old-task loss from task 2 on)
    "lada": LadaConfig(lambda1=4, lambda2=2, epochs=2, batch_size=8, lr_memory=1e-2, lr_adapter=1e-2),
    # BF: adapters only, centre prototypes, mean reduction, weight decay
    "bf": LadaConfig(
        lambda1=4,
        lambda2=2,
        epochs=2,
        batch_size=16,
        lr_adapter=1e-2,
        use_memory=False,
        prototypes="centres",
        old_loss_reduction="mean",
        weight_decay=0.01,
    ),  # fmt: skip
}
FINETUNE_CASES = {
    "finetune": FinetuneConfig(epochs=2, batch_size=8, lr=1e-3),
    "lwf": FinetuneConfig(epochs=1, batch_size=8, lr=1e-3, kd_lambda=1.0),
}

# Recorded from the pre-fit loops (see the module docstring); per task, per step.
GOLDEN: dict[str, tuple[list[list[float]], str]] = {
    "lada": (
        [
            [
                0.6240267157554626,
                0.781800389289856,
                0.9494152069091797,
                0.7512173652648926,
                0.6858753561973572,
                0.45416876673698425,
                0.7022494673728943,
                0.22482892870903015,
            ],
            [
                5.978697776794434,
                5.379574775695801,
                7.827141761779785,
                5.7308831214904785,
                5.385275363922119,
                6.445693016052246,
            ],
            [18.22986602783203, 17.341632843017578, 17.102128982543945, 17.34868812561035],
        ],
        "3f1e9f7f205942a2",
    ),
    "bf": (
        [
            [2.3080832958221436, 2.3657543659210205, 2.315793037414551, 2.345823287963867],
            [5.71372127532959, 5.967792510986328, 5.77181339263916, 5.791309356689453],
            [6.330129623413086, 6.22581148147583],
        ],
        "4dac78f705746068",
    ),
    "finetune": (
        [
            [2.248220682144165, 2.3518123626708984, 1.981844425201416, 1.9372446537017822],
            [2.535444736480713, 2.56959867477417, 2.0641956329345703, 1.7057137489318848],
            [3.6907219886779785, 2.8709473609924316],
        ],
        "649688ee432385f0",
    ),
    "lwf": (
        [
            [2.248220682144165, 2.3518123626708984],
            [2.602449893951416, 2.3005826473236084],
            [3.2937142848968506],
        ],
        "3e9ee3b2bdad107f",
    ),
}


def _run(kind: str):
    from methods.lada.baselines import FinetuneLearner
    from methods.lada.learner import LadaLearner

    stream = golden_stream(shots=4 if kind in LADA_CASES else 2)
    if kind in LADA_CASES:
        learner = LadaLearner(LADA_CASES[kind], seed=3, stream=stream)
    else:
        learner = FinetuneLearner(FINETUNE_CASES[kind], seed=3, stream=stream)
    for task in stream:
        learner.learn_task(task, null_context())
    state = lada_state(learner, stream) if kind in LADA_CASES else finetune_state(learner, stream)
    return learner, fingerprint(state)


@pytest.mark.parametrize("kind", [*LADA_CASES, *FINETUNE_CASES])
def test_the_loop_on_fit_reproduces_the_old_loop_exactly(kind):
    from methods.continual.harness import torch_threads

    with torch_threads(1):
        learner, fp = _run(kind)
    losses, want = GOLDEN[kind]
    assert learner.task_losses == losses
    assert fp == want
