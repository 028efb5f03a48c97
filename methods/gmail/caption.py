"""The captioning demo (spec gmail.md §6 stage 2 (b)): ClipCap's prefix idea at toy scale, and BLEU-4.

:class:`PrefixCaptioner` maps one image embedding through an MLP to ``prefix`` tokens that a GRU
decoder (trained from scratch, in place of GPT-2) reads before the caption; the loss is the
caption's token cross-entropy (teacher forcing). Captions are the attribute captions of the scene
(the caption grammar's first four to six forms); BLEU-4 is :func:`corpus_bleu`, our own
implementation (Papineni et al.: clipped n-gram precisions, geometric mean, brevity penalty
against the closest reference length), computed against all of them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from methods.vlm.render import caption_words
from methods.vlm.tokenizer import words

PAD, BOS, EOS = 0, 1, 2


class CaptionVocab:
    """Ids for the caption grammar's words (``<pad> <bos> <eos>`` first)."""

    def __init__(self) -> None:
        self.itos = ["<pad>", "<bos>", "<eos>", *sorted(caption_words())]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [BOS, *(self.stoi[w] for w in words(text)), EOS]

    def decode(self, ids: Sequence[int]) -> list[str]:
        out = []
        for i in ids:
            if i == EOS:
                break
            if i not in (PAD, BOS):
                out.append(self.itos[i])
        return out


def attribute_captions(caps: list[str]) -> list[str]:
    """The scene's attribute captions (no noun captions): indices 0–5 for one object, 0–4 for several."""
    return caps[:6] if len(caps) > 5 and "at the" in caps[4] else caps[:5]


class PrefixCaptioner(nn.Module):
    """Embedding → MLP → ``prefix`` tokens → GRU decoder → next-word logits."""

    def __init__(self, dim: int, vocab: int, *, prefix: int = 4, width: int = 96):
        super().__init__()
        self.prefix, self.width = prefix, width
        self.mapper = nn.Sequential(
            nn.Linear(dim, width * prefix // 2), nn.Tanh(), nn.Linear(width * prefix // 2, width * prefix)
        )
        self.embed = nn.Embedding(vocab, width, padding_idx=PAD)
        self.gru = nn.GRU(width, width, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, emb: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (n, L, V) for predicting tokens[:, 1:] from the prefix and tokens[:, :-1]."""
        pre = self.mapper(emb).view(len(emb), self.prefix, self.width)
        h, _ = self.gru(torch.cat([pre, self.embed(tokens[:, :-1])], dim=1))
        return self.head(h[:, self.prefix :])

    @torch.no_grad()
    def generate_ids(self, emb: torch.Tensor, max_len: int = 18) -> torch.Tensor:
        """Greedy token ids (n, max_len), on ``emb``'s device (no read-back inside the loop)."""
        pre = self.mapper(emb).view(len(emb), self.prefix, self.width)
        _, h = self.gru(pre)
        tok = torch.full((len(emb), 1), BOS, dtype=torch.long, device=emb.device)
        out = []
        for _ in range(max_len):
            o, h = self.gru(self.embed(tok), h)
            tok = self.head(o[:, -1]).argmax(-1, keepdim=True)
            out.append(tok)
        return torch.cat(out, dim=1)

    def generate(self, emb: torch.Tensor, max_len: int = 18) -> list[list[int]]:
        """Greedy token ids of each embedding, as lists."""
        return self.generate_ids(emb, max_len).cpu().tolist()


def _pad(seqs: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(seqs), max(map(len, seqs))), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out


def cosine_annealing(steps: int):
    """The :data:`core.train.Schedule` of torch's ``CosineAnnealingLR(T_max = max(1, steps))`` stepped once per step.

    Torch computes each rate from the previous one (a recursion, not the closed form); so does this,
    with the same expressions, so every rate is the same float.
    """
    t_max = max(1, steps)
    rates: dict[float, list[float]] = {}

    def schedule(step: int, base_lr: float) -> float:
        seq = rates.setdefault(base_lr, [base_lr])
        while len(seq) <= step:
            e = len(seq)
            if (e - 1 - t_max) % (2 * t_max) == 0:
                seq.append(seq[-1] + (base_lr - 0.0) * (1 - math.cos(math.pi / t_max)) / 2)
            else:
                seq.append((1 + math.cos(math.pi * e / t_max)) / (1 + math.cos(math.pi * (e - 1) / t_max))
                           * (seq[-1] - 0.0) + 0.0)  # fmt: skip
        return seq[step]

    return schedule


def train_captioner(emb: torch.Tensor, captions: list[list[str]], *, steps: int, seed: int, batch_size: int = 128,
                    lr: float = 3e-3, amp: str = "off") -> tuple[PrefixCaptioner, CaptionVocab, list[float]]:  # fmt: skip
    """Train a captioner on (embedding, random attribute caption) pairs; AdamW with cosine decay, on ``emb``'s device."""
    from core.train import fit

    vocab = CaptionVocab()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = PrefixCaptioner(emb.shape[1], len(vocab)).to(emb.device)
    pools = [attribute_captions(c) for c in captions]

    def batch(_step: int) -> tuple[torch.Tensor, torch.Tensor]:
        idx = rng.integers(0, len(emb), size=min(batch_size, len(emb)))
        tokens = _pad([vocab.encode(pools[i][rng.integers(len(pools[i]))]) for i in idx])
        return emb[torch.as_tensor(idx).to(emb.device)], tokens

    def loss_fn(m: PrefixCaptioner, b) -> torch.Tensor:
        x, tokens = b
        logits = m(x, tokens)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1), ignore_index=PAD)

    losses = fit(model, batch, loss_fn, steps=steps, lr=lr, weight_decay=0.01, clip=1.0, schedule=cosine_annealing(steps),
                 device=emb.device, amp=amp, message="captioner") if steps > 0 else []  # fmt: skip
    return model.eval(), vocab, losses


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(
    hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]], n: int = 4
) -> float:
    """Corpus BLEU-n (uniform weights): clipped n-gram precision over the corpus × brevity penalty."""
    if len(hypotheses) != len(references):
        raise ValueError("one list of references per hypothesis")
    match, total = [0] * n, [0] * n
    hyp_len = ref_len = 0
    for hyp, refs in zip(hypotheses, references, strict=True):
        hyp_len += len(hyp)
        ref_len += min((abs(len(r) - len(hyp)), len(r)) for r in refs)[1]
        for k in range(1, n + 1):
            counts = _ngrams(hyp, k)
            best: Counter = Counter()
            for r in refs:
                best |= _ngrams(r, k)
            match[k - 1] += sum(min(c, best[g]) for g, c in counts.items())
            total[k - 1] += max(0, len(hyp) - k + 1)
    if hyp_len == 0 or min(match) == 0:
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(match, total, strict=True)) / n
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(log_p)


def bleu_of(model: PrefixCaptioner, vocab: CaptionVocab, emb: torch.Tensor, captions: list[list[str]]) -> tuple[float, list[str]]:  # fmt: skip
    """Corpus BLEU-4 of greedy captions of ``emb`` against each scene's attribute captions; and the captions."""
    hyps = [vocab.decode(ids) for ids in model.generate(emb)]
    refs = [[words(c) for c in attribute_captions(caps)] for caps in captions]
    return corpus_bleu(hyps, refs), [" ".join(h) for h in hyps]


def constant_bleu(train_captions: list[list[str]], captions: list[list[str]]) -> tuple[float, str]:
    """BLEU-4 of always answering the training set's most frequent attribute caption (a floor)."""
    common = Counter(c for caps in train_captions for c in attribute_captions(caps)).most_common(1)[0][0]
    refs = [[words(c) for c in attribute_captions(caps)] for caps in captions]
    return corpus_bleu([words(common)] * len(captions), refs), common
