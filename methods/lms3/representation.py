"""Problem representations ``x`` from a causal LM's hidden states (spec §3.1).

``reference`` mode reproduces the reference script: the problem text is tokenized
with default special tokens, truncated to 128 tokens and right-padded with EOS to
exactly 128; ``x`` is the state at index 127. For a problem of ``n < 128`` tokens
that position holds an EOS pad token whose own key is masked, which attends to the
``n`` real tokens and carries position id 127.

Because every other pad position is masked as a key, the state at index 127 only
depends on the real tokens, the EOS embedding and the position id. The default
computation therefore runs the equivalent ``n + 1``-token sequence (real tokens,
then EOS at position id 127 with its key masked), which is 2-4× cheaper on these
datasets; ``exact_padding=True`` runs the literal 128-token input, and the tests
check that both agree to fp32 rounding.

``last_token`` takes the last real token's state (no padding); ``eos_appended``
appends one EOS and takes its state. Both come from one forward pass over
``tokens + [EOS]`` (causal attention makes the state at ``n - 1`` independent of
the appended token).

The forward passes run on the model's device (under ``amp``); token ids are built on the CPU and
moved, the states are gathered there and only the (n, d) representations come back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from methods.lms3.config import LAYERS, MODES, RepresentationLayer, RepresentationMode

log = logging.getLogger(__name__)

Key = tuple[RepresentationMode, RepresentationLayer]


class Encoder:
    """Maps problem texts to fp32 representations for any modes and layers.

    Args:
        model: a transformers causal LM (not modified; run in eval/inference mode).
        tokenizer: its tokenizer (not modified).
        max_length: truncation length in tokens (128 in the reference).
        batch_size: texts per forward pass.
        exact_padding: run the literal 128-token padded input in ``reference`` mode.
        amp: ``off`` or ``bf16`` (autocast on the model's device, :func:`core.device.autocast`).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_length: int = 128,
        batch_size: int = 16,
        exact_padding: bool = False,
        amp: str = "off",
    ) -> None:
        self.model = model
        self.amp = amp
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = max(1, batch_size)
        self.exact_padding = exact_padding
        eos = tokenizer.eos_token_id
        if eos is None:
            raise ValueError("the tokenizer has no EOS token; LMS3 pads with EOS")
        self.eos_id = int(eos[0] if isinstance(eos, (list, tuple)) else eos)
        self.forward_passes = 0  # counted per batch, for the index cache tests and benchmarks
        self.tokens_processed = 0

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def device(self) -> torch.device:
        """Where the model (and so every forward pass) is."""
        return next(self.model.parameters()).device

    def token_ids(self, text: str) -> list[int]:
        """Default special tokens, truncated to ``max_length`` (the reference tokenization)."""
        if not text or not text.strip():
            raise ValueError("cannot represent an empty problem")
        ids = self.tokenizer(text, truncation=True, max_length=self.max_length)["input_ids"]
        return [int(i) for i in ids]

    def encode(
        self, texts: Sequence[str], keys: Iterable[Key] = (("reference", "final_norm_output"),), progress: Any = None
    ) -> dict[Key, np.ndarray]:
        """Representations of ``texts`` for every requested (mode, layer): ``{key: (n, d) fp32}``.

        ``progress``, if given, is called with the fraction of texts done.
        """
        keys = list(dict.fromkeys(keys))
        for mode, layer in keys:
            if mode not in MODES or layer not in LAYERS:
                raise ValueError(f"unknown representation {(mode, layer)}")
        n, d = len(texts), self.hidden_size
        out = {k: np.zeros((n, d), dtype=np.float32) for k in keys}
        if n == 0:
            return out
        ids = [self.token_ids(t) for t in texts]
        layers = sorted({layer for _, layer in keys})
        want_ref = any(m == "reference" for m, _ in keys)
        want_app = [m for m, _ in keys if m != "reference"]
        order = sorted(range(n), key=lambda i: len(ids[i]))  # similar lengths share a batch
        for b0 in range(0, n, self.batch_size):
            idx = order[b0 : b0 + self.batch_size]
            batch = [ids[i] for i in idx]
            if want_ref:
                states = self._reference_batch(batch, layers)
                for layer in layers:
                    if ("reference", layer) in out:
                        out[("reference", layer)][idx] = states[layer]
            if want_app:
                states_app = self._appended_batch(batch, layers)
                for mode in set(want_app):
                    for layer in layers:
                        if (mode, layer) in out:
                            out[(mode, layer)][idx] = states_app[(mode, layer)]
            if progress is not None:
                progress(min(b0 + len(idx), n) / n)
        for k, v in out.items():
            if not np.isfinite(v).all():
                raise FloatingPointError(f"non-finite representation in {k}")
        return out

    # --- forward passes ----------------------------------------------------------
    def _forward(
        self, input_ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor | None, layers: list[RepresentationLayer]
    ) -> dict[RepresentationLayer, torch.Tensor]:
        """Hidden states (b, L, d) of the decoder for each requested layer, fp32."""
        from core.device import autocast

        base = self.model.base_model
        need_mid = "last_layer_attn_input" in layers
        dev = self.device
        with torch.inference_mode(), autocast(dev, self.amp):
            out = base(
                input_ids=input_ids.to(dev),
                attention_mask=mask.to(dev),
                position_ids=None if pos is None else pos.to(dev),
                output_hidden_states=need_mid,
                use_cache=False,
            )
            res: dict[RepresentationLayer, torch.Tensor] = {}
            if "final_norm_output" in layers:
                res["final_norm_output"] = out.last_hidden_state.float()
            if need_mid:
                norm = base.layers[-1].input_layernorm
                res["last_layer_attn_input"] = norm(out.hidden_states[-2]).float()
        self.forward_passes += 1
        self.tokens_processed += int(input_ids.numel())
        return res

    def _reference_batch(
        self, batch: list[list[int]], layers: list[RepresentationLayer]
    ) -> dict[RepresentationLayer, np.ndarray]:
        """State at index ``max_length - 1`` of the EOS right-padded input (reference mode)."""
        L = self.max_length
        b = len(batch)
        if self.exact_padding:
            ids = torch.full((b, L), self.eos_id, dtype=torch.long)
            mask = torch.zeros((b, L), dtype=torch.long)
            for r, t in enumerate(batch):
                ids[r, : len(t)] = torch.tensor(t)
                mask[r, : len(t)] = 1
            states = self._forward(ids, mask, None, layers)
            return {k: v[:, L - 1].cpu().numpy() for k, v in states.items()}
        # Compact equivalent: real tokens, then the summary EOS at position id L-1 with a masked key.
        seqs, gather = [], []
        for t in batch:
            if len(t) >= L:  # truncated: index L-1 is a real token attending to itself
                seqs.append((t[:L], list(range(L)), [1] * L))
                gather.append(L - 1)
            else:
                n = len(t)
                seqs.append((t + [self.eos_id], list(range(n)) + [L - 1], [1] * n + [0]))
                gather.append(n)
        width = max(len(s[0]) for s in seqs)
        ids = torch.full((b, width), self.eos_id, dtype=torch.long)
        pos = torch.zeros((b, width), dtype=torch.long)
        mask = torch.zeros((b, width), dtype=torch.long)
        for r, (t, p, m) in enumerate(seqs):
            ids[r, : len(t)] = torch.tensor(t)
            pos[r, : len(p)] = torch.tensor(p)
            mask[r, : len(m)] = torch.tensor(m)
        states = self._forward(ids, mask, pos, layers)
        g = torch.tensor(gather, device=self.device)
        rows = torch.arange(b, device=self.device)
        return {k: v[rows, g].cpu().numpy() for k, v in states.items()}

    def _appended_batch(self, batch: list[list[int]], layers: list[RepresentationLayer]) -> dict[Key, np.ndarray]:
        """``last_token`` (index n-1) and ``eos_appended`` (index n) from ``tokens + [EOS]``."""
        b = len(batch)
        width = max(len(t) for t in batch) + 1
        ids = torch.full((b, width), self.eos_id, dtype=torch.long)
        mask = torch.zeros((b, width), dtype=torch.long)
        for r, t in enumerate(batch):
            ids[r, : len(t)] = torch.tensor(t)
            mask[r, : len(t) + 1] = 1
        states = self._forward(ids, mask, None, layers)
        ns = torch.tensor([len(t) for t in batch], device=self.device)
        rows = torch.arange(b, device=self.device)
        out: dict[Key, np.ndarray] = {}
        for layer, v in states.items():
            out[("last_token", layer)] = v[rows, ns - 1].cpu().numpy()
            out[("eos_appended", layer)] = v[rows, ns].cpu().numpy()
        return out
