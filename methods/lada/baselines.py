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

Every learner computes on the stream's device (:attr:`XTailStream.device`); fine-tuning trains
through :func:`core.train.fit` (bit-identical on the CPU to the loop it had before), with the
shuffles drawn on the CPU from the learner's seeded generator; RAIL's random expansion is drawn
on the CPU and moved.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from core.jobs import JobContext
from core.train import constant_lr, fit
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
        return self.scale * x.features.to(self.text.device) @ self.text.t()


class FinetuneLearner(XTailLearner):
    heads = ("finetune",)

    def __init__(self, cfg: FinetuneConfig, *, seed: int, stream: XTailStream):
        _need_backbone(stream)
        self.cfg = cfg
        self.device, self.amp = stream.device, stream.amp
        torch.manual_seed(seed)
        self.gen = torch.Generator().manual_seed(seed)  # CPU shuffles: the same batches on every device
        self.model = copy.deepcopy(stream.backbone).to(self.device)
        for name, p in self.model.named_parameters():
            # the tiny CLIP's MiniLM token table is frozen by construction; everything else trains
            p.requires_grad_("token_embedding" not in name or p.requires_grad)
        self.scale = float(stream.backbone.logit_scale)
        self.prompts = [cfg.prompt.format(n.replace("_", " ")) for n in stream.classnames]
        self.seen: list[int] = []
        self.task_losses: list[list[float]] = []  # per task, the loss of every training step
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
        target = torch.as_tensor([pos[int(c)] for c in task.y_train.tolist()])
        images = task.train.images
        n = len(target)
        per_epoch, losses = max(1, -(-n // cfg.batch_size)), []
        if cfg.epochs:
            perm = torch.empty(0, dtype=torch.long)

            def batch(step: int):
                nonlocal perm
                j = step % per_epoch
                if j == 0:
                    perm = torch.randperm(n, generator=self.gen)
                idx = perm[j * cfg.batch_size : (j + 1) * cfg.batch_size]
                return images[idx], target[idx]

            def loss_fn(model, b) -> torch.Tensor:
                x, y = b
                logits = self.scale * model.encode_image(x) @ self._text(seen).t()
                loss = F.cross_entropy(logits, y)
                if old_model is not None:
                    T = cfg.kd_temperature
                    with torch.no_grad():
                        old_logits = (
                            self.scale
                            * old_model.encode_image(x)
                            @ old_model.encode_text(old_model.tokenize([self.prompts[c] for c in old_seen])).t()
                        )
                    kd = F.kl_div(
                        F.log_softmax(logits[:, : len(old_seen)] / T, dim=1),
                        F.softmax(old_logits / T, dim=1),
                        reduction="batchmean",
                    )
                    loss = loss + cfg.kd_lambda * kd * T * T
                return loss

            losses = fit(
                self.model,
                batch,
                loss_fn,
                steps=per_epoch * cfg.epochs,
                lr=cfg.lr,
                weight_decay=cfg.weight_decay,
                clip=None,
                schedule=constant_lr,
                device=self.device,
                amp=self.amp,
                sync_every=10,
                progress=progress,
                message=f"{task.name}: step",
            )
        self.task_losses.append(losses)
        self.model.eval()
        self.seen = seen
        self._diag = {"loss_last": losses[-1] if losses else float("nan"), "seen_classes": float(len(seen))}

    @torch.no_grad()
    def scores(self, x: Inputs, head: str | None = None) -> torch.Tensor:
        if self._text_cache is None:
            self._text_cache = self._text(range(len(self.prompts)))
        feats = torch.cat(
            [self.model.encode_image(x.images[i : i + 512]) for i in range(0, len(x), 512)]
        )  # on the model's device
        return self.scale * feats @ self._text_cache.t()

    def diagnostics(self) -> dict[str, float]:
        return dict(self._diag)


class RailLearner(XTailLearner):
    heads = ("rail",)

    def __init__(self, cfg: RailConfig, *, seed: int, stream: XTailStream):
        _need_backbone(stream)
        self.cfg = cfg
        dev = self.device = stream.device
        g = torch.Generator().manual_seed(seed)
        d = int(stream.tasks[0].train.features.shape[1])
        bound = 1.0 / d**0.5  # nn.Linear's default init, as RAIL's expansion layer
        self.expand = ((torch.rand(d, cfg.hidden_dim, generator=g, dtype=torch.float64) * 2 - 1) * bound).to(dev)
        self.scale = float(stream.backbone.logit_scale)
        self.text = encode_prompts(stream.backbone.eval(), cfg.prompt, stream.classnames)
        C = stream.n_classes
        self.auto = torch.zeros(cfg.hidden_dim, cfg.hidden_dim, dtype=torch.float64, device=dev)
        self.cross = torch.zeros(cfg.hidden_dim, C, dtype=torch.float64, device=dev)
        self.weight = torch.zeros(cfg.hidden_dim, C, dtype=torch.float64, device=dev)
        self.n_learned = 0

    def _phi(self, feats: torch.Tensor) -> torch.Tensor:
        return torch.relu(feats.to(self.device).double() @ self.expand)

    def learn_task(self, task: XTailTask, progress: JobContext) -> None:
        phi = self._phi(task.train.features)
        y = F.one_hot(task.y_train.to(self.device), self.cross.shape[1]).double()
        self.auto += phi.t() @ phi
        self.cross += phi.t() @ y
        eye = torch.eye(self.auto.shape[0], dtype=torch.float64, device=self.device)
        self.weight = torch.linalg.solve(self.auto + self.cfg.ridge * eye, self.cross)
        self.n_learned = max(self.n_learned, max(task.classes) + 1)
        progress(1.0, f"{task.name}: ridge solved")

    @torch.no_grad()
    def scores(self, x: Inputs, head: str | None = None) -> torch.Tensor:
        probs = F.softmax(self.scale * x.features.to(self.device) @ self.text.t(), dim=1).double()
        if self.n_learned == 0:
            return probs.float()
        adapter = self._phi(x.features) @ self.weight
        adapter[:, self.n_learned :] = 0.0
        mask = probs.argmax(1) < self.n_learned  # zero-shot says: a learned domain
        w = self.cfg.fusion_weight
        probs[mask] = (1 - w) * probs[mask] + w * adapter[mask]
        return probs.float()
