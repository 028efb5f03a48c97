"""ALF — the genetic-algorithm layer filter (spec §3.2).

Genome g ∈ {0,1}^L over fine-grained sub-layers; constraint: at most ⌈max_drop·L⌉ zeros and no group
(encoder) loses all its genes — invalid genomes are repaired by re-enabling random switched-off genes.
Fitness (maximised) is supplied by the caller, e.g. F(g) = Acc_val(g) − γ·FLOPs(g)/FLOPs(1).
GA: initial population = all-ones + random genomes with 10–50 % zeros; tournament selection (k);
uniform crossover (p_c); bit-flip mutation (p_m, default 1/L); elitism (the best ``elite`` copied
unchanged); a fitness cache keyed by genome; one seeded generator, so the same seed gives the same run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class GAConfig:
    population: int = 20
    generations: int = 30
    tournament: int = 3
    p_crossover: float = 0.8
    p_mutation: float | None = None  # None: 1/L
    elite: int = 2
    max_drop: float = 0.5
    init_zeros: tuple[float, float] = (0.1, 0.5)
    seed: int = 0


@dataclass
class GAResult:
    best: tuple[int, ...]
    best_fitness: float
    best_curve: list[float]  # best-so-far fitness after each generation (generation 0 = initial population)
    mean_curve: list[float]
    evaluations: int
    #: the best fitness *in the population* of each generation: non-decreasing only because the elite are
    #: carried over unchanged (without elitism a generation can lose its best genome)
    population_best: list[float] = field(default_factory=list)
    #: every generation's population (generation 0 first), for checks of the operators
    populations: list[list[tuple[int, ...]]] = field(repr=False, default_factory=list)
    cache: dict[tuple[int, ...], float] = field(repr=False, default_factory=dict)


def max_zeros(length: int, max_drop: float) -> int:
    return math.ceil(max_drop * length)


def is_valid(g: Sequence[int], groups: Sequence[str], max_drop: float) -> bool:
    g = np.asarray(g)
    if g.shape != (len(groups),) or not np.isin(g, (0, 1)).all():
        return False
    if (g == 0).sum() > max_zeros(len(g), max_drop):
        return False
    return all(g[[i for i, x in enumerate(groups) if x == name]].any() for name in set(groups))


def repair(g: np.ndarray, groups: Sequence[str], max_drop: float, rng: np.random.Generator) -> np.ndarray:
    """Re-enable random genes until every group keeps one and at most ⌈max_drop·L⌉ are off."""
    g = np.array(g, dtype=np.int64)
    for name in dict.fromkeys(groups):
        idx = [i for i, x in enumerate(groups) if x == name]
        if not g[idx].any():
            g[rng.choice(idx)] = 1
    limit = max_zeros(len(g), max_drop)
    zeros = np.flatnonzero(g == 0)
    if len(zeros) > limit:
        g[rng.choice(zeros, len(zeros) - limit, replace=False)] = 1
    return g


def run_ga(
    fitness: Callable[[tuple[int, ...]], float],
    groups: Sequence[str],
    cfg: GAConfig = GAConfig(),
    *,
    progress: Callable[[float, str], object] | None = None,
) -> GAResult:
    """Maximise ``fitness`` over valid genomes (one gene per entry of ``groups``)."""
    if cfg.population < 2 or cfg.elite >= cfg.population or cfg.tournament < 1:
        raise ValueError("need population >= 2, elite < population and tournament >= 1")
    rng = np.random.default_rng(cfg.seed)
    length = len(groups)
    pm = cfg.p_mutation if cfg.p_mutation is not None else 1.0 / length
    cache: dict[tuple[int, ...], float] = {}

    def fit(g: np.ndarray) -> float:
        key = tuple(int(x) for x in g)
        if key not in cache:
            cache[key] = float(fitness(key))
        return cache[key]

    pop = [np.ones(length, dtype=np.int64)]
    while len(pop) < cfg.population:
        frac = rng.uniform(*cfg.init_zeros)
        g = np.ones(length, dtype=np.int64)
        g[rng.choice(length, max(1, int(round(frac * length))), replace=False)] = 0
        pop.append(repair(g, groups, cfg.max_drop, rng))
    scores = [fit(g) for g in pop]
    best_i = int(np.argmax(scores))
    best, best_f = pop[best_i].copy(), scores[best_i]
    best_curve, mean_curve = [best_f], [float(np.mean(scores))]
    population_best = [float(max(scores))]

    def genomes(population: list[np.ndarray]) -> list[tuple[int, ...]]:
        return [tuple(int(x) for x in g) for g in population]

    populations = [genomes(pop)]

    def tournament() -> np.ndarray:
        picks = rng.choice(len(pop), cfg.tournament, replace=False if cfg.tournament <= len(pop) else True)
        return pop[max(picks, key=lambda i: scores[i])]

    for gen in range(cfg.generations):
        order = np.argsort(-np.asarray(scores), kind="stable")
        nxt = [pop[i].copy() for i in order[: cfg.elite]]
        while len(nxt) < cfg.population:
            a, b = tournament(), tournament()
            if rng.random() < cfg.p_crossover:
                m = rng.random(length) < 0.5
                a, b = np.where(m, a, b), np.where(m, b, a)
            for child in (a, b):
                flip = rng.random(length) < pm
                child = np.where(flip, 1 - child, child)
                nxt.append(repair(child, groups, cfg.max_drop, rng))
        pop = nxt[: cfg.population]
        scores = [fit(g) for g in pop]
        i = int(np.argmax(scores))
        if scores[i] > best_f:
            best, best_f = pop[i].copy(), scores[i]
        best_curve.append(best_f)
        mean_curve.append(float(np.mean(scores)))
        population_best.append(float(max(scores)))
        populations.append(genomes(pop))
        if progress is not None:
            progress((gen + 1) / cfg.generations, f"GA generation {gen + 1}/{cfg.generations} best {best_f:.4f}")
    return GAResult(
        tuple(int(x) for x in best), best_f, best_curve, mean_curve, len(cache), cache=cache,
        population_best=population_best, populations=populations,
    )  # fmt: skip


def random_mask(groups: Sequence[str], zeros: int, seed: int, max_drop: float = 0.5) -> tuple[int, ...]:
    """A valid random genome with exactly ``zeros`` zeros (the §7.5 random-mask baseline)."""
    rng = np.random.default_rng(seed)
    length = len(groups)
    for _ in range(1000):
        g = np.ones(length, dtype=np.int64)
        g[rng.choice(length, zeros, replace=False)] = 0
        if is_valid(g, groups, max_drop):
            return tuple(int(x) for x in g)
    raise ValueError(f"no valid genome with {zeros} zeros")
