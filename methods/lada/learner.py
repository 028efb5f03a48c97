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
"""

from __future__ import annotations

import copy
import logging
import time

import torch
import torch.nn.functional as F

from core.jobs import JobContext
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
        torch.manual_seed(seed)
        self.gen = torch.Generator().manual_seed(seed)
        self.backbone = copy.deepcopy(stream.backbone).eval().requires_grad_(False)
        self.adapters = TextAdapters(self.backbone, cfg.adapter_bottleneck, cfg.adapter_scale)
        self.scale = float(self.backbone.logit_scale)
        self.classnames = stream.classnames
        with self.adapters.disabled():
            self.zs_text = encode_prompts(self.backbone, cfg.prompt, self.classnames)
        self.text = self.zs_text.clone()  # rows of learned classes are replaced by cached adapted features
        self.seen: list[int] = []
        self.memory = LabelMemory(cfg.beta)
        self.prototypes: dict[int, ClassPrototypes] = {}
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
        feats = x.features
        out = self.scale * feats @ self.zs_text.t()  # unseen classes: zero-shot CLIP
        if self.seen:
            seen = torch.as_tensor(self.seen)
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
        """Augmented prototypes of every old class: (P, d) inputs, targets (seen positions), π weights, class index."""
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
        cfg = self.cfg
        t0 = time.perf_counter()
        feats, labels = task.train.features.detach(), task.y_train
        classes = list(task.classes)
        all_seen = self.seen + classes
        pos = {c: i for i, c in enumerate(all_seen)}
        target = torch.as_tensor([pos[int(c)] for c in labels])
        params = []
        if cfg.use_memory:
            init = torch.stack([kmeans_memory(feats[labels == c], cfg.lambda1, self.seed) for c in classes])
            w = self.memory.add_task(init)
            params.append({"params": [w], "lr": cfg.lr_memory})
        if cfg.train_text_adapter:
            params.append({"params": list(self.adapters.parameters()), "lr": cfg.lr_adapter})
        old_text = self.text[torch.as_tensor(self.seen, dtype=torch.long)] if self.seen else self.text[:0]
        use_old = cfg.prototypes != "none" and bool(self.seen)
        opt = torch.optim.AdamW(params, weight_decay=cfg.weight_decay) if params and cfg.epochs else None
        n, losses = len(labels), []
        steps = max(1, -(-n // cfg.batch_size)) * cfg.epochs
        step = 0
        for _epoch in range(cfg.epochs if opt else 0):
            perm = torch.randperm(n, generator=self.gen)
            for b in range(0, n, cfg.batch_size):
                idx = perm[b : b + cfg.batch_size]
                text = torch.cat([old_text, self._current_text(task.classnames)])
                loss = F.cross_entropy(self._seen_logits(feats[idx], text), target[idx])
                if use_old:
                    px, py, pw, _ = self._old_batch()
                    ce = F.cross_entropy(self._seen_logits(px, text), py, reduction="none") * pw
                    old = ce.sum() if cfg.old_loss_reduction == "sum" else ce.sum() / len(self.seen)
                    loss = loss + old
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                losses.append(loss.item())
                step += 1
                if step % 10 == 0 or step == steps:
                    progress(step / steps, f"{task.name}: step {step}/{steps} loss {losses[-1]:.3f}")
        self.memory.freeze()
        with torch.no_grad():
            self.text[torch.as_tensor(classes)] = self._current_text(task.classnames)
        for c in classes:
            self.prototypes[c] = fit_prototypes(
                feats[labels == c], cfg.lambda2, mode=cfg.prototypes if cfg.prototypes != "none" else "gmm",
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
