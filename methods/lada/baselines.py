"""Baselines in the same X-TAIL harness: zero-shot CLIP, full fine-tuning, LwF, and Primal-RAIL.

* :class:`ZeroShotLearner` — never trains; scores s·⟨i, t^zs_c⟩ over the union.
* :class:`FinetuneLearner` — sequential fine-tuning of the whole CLIP (both towers, ZSCL's "FT"):
  CE over the seen classes' prompts; inference uses the tuned encoders for every class (seen or not),
  so drift shows as lost zero-shot transfer and forgetting. ``kd_lambda`` > 0 adds LwF's
  distillation: KL(old model ‖ new model) at temperature T on the old classes' logits of the
  current images (Li & Hoiem, 2017).
* :class:`RailLearner` — Primal-RAIL (Xu et al., 2024; the adapter baseline in the spec's table):
  frozen features → random ReLU expansion → ridge regression onto one-hot labels of every learned
  class, solved in closed form from accumulated ΦᵀΦ, ΦᵀY (equal to RAIL's recursive update, no
  exemplars). Inference as RAIL's ``primal_RAIL.py``: zero-shot softmax over the union; when its
  argmax is a learned class (the "domain selector"), output (1−w)·softmax + w·adapter.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from core.jobs import JobContext
from methods.continual.xtail import Inputs, XTailLearner, XTailStream, XTailTask
from methods.lada.config import FinetuneConfig, RailConfig, ZeroShotConfig
from methods.lada.learner import encode_prompts


def _need_backbone(stream: XTailStream) -> None:
    if stream.backbone is None:
        raise ValueError("this baseline needs the stream's CLIP backbone (an X-TAIL stream on methods.vlm)")


class ZeroShotLearner(XTailLearner):
    heads = ("zeroshot",)

    def __init__(self, cfg: ZeroShotConfig, *, seed: int, stream: XTailStream):
        _need_backbone(stream)
        self.scale = float(stream.backbone.logit_scale)
        self.text = encode_prompts(stream.backbone.eval(), cfg.prompt, stream.classnames)

    def learn_task(self, task: XTailTask, progress: JobContext) -> None:
        progress(1.0, f"{task.name}: zero-shot, nothing to learn")

    @torch.no_grad()
    def scores(self, x: Inputs, head: str | None = None) -> torch.Tensor:
        return self.scale * x.features @ self.text.t()


class FinetuneLearner(XTailLearner):
    heads = ("finetune",)

    def __init__(self, cfg: FinetuneConfig, *, seed: int, stream: XTailStream):
        _need_backbone(stream)
        self.cfg = cfg
        torch.manual_seed(seed)
        self.gen = torch.Generator().manual_seed(seed)
        self.model = copy.deepcopy(stream.backbone)
        for name, p in self.model.named_parameters():
            # the tiny CLIP's MiniLM token table is frozen by construction; everything else trains
            p.requires_grad_("token_embedding" not in name or p.requires_grad)
        self.scale = float(stream.backbone.logit_scale)
        self.prompts = [cfg.prompt.format(n.replace("_", " ")) for n in stream.classnames]
        self.seen: list[int] = []
        self._diag: dict[str, float] = {}
        self._text_cache: torch.Tensor | None = None

    def _text(self, classes) -> torch.Tensor:
        return self.model.encode_text(self.model.tokenize([self.prompts[c] for c in classes]))

    def learn_task(self, task: XTailTask, progress: JobContext) -> None:
        cfg = self.cfg
        self._text_cache = None
        old_model = copy.deepcopy(self.model).eval().requires_grad_(False) if cfg.kd_lambda > 0 and self.seen else None
        old_seen = list(self.seen)
        seen = old_seen + list(task.classes)
        pos = {c: i for i, c in enumerate(seen)}
        target = torch.as_tensor([pos[int(c)] for c in task.y_train])
        images = task.train.images
        opt = torch.optim.AdamW(
            [p for p in self.model.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=cfg.weight_decay
        )
        self.model.train()
        n = len(target)
        steps, step, losses = max(1, -(-n // cfg.batch_size)) * cfg.epochs, 0, []
        for _ in range(cfg.epochs):
            perm = torch.randperm(n, generator=self.gen)
            for b in range(0, n, cfg.batch_size):
                idx = perm[b : b + cfg.batch_size]
                feats = self.model.encode_image(images[idx])
                logits = self.scale * feats @ self._text(seen).t()
                loss = F.cross_entropy(logits, target[idx])
                if old_model is not None:
                    T = cfg.kd_temperature
                    with torch.no_grad():
                        old_logits = (
                            self.scale
                            * old_model.encode_image(images[idx])
                            @ old_model.encode_text(old_model.tokenize([self.prompts[c] for c in old_seen])).t()
                        )
                    kd = F.kl_div(
                        F.log_softmax(logits[:, : len(old_seen)] / T, dim=1),
                        F.softmax(old_logits / T, dim=1),
                        reduction="batchmean",
                    )
                    loss = loss + cfg.kd_lambda * kd * T * T
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                losses.append(loss.item())
                step += 1
                progress(step / steps, f"{task.name}: step {step}/{steps} loss {losses[-1]:.3f}")
        self.model.eval()
        self.seen = seen
        self._diag = {"loss_last": losses[-1] if losses else float("nan"), "seen_classes": float(len(seen))}

    @torch.no_grad()
    def scores(self, x: Inputs, head: str | None = None) -> torch.Tensor:
        if self._text_cache is None:
            self._text_cache = self._text(range(len(self.prompts)))
        feats = torch.cat([self.model.encode_image(x.images[i : i + 512]) for i in range(0, len(x), 512)])
        return self.scale * feats @ self._text_cache.t()

    def diagnostics(self) -> dict[str, float]:
        return dict(self._diag)


class RailLearner(XTailLearner):
    heads = ("rail",)

    def __init__(self, cfg: RailConfig, *, seed: int, stream: XTailStream):
        _need_backbone(stream)
        self.cfg = cfg
        g = torch.Generator().manual_seed(seed)
        d = int(stream.tasks[0].train.features.shape[1])
        bound = 1.0 / d**0.5  # nn.Linear's default init, as RAIL's expansion layer
        self.expand = (torch.rand(d, cfg.hidden_dim, generator=g, dtype=torch.float64) * 2 - 1) * bound
        self.scale = float(stream.backbone.logit_scale)
        self.text = encode_prompts(stream.backbone.eval(), cfg.prompt, stream.classnames)
        C = stream.n_classes
        self.auto = torch.zeros(cfg.hidden_dim, cfg.hidden_dim, dtype=torch.float64)
        self.cross = torch.zeros(cfg.hidden_dim, C, dtype=torch.float64)
        self.weight = torch.zeros(cfg.hidden_dim, C, dtype=torch.float64)
        self.n_learned = 0

    def _phi(self, feats: torch.Tensor) -> torch.Tensor:
        return torch.relu(feats.double() @ self.expand)

    def learn_task(self, task: XTailTask, progress: JobContext) -> None:
        phi = self._phi(task.train.features)
        y = F.one_hot(task.y_train, self.cross.shape[1]).double()
        self.auto += phi.t() @ phi
        self.cross += phi.t() @ y
        eye = torch.eye(self.auto.shape[0], dtype=torch.float64)
        self.weight = torch.linalg.solve(self.auto + self.cfg.ridge * eye, self.cross)
        self.n_learned = max(self.n_learned, max(task.classes) + 1)
        progress(1.0, f"{task.name}: ridge solved")

    @torch.no_grad()
    def scores(self, x: Inputs, head: str | None = None) -> torch.Tensor:
        probs = F.softmax(self.scale * x.features @ self.text.t(), dim=1).double()
        if self.n_learned == 0:
            return probs.float()
        adapter = self._phi(x.features) @ self.weight
        adapter[:, self.n_learned :] = 0.0
        mask = probs.argmax(1) < self.n_learned  # zero-shot says: a learned domain
        w = self.cfg.fusion_weight
        probs[mask] = (1 - w) * probs[mask] + w * adapter[mask]
        return probs.float()
