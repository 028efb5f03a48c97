"""DPCR as a harness learner: LwF trains the backbone, closed-form arms rebuild the classifier.

One training trajectory (spec §3.1) serves every comparison arm of spec §6, so the arms differ
only in how old-class statistics are treated:

    lwf           plain LwF, predictions of its own (cosine) training head
    ridge_uncal   RRCR on uncalibrated statistics
    tssp          RRCR after W_c = P_t
    dpcr          RRCR after W_c = P_t Π_c   (relative-tolerance Π_c)  ← the method
    dpcr_literal  as dpcr, with the reference's literal s > 0 projector
    dpcr_revive   as dpcr, but units dead for the class under f_{t−1} may revive (optional, not in paper)
    oracle        RRCR on current-backbone features of all seen classes' training data
                  (upper bound; the only arm that keeps old data, also used for diagnostics)
    <arm>_g<γ>    a ridge arm's statistics refit with another γ (optional sweep, ``gamma_sweep_arms``)

Diagnostics per task: the chosen γ, ‖P_t − I‖, mean Π_c rank per arm, tr(R)/d (the data part of the
ridge matrix, the scale γ competes with), and per old class the share of the TSSP-shifted energy
(and prototype energy) that the class projector removes (``cip_energy.<arm>.c<label>``).

After task t (t ≥ 2): P_t from TSSP on this task's augmented data through f_{t−1} and f_t, each
arm calibrates its stored classes, adds the new classes' statistics (clean features of f_t) and
refits; the current task's ridge term comes from the same augmented pass (``current_term``).

The network trains and extracts features on ``device`` (``amp``: bf16 autocast there); features
come back to the CPU as float64, where every closed-form part runs (NumPy).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import torch

from core.device import autocast, resolve_device
from core.jobs import JobContext, null_context
from methods.continual.data import Task
from methods.continual.learner import ContinualLearner
from methods.dpcr.arms import ARM_MODES, StatisticsArm, select_gamma
from methods.dpcr.calibration import tssp_projection
from methods.dpcr.config import DPCRConfig
from methods.dpcr.model import Net, build_net
from methods.dpcr.ridge import CurrentTerm, RidgeClassifier, joint_ridge, ridge_solution
from methods.dpcr.train import extract_features, frozen_copy, random_shift, train_task

log = logging.getLogger(__name__)


class DPCRLearner(ContinualLearner):
    """Exemplar-free class-incremental learner with every DPCR comparison arm as a head."""

    def __init__(
        self,
        cfg: DPCRConfig,
        *,
        seed: int,
        input_shape: tuple[int, ...] = (1, 8, 8),
        device: Any = "cpu",
        amp: str = "off",
    ) -> None:
        self.cfg = cfg
        self.seed = seed
        self.device = resolve_device(device)
        self.amp = amp
        torch.manual_seed(seed)  # the network is initialised on the CPU: the same start on every device
        self.net: Net = build_net(cfg.channels, cfg.head, cfg.cosine_scale_init, in_channels=input_shape[0])
        self.net.to(self.device)
        self.generator = torch.Generator().manual_seed(seed)  # training: shuffling + augmentation
        # separate stream for the closed-form passes, so the training trajectory does not depend on them
        self.pass_generator = torch.Generator().manual_seed(seed + 7919)
        self.sweep = {
            f"{a}_g{g:g}": (a, float(g))
            for a in (cfg.gamma_sweep_arms if cfg.gamma_sweep else ())
            for g in cfg.gamma_sweep
        }
        self.sweep_classifiers: dict[str, RidgeClassifier] = {}
        self.heads = tuple(cfg.arms) + tuple(self.sweep)
        self.arms = {a: StatisticsArm.create(a) for a in cfg.arms if a in ARM_MODES}
        self.keep_data = "oracle" in cfg.arms
        self._seen: list[tuple[np.ndarray, np.ndarray]] = []  # oracle/diagnostics only
        self.oracle: RidgeClassifier | None = None
        self.gamma: float | None = cfg.gamma
        self.gamma_scores: dict[float, tuple[float, float]] = {}
        self.last_projection: np.ndarray | None = None
        self.n_seen = 0
        self.n_tasks = 0
        self._diag: dict[str, float] = {}
        self._cache: tuple[np.ndarray, int, np.ndarray] | None = None

    # --- learning ------------------------------------------------------------------------
    def learn_task(self, task: Task, progress: JobContext | None = None) -> None:
        progress = progress or null_context()
        cfg = self.cfg
        n_old, classes = self.n_seen, task.classes
        if list(classes) != list(range(n_old, n_old + len(classes))):
            raise ValueError(f"task classes {classes} must continue the label range at {n_old}")
        diag: dict[str, float] = {}
        old_net = frozen_copy(self.net) if self.n_tasks > 0 else None
        self.net.head.add_classes(len(classes))
        self.net.to(self.device)  # a head that had no rows yet grew them on the CPU
        t0 = time.perf_counter()
        losses = train_task(
            self.net,
            task.x_train,
            task.y_train,
            n_old=n_old,
            cfg=cfg,
            old_net=old_net,
            generator=self.generator,
            progress=progress.sub(0.0, 0.9),
            amp=self.amp,
        )
        diag.update({"train_seconds": time.perf_counter() - t0, "ce": losses["ce"], "kd": losses["kd"]})
        backbone = self.net.backbone
        feats = extract_features(backbone, task.x_train, batch=cfg.feature_batch, amp=self.amp)

        if self.gamma is None:
            self.gamma, self.gamma_scores = select_gamma(
                feats,
                task.y_train,
                cfg.gamma_grid,
                holdout=cfg.gamma_holdout,
                seed=self.seed,
                count_constant=cfg.count_constant,
            )
        diag["gamma"] = float(self.gamma)

        olds, news = self._augmented_passes(old_net, backbone, task.x_train)
        if old_net is not None and self.arms:
            P = tssp_projection(np.concatenate(olds), np.concatenate(news), cfg.gamma_p)
            self.last_projection = P
            diag["tssp_dev"] = float(np.linalg.norm(P - np.eye(P.shape[0])) / np.sqrt(P.shape[0]))
            for name, arm in self.arms.items():
                removed = arm.shift(P)
                if name in ("tssp", "ridge_uncal"):
                    continue
                for c, (energy, proto, dead) in removed.items():
                    diag[f"cip_energy.{name}.c{c}"] = energy
                    diag[f"cip_proto.{name}.c{c}"] = proto
                    diag[f"dead_units.{name}.c{c}"] = float(dead)
                if removed:
                    diag[f"cip_energy.{name}"] = float(np.mean([v[0] for v in removed.values()]))
                    diag[f"cip_proto.{name}"] = float(np.mean([v[1] for v in removed.values()]))
        current = None
        if cfg.current_term == "augmented":
            terms = [CurrentTerm.from_features(f, task.y_train, classes) for f in news]
            current = CurrentTerm(
                gram=sum(t.gram for t in terms) / len(terms),
                cross=sum(t.cross for t in terms) / len(terms),
                labels=tuple(classes),
            )
        progress(0.95, "closed-form calibration and ridge")
        for name, arm in self.arms.items():
            arm.add(feats, task.y_train)
            arm.refit(self.gamma, cfg.count_constant, current)
            diag[f"rank.{name}"] = float(np.mean([s.rank for s in arm.memory.classes.values()]))
            diag[f"gram_scale.{name}"] = float(_data_trace(arm.memory, current) / feats.shape[1])
        for name, (a, g) in self.sweep.items():
            self.sweep_classifiers[name] = RidgeClassifier.from_solution(
                ridge_solution(self.arms[a].memory, g, count_constant=cfg.count_constant, current=current)
            )

        if self.keep_data:
            self._seen.append((task.x_train, task.y_train))
            x_all = np.concatenate([x for x, _ in self._seen])
            y_all = np.concatenate([y for _, y in self._seen])
            f_all = extract_features(backbone, x_all, batch=cfg.feature_batch, amp=self.amp)
            self.oracle = RidgeClassifier.from_solution(joint_ridge(f_all, y_all, self.gamma, n_old + len(classes)))
            diag.update(self._shift_errors(f_all, y_all, n_old))

        self.n_seen = n_old + len(classes)
        self.n_tasks += 1
        self._cache = None
        self._diag = diag
        progress(1.0, f"task {self.n_tasks} learned")

    def _augmented_passes(
        self, old_net: Net | None, backbone: torch.nn.Module, x: np.ndarray
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """``tssp_passes`` randomly shifted copies of the task's data through f_{t−1} (if any) and f_t."""
        xt = torch.as_tensor(x, dtype=torch.float32)
        olds, news = [], []
        for _ in range(self.cfg.tssp_passes):
            xa = random_shift(xt, self.cfg.augment_shift, self.pass_generator)
            if old_net is not None:
                olds.append(extract_features(old_net.backbone, xa, batch=self.cfg.feature_batch, amp=self.amp))
            news.append(extract_features(backbone, xa, batch=self.cfg.feature_batch, amp=self.amp))
        return olds, news

    def _shift_errors(self, f_all: np.ndarray, y_all: np.ndarray, n_old: int) -> dict[str, float]:
        """Mean ‖μ̂_c − μ_c^true‖ (and relative to ‖μ_c^true‖) over old classes, per arm (diagnostic)."""
        if n_old == 0:
            return {}
        true = {c: f_all[y_all == c].mean(axis=0) for c in range(n_old)}
        out = {}
        for name, arm in self.arms.items():
            protos = arm.prototypes()
            err = [np.linalg.norm(protos[c] - true[c]) for c in range(n_old)]
            rel = [e / max(np.linalg.norm(true[c]), 1e-12) for c, e in zip(range(n_old), err)]
            out[f"shift_err.{name}"] = float(np.mean(err))
            out[f"shift_rel.{name}"] = float(np.mean(rel))
        return out

    # --- prediction ----------------------------------------------------------------------
    def _features(self, x: np.ndarray) -> np.ndarray:
        """Backbone features of ``x``, reused while the harness asks every head about the same array."""
        if self._cache is not None and self._cache[0] is x and self._cache[1] == self.n_tasks:
            return self._cache[2]
        feats = extract_features(self.net.backbone, x, batch=self.cfg.feature_batch, amp=self.amp)
        self._cache = (x, self.n_tasks, feats)
        return feats

    @torch.no_grad()
    def predict(self, x: np.ndarray, head: str | None = None) -> np.ndarray:
        head = head or self.heads[0]
        if head not in self.heads:
            raise KeyError(f"unknown head {head!r}; available: {self.heads}")
        if self.n_seen == 0:
            raise RuntimeError("predict() before any task was learned")
        if head == "lwf":
            self.net.eval()
            xt = torch.as_tensor(x, dtype=torch.float32)
            bs = self.cfg.feature_batch
            with autocast(self.device, self.amp):
                logits = torch.cat([self.net(xt[i : i + bs].to(self.device)) for i in range(0, len(xt), bs)])
            return logits[:, : self.n_seen].argmax(dim=1).cpu().numpy()
        feats = self._features(x)
        if head == "oracle":
            clf = self.oracle
        elif head in self.sweep:
            clf = self.sweep_classifiers[head]
        else:
            clf = self.arms[head].classifier
        return clf.predict(feats)

    def diagnostics(self) -> dict[str, float]:
        return dict(self._diag)


def _data_trace(memory, current: CurrentTerm | None) -> float:
    """tr of the data part of R (Σ_c Σ_c with the current term replacing its classes), as in ridge_solution."""
    replaced = set(current.labels) if current is not None else set()
    tr = sum(float(np.trace(st.gram)) for c, st in memory.classes.items() if c not in replaced)
    return tr + (float(np.trace(current.gram)) if current is not None else 0.0)
