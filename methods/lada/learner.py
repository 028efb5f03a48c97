"""The LADA learner on the X-TAIL harness (spec §3.1–§3.4).

Per task k (classes C^k, cached frozen image features):

1. W^k_j ← k-means(λ1) of class j's normalised features (unit rows); W^{<k} frozen.
2. Train W^k and the shared text adapters with AdamW on
   CE(s·⟨i, t⟩ + LADA(i) over all seen classes C_L) for the current real samples (Eqs. 3, 7)
   plus, for every old class, Σ_l π_l·CE(logits(p̃_l), class) on its augmented GMM prototypes
   (Eqs. 4, 8, 10); old text features are cached constants, current ones go through the adapters.
3. Cache t^k_j = f_T(prompt) with the trained adapters (never recomputed later) and fit the
   class GMMs (λ2 components) on the task's features (only π, p, Tr Σ are kept; no images).

Inference over the union label space, no task id: seen class c scores s·⟨i, t_c⟩ + α·LADA_c(i),
unseen class c scores s·⟨i, t^zs_c⟩ with the zero-shot (un-adapted) text feature.
The image encoder is never run with gradients: everything trains on cached features.

Training is :func:`core.train.fit` (AdamW, one group per trained part, constant learning rates,
no clipping) on the stream's device and ``amp``: the backbone copy, the adapters, the memory and
the cached text features live there; the shuffles and the prototype noise are drawn on the CPU
from the learner's seeded generator (the same draws on every device) and moved with each batch;
k-means and the GMMs run on a CPU copy of the features (scikit-learn). On the CPU the losses and
weights are bit-identical to the loop this learner had before (tests/methods/lada/test_golden_loops.py).
"""

from __future__ import annotations

import copy
import logging
import time

import torch
import torch.nn.functional as F
from torch import nn

from core.jobs import JobContext
from core.train import constant_lr, fit
from methods.continual.xtail import Inputs, XTailLearner, XTailStream, XTailTask
from methods.lada.adapter import TextAdapters
from methods.lada.config import LadaConfig
from methods.lada.memory import ClassPrototypes, LabelMemory, augment, fit_prototypes, kmeans_memory

log = logging.getLogger(__name__)


@torch.no_grad()
def encode_prompts(backbone, prompt: str, names) -> torch.Tensor:
    return backbone.encode_text(backbone.tokenize([prompt.format(n.replace("_", " ")) for n in names]))


class LadaLearner(XTailLearner):
    """LADA and its ablations (BF, BF + DPT, no old-task loss) as one configurable learner."""

    heads = ("lada", "text")

    def __init__(self, cfg: LadaConfig, *, seed: int, stream: XTailStream):
        if stream.backbone is None:
            raise ValueError("LADA needs the stream's frozen backbone (an X-TAIL stream on methods.vlm)")
        self.cfg = cfg
        self.seed = seed
        self.device, self.amp = stream.device, stream.amp
        torch.manual_seed(seed)
        self.gen = torch.Generator().manual_seed(seed)  # CPU draws: the same shuffles and noise on every device
        self.backbone = copy.deepcopy(stream.backbone).eval().requires_grad_(False).to(self.device)
        # initialised on the CPU (the global generator), then moved: the same adapters on every device
        self.adapters = TextAdapters(self.backbone, cfg.adapter_bottleneck, cfg.adapter_scale).to(self.device)
        self.scale = float(self.backbone.logit_scale)
        self.classnames = stream.classnames
        with self.adapters.disabled():
            self.zs_text = encode_prompts(self.backbone, cfg.prompt, self.classnames)
        self.text = self.zs_text.clone()  # rows of learned classes are replaced by cached adapted features
        self.seen: list[int] = []
        self.memory = LabelMemory(cfg.beta)
        self.prototypes: dict[int, ClassPrototypes] = {}  # on the CPU (fitted by scikit-learn)
        self.task_losses: list[list[float]] = []  # per task, the loss of every training step
        self._diag: dict[str, float] = {}
        self._alphas = {"lada": cfg.alpha, "text": 0.0} | {f"alpha={a:g}": float(a) for a in cfg.alpha_sweep}
        self.heads = tuple(self._alphas)

    # --- scoring ---------------------------------------------------------------
    def _seen_logits(self, feats: torch.Tensor, text: torch.Tensor, *, alpha: float = 1.0) -> torch.Tensor:
        logits = self.scale * feats @ text.t()
        if self.cfg.use_memory and len(self.memory.blocks):
            logits = logits + alpha * self.memory(feats)
        return logits

    @torch.no_grad()
    def scores(self, x: Inputs, head: str | None = None) -> torch.Tensor:
        head = head or self.heads[0]
        if head not in self.heads:
            raise ValueError(f"unknown head {head!r}; LADA has {self.heads}")
        feats = x.features.to(self.device)
        out = self.scale * feats @ self.zs_text.t()  # unseen classes: zero-shot CLIP
        if self.seen:
            seen = torch.as_tensor(self.seen, device=out.device)
            alpha = self._alphas[head]
            out[:, seen] = self._seen_logits(feats, self.text[seen], alpha=alpha)
        return out

    def lada_logits(self, feats: torch.Tensor) -> torch.Tensor:
        """(n, |C_L|) LADA scores of the learned labels (in learning order)."""
        return self.memory(feats)

    # --- training --------------------------------------------------------------
    def _current_text(self, names) -> torch.Tensor:
        prompts = [self.cfg.prompt.format(n.replace("_", " ")) for n in names]
        return self.backbone.encode_text(self.backbone.tokenize(prompts))

    def _old_batch(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Augmented prototypes of every old class: (P, d) inputs, targets (seen positions), π weights, class index.

        Drawn on the CPU from the learner's generator (the batch is moved to the device by ``fit``).
        """
        xs, ys, ws, cs = [], [], [], []
        for pos, c in enumerate(self.seen):
            p = self.prototypes[c]
            if self.cfg.prototypes == "gmm":
                xs.append(augment(p, self.gen, normalize=self.cfg.renormalize_prototypes))
            else:
                xs.append(p.means)
            ys.append(torch.full((len(p.weights),), pos))
            ws.append(p.weights)
            cs.append(torch.full((len(p.weights),), pos))
        return torch.cat(xs), torch.cat(ys), torch.cat(ws), torch.cat(cs)

    def learn_task(self, task: XTailTask, progress: JobContext) -> None:
        cfg, dev = self.cfg, self.device
        t0 = time.perf_counter()
        feats = task.train.features.detach().to(dev)
        feats_cpu = feats.cpu()  # k-means and the GMMs are scikit-learn's
        labels = task.y_train.cpu()
        classes = list(task.classes)
        all_seen = self.seen + classes
        pos = {c: i for i, c in enumerate(all_seen)}
        target = torch.as_tensor([pos[int(c)] for c in labels]).to(dev)
        params = []
        if cfg.use_memory:
            init = torch.stack([kmeans_memory(feats_cpu[labels == c], cfg.lambda1, self.seed) for c in classes])
            w = self.memory.add_task(init.to(dev))
            params.append({"params": [w], "lr": cfg.lr_memory})
        if cfg.train_text_adapter:
            params.append({"params": list(self.adapters.parameters()), "lr": cfg.lr_adapter})
        seen_idx = torch.as_tensor(self.seen, dtype=torch.long, device=dev)
        old_text = self.text[seen_idx] if self.seen else self.text[:0]
        use_old = cfg.prototypes != "none" and bool(self.seen)
        n, losses = len(labels), []
        per_epoch = max(1, -(-n // cfg.batch_size))
        if params and cfg.epochs:
            perm = torch.empty(0, dtype=torch.long)

            def batch(step: int):
                # per epoch a CPU shuffle, per step the old classes' augmented prototypes (same draws, same order
                # as the loop this replaced: shuffle, then one augmentation per batch)
                nonlocal perm
                j = step % per_epoch
                if j == 0:
                    perm = torch.randperm(n, generator=self.gen)
                idx = perm[j * cfg.batch_size : (j + 1) * cfg.batch_size]
                return idx, (self._old_batch()[:3] if use_old else None)

            def loss_fn(_parts, b) -> torch.Tensor:
                idx, old = b
                text = torch.cat([old_text, self._current_text(task.classnames)])
                loss = F.cross_entropy(self._seen_logits(feats[idx], text), target[idx])
                if old is not None:
                    px, py, pw = old
                    ce = F.cross_entropy(self._seen_logits(px, text), py, reduction="none") * pw
                    loss = loss + (ce.sum() if cfg.old_loss_reduction == "sum" else ce.sum() / len(self.seen))
                return loss

            losses = fit(
                nn.ModuleDict({"memory": self.memory, "adapters": self.adapters}),
                batch,
                loss_fn,
                steps=per_epoch * cfg.epochs,
                lr=cfg.lr_memory,
                weight_decay=cfg.weight_decay,
                clip=None,
                schedule=constant_lr,
                param_groups=params,
                device=dev,
                amp=self.amp,
                sync_every=10,
                progress=progress,
                message=f"{task.name}: step",
            )
        self.task_losses.append(losses)
        self.memory.freeze()
        with torch.no_grad():
            self.text[torch.as_tensor(classes, device=dev)] = self._current_text(task.classnames)
        for c in classes:
            self.prototypes[c] = fit_prototypes(
                feats_cpu[labels == c], cfg.lambda2, mode=cfg.prototypes if cfg.prototypes != "none" else "gmm",
                covariance=cfg.gmm_covariance, seed=self.seed,
            )  # fmt: skip
        self.seen = all_seen
        self._diag = {
            "loss_first": losses[0] if losses else float("nan"),
            "loss_last": losses[-1] if losses else float("nan"),
            "phi_dim": float(self.phi_dim),
            "seen_classes": float(len(self.seen)),
            "seconds": time.perf_counter() - t0,
        }

    @property
    def phi_dim(self) -> int:
        return sum(int(b.shape[0] * b.shape[1]) for b in self.memory.blocks)

    def diagnostics(self) -> dict[str, float]:
        return dict(self._diag)
