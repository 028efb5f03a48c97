"""Sentence METEOR as the AVeriTeC scorer computes it (spec §4 step 2).

Alignment runs in three stages, exact → Porter stem → WordNet synonym (on the
words left *stemmed* by the stem stage, as NLTK does); each stage is greedy and scans the hypothesis from its last word, matching it to the
*last* unmatched reference position that qualifies. With m matched unigrams,
a hypothesis of length |h| and a reference of length |r|::

    P = m / |h|,  R = m / |r|,  Fmean = P·R / (α·P + (1 − α)·R)
    penalty = γ · (chunks / m)^β,  score = (1 − penalty) · Fmean       (0 when m = 0)

with α = 0.9, β = 3, γ = 0.5, words lower-cased, and ``chunks`` the number of
runs of matches adjacent in both sentences (matches sorted by hypothesis
position). Tokenisation is NLTK's ``word_tokenize`` (punkt_tab), built offline by
:mod:`methods.averitec_eval.nltk_data`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from core.lazy import locked_cache

Enum = list[tuple[int, str]]
ALPHA, BETA, GAMMA = 0.9, 3.0, 0.5


@functools.lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@locked_cache(maxsize=1)
def _wordnet():
    from nltk.corpus import wordnet

    from methods.averitec_eval.nltk_data import ensure_nltk_data

    ensure_nltk_data()
    wordnet.ensure_loaded()
    return wordnet


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


@functools.lru_cache(maxsize=200_000)
def synonyms(word: str) -> frozenset[str]:
    """The word and every single-word lemma of every WordNet synset it belongs to."""
    wn = _wordnet()
    names = {lemma.name() for synset in wn.synsets(word) for lemma in synset.lemmas() if "_" not in lemma.name()}
    return frozenset(names | {word})


def _align_stage(
    hyp: Enum, ref: Enum, qualifies: Callable[[str, str], bool]
) -> tuple[list[tuple[int, int]], Enum, Enum]:
    """Greedy matching from the end of both lists; returns (matches, unmatched hyp, unmatched ref)."""
    matches: list[tuple[int, int]] = []
    used_h: set[int] = set()
    used_r: set[int] = set()
    for i in range(len(hyp) - 1, -1, -1):
        for j in range(len(ref) - 1, -1, -1):
            if j in used_r:
                continue
            if qualifies(hyp[i][1], ref[j][1]):
                matches.append((hyp[i][0], ref[j][0]))
                used_h.add(i)
                used_r.add(j)
                break
    return (
        matches,
        [p for i, p in enumerate(hyp) if i not in used_h],
        [p for j, p in enumerate(ref) if j not in used_r],
    )


def align(hypothesis: Sequence[str], reference: Sequence[str]) -> list[tuple[int, int]]:
    """(hypothesis index, reference index) matches of the three stages, sorted by hypothesis index."""
    hyp = list(enumerate(w.lower() for w in hypothesis))
    ref = list(enumerate(w.lower() for w in reference))
    exact, hyp, ref = _align_stage(hyp, ref, lambda h, r: h == r)
    # The stem stage works on stemmed words and hands its *stemmed* leftovers to the synonym
    # stage, exactly as NLTK (and so the official scorer) does.
    hyp = [(i, _stem(w)) for i, w in hyp]
    ref = [(j, _stem(w)) for j, w in ref]
    stem, hyp, ref = _align_stage(hyp, ref, lambda h, r: h == r)
    syn, _, _ = _align_stage(hyp, ref, lambda h, r: r in synonyms(h))
    return sorted(exact + stem + syn)


def count_chunks(matches: list[tuple[int, int]]) -> int:
    """Fewest runs of matches that are consecutive in both sentences."""
    if not matches:
        return 0
    chunks = 1
    for (h0, r0), (h1, r1) in zip(matches, matches[1:]):
        if not (h1 == h0 + 1 and r1 == r0 + 1):
            chunks += 1
    return chunks


def meteor_tokens(
    reference: Sequence[str],
    hypothesis: Sequence[str],
    *,
    alpha: float = ALPHA,
    beta: float = BETA,
    gamma: float = GAMMA,
) -> float:
    """METEOR of pre-tokenised sentences (argument order as NLTK's ``single_meteor_score``)."""
    matches = align(hypothesis, reference)
    m = len(matches)
    if m == 0 or not hypothesis or not reference:
        return 0.0
    precision, recall = m / len(hypothesis), m / len(reference)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    penalty = gamma * (count_chunks(matches) / m) ** beta
    return (1 - penalty) * fmean


@functools.lru_cache(maxsize=100_000)
def tokenize(text: str) -> tuple[str, ...]:
    from nltk import word_tokenize

    from methods.averitec_eval.nltk_data import ensure_nltk_data

    ensure_nltk_data()
    return tuple(word_tokenize(text))


def pairwise_meteor(candidate: str, reference: str) -> float:
    """METEOR(candidate vs reference) on ``word_tokenize``d strings, as the official scorer calls it."""
    return meteor_tokens(tokenize(reference), tokenize(candidate))
