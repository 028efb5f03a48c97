"""The LADA learner on an untrained tiny CLIP: spec §7 checks 1, 2, 3, 8 and zero-shot columns until learned."""

import torch

from core.jobs import null_context
from methods.continual.xtail import Inputs
from methods.lada.config import LadaConfig
from methods.lada.learner import LadaLearner

CFG = LadaConfig(lambda1=4, lambda2=2, epochs=2, batch_size=8, lr_memory=1e-2, lr_adapter=1e-2)


def test_frozen_encoder_old_memory_and_text_and_growing_phi(make_stream):
    stream = make_stream()
    learner = LadaLearner(CFG, seed=0, stream=stream)
    ref = {k: v.clone() for k, v in stream.backbone.state_dict().items()}
    adapters0 = [p.detach().clone() for p in learner.adapters.parameters()]
    total = 0
    for k, task in enumerate(stream):
        blocks = [b.detach().clone() for b in learner.memory.blocks]
        old = torch.as_tensor(learner.seen, dtype=torch.long)
        old_text = learner.text[old].clone()
        protos = {c: p.means.clone() for c, p in learner.prototypes.items()}
        learner.learn_task(task, null_context())
        total += len(task.classes)
        for name, p in learner.backbone.named_parameters():
            assert p.grad is None and torch.equal(p, ref[name]), name  # only the adapters train
        assert all(torch.equal(a, b) for a, b in zip(blocks, learner.memory.blocks))
        assert torch.equal(old_text, learner.text[old])
        assert all(torch.equal(m, learner.prototypes[c].means) for c, m in protos.items())
        assert not any(b.requires_grad for b in learner.memory.blocks)
        assert learner.memory.blocks[k].shape == (len(task.classes), CFG.lambda1, task.train.features.shape[1])
        x = task.test.features[:3]
        assert learner.memory.phi(x).shape == (3, CFG.lambda1 * total)
        assert learner.lada_logits(x).shape == (3, len(learner.seen)) == (3, total)
    assert any(not torch.equal(a, b) for a, b in zip(adapters0, learner.adapters.parameters()))


def test_unseen_classes_score_zero_shot_until_learned(make_stream):
    stream = make_stream()
    learner = LadaLearner(CFG, seed=0, stream=stream)
    probe = torch.cat([t.test.features for t in stream])
    zs = learner.scale * probe @ learner.zs_text.t()
    for task in stream:
        learner.learn_task(task, null_context())
        s = learner.scores(Inputs(torch.empty(0), probe))
        unseen = [c for c in range(stream.n_classes) if c not in learner.seen]
        assert torch.equal(s[:, unseen], zs[:, unseen])
        learned = torch.as_tensor(learner.seen)
        assert not torch.allclose(s[:, learned], zs[:, learned])  # memory term + adapted text after learning
    text_only = learner.scores(Inputs(torch.empty(0), probe), head="text")
    assert torch.all(learner.scores(Inputs(torch.empty(0), probe)) >= text_only)  # α·LADA ≥ 0 on seen classes


def test_predictions_need_no_task_id(make_stream):
    stream = make_stream()
    learner = LadaLearner(CFG, seed=1, stream=stream)
    for task in list(stream)[:2]:
        learner.learn_task(task, null_context())
    mixed = torch.cat([t.test.features for t in stream])
    perm = torch.randperm(len(mixed), generator=torch.Generator().manual_seed(0))
    shuffled = learner.predict(Inputs(torch.empty(0), mixed[perm]))
    per_domain = torch.cat([torch.as_tensor(learner.predict(t.test)) for t in stream])
    assert torch.equal(torch.as_tensor(shuffled), per_domain[perm])


def test_ablations_switch_off_memory_and_old_loss(make_stream):
    stream = make_stream()
    bf = LadaLearner(CFG.model_copy(update={"use_memory": False, "prototypes": "centres"}), seed=0, stream=stream)
    for task in stream:
        bf.learn_task(task, null_context())
    assert len(bf.memory.blocks) == 0 and bf.phi_dim == 0
    x = Inputs(torch.empty(0), stream.tasks[0].test.features)
    assert torch.equal(bf.scores(x, "lada"), bf.scores(x, "text"))
    assert torch.equal(bf.prototypes[0].noise, torch.zeros(2))


def test_alpha_heads_rescore_the_same_model(make_stream):
    stream = make_stream(domains=("colours", "shapes"))
    learner = LadaLearner(CFG.model_copy(update={"alpha_sweep": (0.0, 2.0)}), seed=0, stream=stream)
    assert learner.heads == ("lada", "text", "alpha=0", "alpha=2")
    learner.learn_task(stream.tasks[0], null_context())
    x = Inputs(torch.empty(0), stream.tasks[0].test.features)
    assert torch.equal(learner.scores(x, "alpha=0"), learner.scores(x, "text"))
    seen = torch.as_tensor(learner.seen)
    memory = learner.lada_logits(x.features)
    assert torch.allclose(
        learner.scores(x, "alpha=2")[:, seen] - learner.scores(x, "text")[:, seen], 2 * memory, atol=1e-4
    )
