"""The CPU experiment of spec §6: selection statistics, gold NLL per arm, accuracy and the theory check.

Per dataset:

1. index the pool once for every representation mode and layer (two forward
   passes per item cover all six; cached in Chroma);
2. encode the queries and measure, per mode × layer × orientation, how
   query-dependent the selection is and how often LMS3 rejects;
3. score the gold solution's NLL under every arm's prompt (reference mode,
   reference orientation, plus LMS3 with the attention orientation);
4. decode a small subset greedily for accuracy;
5. theory check: per query, random one-shot demos, Spearman ρ between each demo's
   gold NLL and its Sim, Stab, Score and cosine distance.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from core.device import autocast
from core.jobs import JobContext
from core.llm import get_local_model, model_hash
from core.vectorstore import VectorStore
from methods.lms3.accuracy import extract_gsm8k, extract_mawps, greedy_complete, is_correct
from methods.lms3.analysis import distinct, share_explained_by_norm, spearman
from methods.lms3.cache import ResultCache
from methods.lms3.config import LAYERS, MODES, ORIENTATIONS, ExperimentConfig, SelectionConfig
from methods.lms3.data import PoolSpec, Problem, load_split, query_subset
from methods.lms3.nll import gold_nll
from methods.lms3.pool import DemoPool, index_pool, load_pool
from methods.lms3.projections import attention_projections
from methods.lms3.prompts import build_prompt
from methods.lms3.representation import Encoder
from methods.lms3.results import ACC_ARMS, EXTRA_ARMS, MAIN_KEY, NLL_ARMS, THEORY_SCORES, DatasetResult
from methods.lms3.scores import (
    NORMALIZATIONS,
    cosine_distance,
    lms3_select,
    normalized_inputs,
    rejection_lambda,
    similarity,
)
from methods.lms3.selection import local_model_on
from methods.lms3.selectors import Selector

log = logging.getLogger(__name__)


class Experiment:
    """Runs :class:`ExperimentConfig` on the local model with a Chroma store and a result cache."""

    def __init__(
        self,
        cfg: ExperimentConfig,
        *,
        store: VectorStore,
        model_name: str | None = None,
        cache: ResultCache | None = None,
        device: Any = "cpu",
        amp: str = "off",
    ) -> None:
        self.cfg = cfg
        self.store = store
        lm = get_local_model(model_name)
        self.model, self.tok = local_model_on(model_name, device), lm.tokenizer  # representations, NLL, decoding
        self.amp, self.device = amp, next(self.model.parameters()).device
        self.hash = model_hash(model_name) + ("-bf16" if amp == "bf16" else "")  # pools and cached results
        self.encoder = Encoder(self.model, self.tok, batch_size=cfg.batch_size, amp=amp)
        self.proj = attention_projections(lm.model)  # from the CPU weights
        self.cache = cache if cache is not None else ResultCache(None)  # an empty cache is falsy
        self.keys = [(m, layer) for m in MODES for layer in LAYERS]
        self.counts = {"nll_scored": 0, "nll_reused": 0, "decoded": 0, "decode_reused": 0}

    # --- helpers -------------------------------------------------------------------
    def _sub(self, pool: DemoPool, q: Problem, memo: dict[str, DemoPool]) -> DemoPool:
        if q.dataset != "math":
            return pool
        if q.subject not in memo:
            memo[q.subject] = pool.restrict(q.subject)
        return memo[q.subject]

    def _nll(self, pairs: list[tuple[str, str]], progress: JobContext | None = None) -> list[float]:
        """Mean gold NLL per (prompt, gold), cached; unique pairs are scored once."""
        keys = [ResultCache.key("nll", self.hash, p, g) for p, g in pairs]
        todo = {k: pg for k, pg in zip(keys, pairs) if self.cache.get(k) is None}
        items = list(todo.items())
        self.counts["nll_scored"] += len(items)
        self.counts["nll_reused"] += len(set(keys)) - len(items)
        step = max(1, self.cfg.batch_size)
        for b0 in range(0, len(items), step):
            chunk = items[b0 : b0 + step]
            with autocast(self.device, self.amp):
                res = gold_nll(
                    self.model,
                    self.tok,
                    [pg[0] for _, pg in chunk],
                    [pg[1] for _, pg in chunk],
                    batch_size=max(1, self.cfg.batch_size // 2),
                )
            for (k, _), r in zip(chunk, res):
                self.cache.put(k, r.mean)
            if progress is not None:
                progress(min(b0 + step, len(items)) / len(items), f"gold NLL {min(b0 + step, len(items))}/{len(items)}")
        return [float(self.cache.get(k)) for k in keys]

    def _decode(self, prompt: str, max_new: int) -> str:
        k = ResultCache.key("gen", self.hash, str(max_new), prompt)
        hit = self.cache.get(k)
        if hit is None:
            with autocast(self.device, self.amp):
                hit = greedy_complete(self.model, self.tok, prompt, max_new)
            self.cache.put(k, hit)
            self.counts["decoded"] += 1
        else:
            self.counts["decode_reused"] += 1
        return hit

    # --- phases --------------------------------------------------------------------
    def run_dataset(self, name: str, progress: JobContext) -> DatasetResult:
        sizes = self.cfg.sizes[name]
        sel_cfg = self.cfg.selection
        if sizes.min_lambda is not None:
            sel_cfg = replace(sel_cfg, min_lambda=sizes.min_lambda)
        keys = self.keys if sizes.all_modes else [MAIN_KEY]
        t0 = time.perf_counter()
        spec = PoolSpec(name, sizes.pool, self.cfg.seed)
        problems = spec.problems()
        index_pool(
            problems,
            spec.name,
            store=self.store,
            encoder=self.encoder,
            projections=self.proj,
            model_hash=self.hash,
            keys=keys,
            progress=progress.sub(0.0, 0.35),
        )
        pools = {k: load_pool(spec.name, k, store=self.store, model_hash=self.hash) for k in keys}

        queries = query_subset(load_split(name, "queries"), sizes.queries)
        progress.sub(0.35, 0.4)(0.0, f"{name}: encoding {len(queries)} queries")
        xq = self.encoder.encode([q.text for q in queries], keys)
        main = pools[MAIN_KEY]
        memo_main: dict[str, DemoPool] = {}
        lambdas = {
            q.subject: rejection_lambda(len(self._sub(main, q, memo_main)), sel_cfg.l, sel_cfg.min_lambda)
            for q in queries
        }
        res = DatasetResult(name, spec.name, len(problems), lambdas, len(queries), min_lambda=sel_cfg.min_lambda)
        res.selection_stats = self._selection_stats(pools, queries, xq, sel_cfg)
        res.norm_stats = self._norm_stats(main, queries, xq[MAIN_KEY], sel_cfg)
        res.seconds["index_and_encode"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        self._arms_nll(
            res,
            main,
            queries,
            _head(queries, sizes.nll_queries),
            xq[MAIN_KEY],
            sel_cfg,
            memo_main,
            progress.sub(0.4, 0.75),
        )
        res.seconds["nll"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        if sizes.acc_queries and sizes.max_new_tokens:
            self._accuracy(
                res,
                main,
                queries,
                _head(queries, sizes.acc_queries),
                xq[MAIN_KEY],
                sel_cfg,
                memo_main,
                sizes.max_new_tokens,
                progress.sub(0.75, 0.85),
            )
        res.seconds["accuracy"] = time.perf_counter() - t2
        t3 = time.perf_counter()
        self._theory(
            res,
            main,
            queries,
            _head(queries, sizes.theory_queries, spread=True),
            xq[MAIN_KEY],
            sizes.theory_demos,
            memo_main,
            progress.sub(0.85, 1.0),
        )
        res.seconds["theory"] = time.perf_counter() - t3
        return res

    def _selection_stats(
        self, pools: dict, queries: list[Problem], xq: dict, sel_cfg: SelectionConfig
    ) -> list[dict[str, Any]]:
        rows = []
        for key in pools:
            memo: dict[str, DemoPool] = {}
            for o in ORIENTATIONS:
                top_score, top_sim, top_cos, chosen, shares, ratios = [], [], [], [], [], []
                same_as_stab, stab_var_share = 0, []
                rejected = rejected_ref = 0
                for j, q in enumerate(queries):
                    sub = self._sub(pools[key], q, memo)
                    x = xq[key][j]
                    c = lms3_select(x, sub.p[o], sub.stab, k=1, l=sel_cfg.l, min_lambda=sel_cfg.min_lambda)
                    gidx = sub.indices
                    top_score.append(gidx[c.score_top].tolist())
                    top_sim.append([int(gidx[int(np.argmin(c.sim))])])
                    top_cos.append([int(gidx[int(np.argmin(cosine_distance(x, sub.x)))])])
                    chosen.append(gidx[c.chosen].tolist())
                    rejected += int(c.rejected)
                    lam0 = rejection_lambda(len(sub), sel_cfg.l, 0, warn=False)
                    rejected_ref += int(
                        not set(c.score_top.tolist()) & set(np.argsort(c.sim, kind="stable")[:lam0].tolist())
                    )
                    same_as_stab += int(int(c.score_top[0]) == int(np.argmin(sub.stab)))
                    var_score = float(np.var(np.log(c.score)))
                    stab_var_share.append(
                        float(np.var(np.log(sub.stab))) / var_score if var_score > 0 else float("nan")
                    )
                    pn = np.linalg.norm(sub.p[o], axis=1)
                    shares.append(share_explained_by_norm(c.sim[None, :], pn))
                    ratios.append(float(np.median(pn) / (np.linalg.norm(x) + 1e-12)))
                rows.append(
                    {
                        "mode": key[0],
                        "layer": key[1],
                        "orientation": o,
                        "queries": len(queries),
                        "distinct_score_top1": distinct(top_score),
                        "distinct_sim_top1": distinct(top_sim),
                        "distinct_cosine_top1": distinct(top_cos),
                        "distinct_lms3": distinct(chosen),
                        "rejection_rate": rejected / max(1, len(queries)),
                        "rejection_rate_min_lambda0": rejected_ref / max(1, len(queries)),
                        "share_explained_by_norm": float(np.nanmean(shares)),
                        "score_top1_is_stab_top1": same_as_stab / max(1, len(queries)),
                        "stab_share_of_log_score_var": float(np.nanmean(stab_var_share)),
                        "median_norm_ratio": float(np.median(ratios)),
                    }
                )
        return rows

    def _norm_stats(
        self, pool: DemoPool, queries: list[Problem], xq: np.ndarray, sel_cfg: SelectionConfig
    ) -> list[dict[str, Any]]:
        """Query dependence of the reference Sim vs the pool-norm-free variants (main key, P = W̃_K W_Q)."""
        rows = []
        for norm in NORMALIZATIONS:
            memo: dict[str, DemoPool] = {}
            top_score, top_sim, chosen, shares = [], [], [], []
            rejected = 0
            for j, q in enumerate(queries):
                sub = self._sub(pool, q, memo)
                c = lms3_select(
                    xq[j],
                    sub.p["reference"],
                    sub.stab,
                    k=1,
                    l=sel_cfg.l,
                    min_lambda=sel_cfg.min_lambda,
                    normalize=norm,
                )
                gidx = sub.indices
                top_score.append(gidx[c.score_top].tolist())
                top_sim.append([int(gidx[int(np.argmin(c.sim))])])
                chosen.append(gidx[c.chosen].tolist())
                rejected += int(c.rejected)
                shares.append(share_explained_by_norm(c.sim[None, :], np.linalg.norm(sub.p["reference"], axis=1)))
            rows.append(
                {
                    "normalize": norm,
                    "queries": len(queries),
                    "distinct_score_top1": distinct(top_score),
                    "distinct_sim_top1": distinct(top_sim),
                    "distinct_lms3": distinct(chosen),
                    "rejection_rate": rejected / max(1, len(queries)),
                    "share_explained_by_norm": float(np.nanmean(shares)),
                }
            )
        return rows

    def _arm_prompts(
        self,
        arm: str,
        pool: DemoPool,
        queries: list[Problem],
        idx: list[int],
        xq: np.ndarray,
        sel_cfg: SelectionConfig,
        memo: dict[str, DemoPool],
    ) -> tuple[list[str], list[bool]]:
        base_arm, orient, norm = EXTRA_ARMS.get(arm, (arm, "reference", "none"))
        selector = Selector(base_arm, sel_cfg, orientation=orient, seed=self.cfg.seed, normalize=norm)
        prompts, used = [], []
        for j in idx:
            q = queries[j]
            sub = self._sub(pool, q, memo)
            s = selector.select(xq[j], sub, query_key=q.index)
            prompts.append(build_prompt(q.text, [sub.demo(i) for i in s.chosen]))
            used.append(bool(s.chosen))
        return prompts, used

    def _arms_nll(
        self,
        res: DatasetResult,
        pool: DemoPool,
        queries: list[Problem],
        idx: list[int],
        xq: np.ndarray,
        sel_cfg: SelectionConfig,
        memo: dict,
        progress: JobContext,
    ) -> None:
        pairs, owners = [], []
        for arm in NLL_ARMS:
            prompts, used = self._arm_prompts(arm, pool, queries, idx, xq, sel_cfg, memo)
            res.with_demo[arm] = used
            pairs += [(p, queries[j].answer) for p, j in zip(prompts, idx)]
            owners += [arm] * len(prompts)
            if arm == "lms3" and idx:
                res.examples.append({"query": queries[idx[0]].text, "prompt": prompts[0]})
        values = self._nll(pairs, progress)
        for arm in NLL_ARMS:
            res.nll[arm] = [v for v, o in zip(values, owners) if o == arm]

    def _accuracy(
        self,
        res: DatasetResult,
        pool: DemoPool,
        queries: list[Problem],
        idx: list[int],
        xq: np.ndarray,
        sel_cfg: SelectionConfig,
        memo: dict,
        max_new: int,
        progress: JobContext,
    ) -> None:
        extract = extract_gsm8k if res.dataset == "gsm8k" else extract_mawps
        for a, arm in enumerate(ACC_ARMS):
            prompts, _ = self._arm_prompts(arm, pool, queries, idx, xq, sel_cfg, memo)
            hits = []
            for n, (p, j) in enumerate(zip(prompts, idx)):
                hits.append(bool(is_correct(extract(self._decode(p, max_new)), queries[j].gold)))
                progress((a + (n + 1) / len(idx)) / len(ACC_ARMS), f"decoding {arm} {n + 1}/{len(idx)}")
            res.correct[arm] = hits
            res.accuracy[arm] = (sum(hits), len(idx))

    def _theory(
        self,
        res: DatasetResult,
        pool: DemoPool,
        queries: list[Problem],
        picked: list[int],
        xq: np.ndarray,
        n_demos: int,
        memo: dict,
        progress: JobContext,
    ) -> None:
        pairs, meta = [], []
        for j in picked:
            q = queries[j]
            sub = self._sub(pool, q, memo)
            rng = np.random.default_rng([self.cfg.seed, 7, q.index])
            demos = rng.choice(len(sub), size=min(n_demos, len(sub)), replace=False)
            sim = similarity(xq[j], sub.p["reference"])[demos]
            sim_u = similarity(*normalized_inputs(xq[j], sub.p["reference"], "unit"))[demos]
            sim_c = similarity(*normalized_inputs(xq[j], sub.p["reference"], "centred"))[demos]
            feats = {
                "sim": sim,
                "stab": sub.stab[demos],
                "score": sim * sub.stab[demos],
                "cosine": cosine_distance(xq[j], sub.x)[demos],
                "score_unit": sim_u * sub.stab[demos],
                "score_centred": sim_c * sub.stab[demos],
            }
            meta.append((len(pairs), len(demos), feats))
            pairs += [(build_prompt(q.text, [sub.demo(int(i))]), q.answer) for i in demos]
        values = np.asarray(self._nll(pairs, progress))
        res.theory = {s: [] for s in THEORY_SCORES}
        for start, n, feats in meta:
            y = values[start : start + n]
            for s in THEORY_SCORES:
                res.theory[s].append(spearman(feats[s], y))


def _head(queries: list[Problem], n: int, *, spread: bool = False) -> list[int]:
    """Indices of the first ``n`` queries; for MATH the first ``n`` of each subject, or with
    ``spread`` ``n`` queries in total taken round-robin over the subjects."""
    if not queries or queries[0].dataset != "math":
        return list(range(min(n, len(queries))))
    by_subject: dict[str, list[int]] = {}
    for j, q in enumerate(queries):
        by_subject.setdefault(q.subject, []).append(j)
    if not spread:
        return sorted(j for v in by_subject.values() for j in v[:n])
    out: list[int] = []
    depth = 0
    while len(out) < n and any(depth < len(v) for v in by_subject.values()):
        out += [v[depth] for v in by_subject.values() if depth < len(v)]
        depth += 1
    return sorted(out[:n])


def run_experiment(
    cfg: ExperimentConfig,
    *,
    store: VectorStore,
    progress: JobContext,
    cache_path: Path | None = None,
    model_name: str | None = None,
    device: Any = "cpu",
    amp: str = "off",
) -> list[DatasetResult]:
    """Run every dataset of ``cfg`` on ``device`` and return the measurements (the result cache is device-free)."""
    exp = Experiment(cfg, store=store, model_name=model_name, cache=ResultCache(cache_path), device=device, amp=amp)
    out = []
    for i, name in enumerate(cfg.datasets):
        sub = progress.sub(i / len(cfg.datasets), (i + 1) / len(cfg.datasets))
        t = time.perf_counter()
        before = dict(exp.counts)
        passes = exp.encoder.forward_passes
        res = exp.run_dataset(name, sub)
        res.seconds["total"] = time.perf_counter() - t
        res.work = {k: v - before[k] for k, v in exp.counts.items()}
        res.work["encoder_forward_passes"] = exp.encoder.forward_passes - passes
        log.info("lms3 %s done in %.0fs", name, res.seconds["total"])
        out.append(res)
    return out
