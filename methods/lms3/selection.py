"""The selector as a library call: index a pool once, then pick demonstrations per query.

    svc = Lms3Service()                                  # SmolLM2 from the local registry
    svc.index(PoolSpec("mawps"))                         # once; cached in Chroma
    res = svc.select("Tom has 3.0 apples ...", PoolSpec("mawps"))
    res.prompt, res.demos, res.rejected

Other parts of paperworks (agents' few-shot prompts) call :meth:`Lms3Service.select`.

``Lms3Service(device=...)`` encodes on that device: the CPU uses the shared local model
(``core.llm.get_local_model``), another device a private copy moved there once per process
(:func:`local_model_on`; the shared instance is never moved). The projections P and Stab are
computed from the CPU weights, and the pools in Chroma do not depend on the device.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from core.lazy import locked_cache
from core.llm import get_local_model, model_hash
from core.vectorstore import VectorStore, get_vectorstore
from methods.lms3.config import RepresentationConfig, SelectionConfig
from methods.lms3.data import PoolSpec
from methods.lms3.params import MAX_QUERY_CHARS
from methods.lms3.pool import DemoPool, IndexStats, Key, index_pool, load_pool
from methods.lms3.projections import AttentionProjections, attention_projections
from methods.lms3.prompts import build_prompt
from methods.lms3.representation import Encoder
from methods.lms3.scores import Normalize, cosine_distance, normalized_inputs, rejection_lambda, similarity
from methods.lms3.selectors import Selector

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DemoScore:
    """One pool item as the selector saw it."""

    rank: int
    index: int  # line in the dataset's train split
    subject: str
    problem: str
    answer: str
    sim: float
    stab: float
    score: float
    cosine_distance: float
    in_sim_top_lambda: bool


@dataclass
class SelectionResult:
    """Demonstrations for one query, their scores, whether rejection fired, and the prompt."""

    dataset: str
    pool: str
    query: str
    subject: str
    arm: str
    pool_size: int
    lam: int
    demos: list[DemoScore]
    candidates: list[DemoScore] = field(default_factory=list)
    rejected: bool = False
    prompt: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@locked_cache(maxsize=4)
def _projections(model_name: str | None) -> AttentionProjections:
    return attention_projections(get_local_model(model_name).model)


@locked_cache(maxsize=2)
def _model_copy(model_name: str | None, device: str) -> Any:
    import copy

    return copy.deepcopy(get_local_model(model_name).model).to(device).eval()


def local_model_on(model_name: str | None, device: Any = "cpu") -> Any:
    """The local transformers model on ``device``: the shared instance on the CPU, else a copy kept there."""
    from core.device import resolve_device

    dev = resolve_device(device)
    if dev.type == "cpu":
        return get_local_model(model_name).model
    return _model_copy(model_name, str(dev))


class Lms3Service:
    """Indexing and selection over Chroma pools with one local model and representation.

    Args:
        model_name: a local model registry name or directory (default SmolLM2-135M-Instruct).
        representation: mode, layer, orientation and max length.
        store: the vector store (default: the configured Chroma).
        batch_size: texts per forward pass when encoding.
        device: where the model encodes (``cpu``/``auto``/``cuda`` or a torch device).
        amp: ``off`` or ``bf16`` autocast for the encoding forward passes.
    """

    def __init__(
        self,
        *,
        model_name: str | None = None,
        representation: RepresentationConfig | None = None,
        store: VectorStore | None = None,
        batch_size: int = 16,
        device: Any = "cpu",
        amp: str = "off",
    ) -> None:
        from core.device import resolve_device

        self.device = resolve_device(device)
        self.amp = amp
        self.model_name = model_name
        self.rep = representation or RepresentationConfig()
        self.store = store if store is not None else get_vectorstore()
        self.batch_size = batch_size
        self._encoder: Encoder | None = None

    @property
    def key(self) -> Key:
        return (self.rep.mode, self.rep.layer)

    @property
    def model_hash(self) -> str:
        """The weights' id, which keys the pools; ``-bf16`` when encoding under bf16 autocast (other numbers)."""
        return model_hash(self.model_name) + ("-bf16" if self.amp == "bf16" else "")

    @property
    def projections(self) -> AttentionProjections:
        return _projections(self.model_name)

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            lm = get_local_model(self.model_name)
            self._encoder = Encoder(
                local_model_on(self.model_name, self.device),
                lm.tokenizer,
                max_length=self.rep.max_length,
                batch_size=self.batch_size,
                amp=self.amp,
            )
        return self._encoder

    def index(self, spec: PoolSpec, *, keys: list[Key] | None = None, progress: Any = None) -> IndexStats:
        """Embed ``spec``'s pool into Chroma (skipped when already there)."""
        return index_pool(
            spec.problems(),
            spec.name,
            store=self.store,
            encoder=self.encoder,
            projections=self.projections,
            model_hash=self.model_hash,
            keys=keys or [self.key],
            progress=progress,
        )

    def pool(self, spec: PoolSpec, key: Key | None = None) -> DemoPool:
        return load_pool(spec.name, key or self.key, store=self.store, model_hash=self.model_hash)

    def encode(self, texts: list[str], key: Key | None = None) -> np.ndarray:
        return self.encoder.encode(texts, [key or self.key])[key or self.key]

    def select(
        self,
        query: str,
        spec: PoolSpec,
        *,
        subject: str = "",
        arm: str = "lms3",
        selection: SelectionConfig | None = None,
        x_q: np.ndarray | None = None,
        query_key: int = 0,
        normalize: Normalize = "none",
    ) -> SelectionResult:
        """Choose demonstrations for ``query`` from an indexed pool and build the prompt.

        MATH queries need ``subject``: selection stays within that subject's pool. ``normalize``
        other than ``"none"`` is the non-reference, pool-norm-free Sim (``scores.normalized_inputs``).
        """
        query = (query or "").strip()
        if not query:
            raise ValueError("the query is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ValueError(f"the query is longer than {MAX_QUERY_CHARS} characters")
        selection = selection or SelectionConfig()
        pool = self.pool(spec)
        if spec.dataset == "math":
            if not subject:
                raise ValueError("MATH selection needs the query's subject")
            pool = pool.restrict(subject)
        if x_q is None:
            x_q = self.encode([query])[0]
        sel = Selector(arm, selection=selection, orientation=self.rep.orientation, normalize=normalize).select(
            x_q, pool, query_key
        )
        lam = rejection_lambda(len(pool), selection.l, selection.min_lambda)
        sim = similarity(*normalized_inputs(x_q, pool.p[self.rep.orientation], normalize))
        cos = cosine_distance(x_q, pool.x)
        sim_top = set(np.argsort(sim, kind="stable")[:lam].tolist())

        def describe(rank: int, i: int) -> DemoScore:
            return DemoScore(
                rank=rank,
                index=int(pool.indices[i]),
                subject=str(pool.subjects[i]),
                problem=pool.texts[i],
                answer=pool.answers[i],
                sim=float(sim[i]),
                stab=float(pool.stab[i]),
                score=float(sim[i] * pool.stab[i]),
                cosine_distance=float(cos[i]),
                in_sim_top_lambda=i in sim_top,
            )

        demos = [describe(r, i) for r, i in enumerate(sel.chosen)]
        return SelectionResult(
            dataset=spec.dataset,
            pool=spec.name,
            query=query,
            subject=subject,
            arm=arm,
            pool_size=len(pool),
            lam=lam,
            demos=demos,
            candidates=[describe(r, i) for r, i in enumerate(sel.candidates)],
            rejected=sel.rejected,
            prompt=build_prompt(query, [pool.demo(i) for i in sel.chosen]),
        )
