"""SmolLM2 split into a frozen lower part (computed once, cached) and an adapted upper part.

The CPU budget (5 arms × 3 seeds × 4 tasks of LoRA training on ~0.3 of a core) does not allow
LoRA on all 30 layers: one training step of the full model took 26 s and one evaluation pass
35 s under the shared load. With LoRA on the top ``adapt_layers`` decoder layers only, the
lower layers never change, so their output for a given token sequence is the same for every
arm, seed and stage. :class:`SplitLM` computes it once per training sequence (and once per
test prompt, with its key/value cache for decoding) and trains/evaluates only the upper part.
The result is exactly the model "LoRA on the top k layers of SmolLM2-135M"; ``adapt_layers =
30`` is the spec's all-layer setting (the lower part is then just the token embedding).

Both parts live on ``device`` (copies of the shared CPU model moved there; ``amp="bf16"`` runs the
forward passes under bfloat16 autocast). Token ids are built on the CPU and moved; cached lower
outputs stay on the device; only the generated token ids come back.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from core.device import autocast, resolve_device, step_barrier
from methods.sefe.lora import END, chat_prompt


def _keep_layers(llama_model: Any, layers: list[Any]) -> None:
    llama_model.layers = torch.nn.ModuleList(layers)
    llama_model.config.num_hidden_layers = len(layers)
    if getattr(llama_model.config, "layer_types", None):
        llama_model.config.layer_types = list(llama_model.config.layer_types)[: len(layers)]
    for k, layer in enumerate(llama_model.layers):
        layer.self_attn.layer_idx = k


class SplitLM:
    """``lower`` (embedding + first L−k layers, no final norm; frozen) and ``upper`` (a causal LM
    whose k layers, final norm and tied head take the lower output as ``inputs_embeds``)."""

    def __init__(
        self, model: Any, tokenizer: Any, adapt_layers: int | None = None, *, device: Any = "cpu", amp: str = "off"
    ) -> None:
        self.device = resolve_device(device)
        self.amp = amp
        n = len(model.model.layers)
        k = n if adapt_layers is None else min(adapt_layers, n)
        self.cut = n - k
        self.tokenizer = tokenizer
        self.upper = copy.deepcopy(model)
        self.upper.config = copy.deepcopy(model.config)
        self.upper.model.config = self.upper.config
        _keep_layers(self.upper.model, list(self.upper.model.layers)[self.cut :])
        self.lower = copy.deepcopy(model.model)
        self.lower.config = copy.deepcopy(model.config)
        _keep_layers(self.lower, list(self.lower.layers)[: self.cut])
        self.lower.norm = torch.nn.Identity()
        for p in self.lower.parameters():
            p.requires_grad_(False)
        self.lower.to(self.device).eval()
        self.upper.to(self.device).eval()
        self._pristine = {k: v.detach().clone() for k, v in self.upper.state_dict().items()}
        self.owner: object | None = None  # the learner whose merged adapters the upper part holds
        self._train_cache: dict[tuple[int, ...], torch.Tensor] = {}
        self._prompt_cache: dict[tuple[str, ...], tuple] = {}
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.end_id = tokenizer.convert_tokens_to_ids(END)

    def reset(self) -> None:
        """Restore the upper part's original weights (drops every merged adapter)."""
        self.upper.load_state_dict(self._pristine)
        self.owner = None

    # ---- training: lower output per sequence, cached ------------------------------------------

    @torch.no_grad()
    def features(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The lower part's output for a right-padded batch (zeros at padding), cached per sequence."""
        lengths = attention_mask.sum(1).tolist()
        keys = [tuple(input_ids[b, :n].tolist()) for b, n in enumerate(lengths)]
        missing = [b for b, key in enumerate(keys) if key not in self._train_cache]
        if missing:
            ids, mask = input_ids[missing].to(self.device), attention_mask[missing].to(self.device)
            with autocast(self.device, self.amp):
                if self.cut == 0:
                    h = self.lower.embed_tokens(ids)
                else:
                    h = self.lower(input_ids=ids, attention_mask=mask).last_hidden_state
            for row, b in enumerate(missing):
                self._train_cache[keys[b]] = h[row, : lengths[b]].float().clone()
        out = torch.zeros(*input_ids.shape, self.upper.config.hidden_size, device=self.device)
        for b, key in enumerate(keys):
            out[b, : lengths[b]] = self._train_cache[key]
        return out

    # ---- evaluation: greedy decoding over the cached lower prefix ------------------------------

    def _lower_step(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache: Any) -> torch.Tensor:
        if self.cut == 0:
            return self.lower.embed_tokens(ids)
        return self.lower(
            input_ids=ids, attention_mask=mask, position_ids=pos, cache=cache, use_cache=True
        ).last_hidden_state

    def _prefix(self, prompts: tuple[str, ...]) -> tuple:
        """Left-padded ids, mask, positions, lower output and lower key/value cache of a prompt batch."""
        from transformers import DynamicCache

        if prompts not in self._prompt_cache:
            enc = [self.tokenizer(chat_prompt(p), add_special_tokens=False)["input_ids"] for p in prompts]
            n = max(len(e) for e in enc)
            ids = torch.full((len(enc), n), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(enc), n), dtype=torch.long)
            for k, e in enumerate(enc):
                ids[k, n - len(e) :] = torch.tensor(e)
                mask[k, n - len(e) :] = 1
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            ids, mask, pos = ids.to(self.device), mask.to(self.device), pos.to(self.device)
            cache = DynamicCache(config=self.lower.config) if self.cut else None
            with torch.no_grad(), autocast(self.device, self.amp):
                h = self._lower_step(ids, mask, pos, cache)
            self._prompt_cache[prompts] = (ids, mask, pos, h, cache, n)
        return self._prompt_cache[prompts]

    @torch.no_grad()
    def generate(
        self, prompts: list[str], *, max_new_tokens: int, batch_size: int = 16, progress: Any = None
    ) -> list[str]:
        """Greedy answers (decoded, stopped at ``<|im_end|>``) from the current upper part."""
        from transformers import DynamicCache

        self.upper.eval()
        outs: list[str] = []
        chunks = [tuple(prompts[i : i + batch_size]) for i in range(0, len(prompts), batch_size)]
        for c, chunk in enumerate(chunks):
            ids, mask, pos, h, lower_cache, n = self._prefix(chunk)
            upper_cache = DynamicCache(config=self.upper.config)
            try:
                with autocast(self.device, self.amp):
                    logits = self.upper(
                        inputs_embeds=h,
                        attention_mask=mask,
                        position_ids=pos,
                        cache=upper_cache,
                        use_cache=True,
                        logits_to_keep=1,
                    ).logits[:, -1]
                tokens = []
                done = torch.zeros(len(chunk), dtype=torch.bool, device=self.device)
                step_mask, step_pos = mask, pos[:, -1:]
                for _ in range(max_new_tokens):
                    nxt = logits.argmax(-1)
                    nxt = torch.where(done, torch.full_like(nxt, self.end_id), nxt)
                    tokens.append(nxt)
                    done |= nxt == self.end_id
                    step_barrier(self.device)
                    if bool(done.all()):
                        break
                    step_mask = torch.cat([step_mask, step_mask.new_ones(len(chunk), 1)], dim=1)
                    step_pos = step_pos + 1
                    with autocast(self.device, self.amp):
                        hs = self._lower_step(nxt[:, None], step_mask, step_pos, lower_cache)
                        logits = self.upper(
                            inputs_embeds=hs,
                            attention_mask=step_mask,
                            position_ids=step_pos,
                            cache=upper_cache,
                            use_cache=True,
                        ).logits[:, -1]
            finally:
                extra = lower_cache.get_seq_length() - n if lower_cache is not None else 0
                if extra > 0:
                    lower_cache.crop(-extra)  # back to the prompt: the cached prefix stays reusable
            gen = torch.stack(tokens, dim=1).cpu().tolist()
            for row in gen:
                row = row[: row.index(self.end_id)] if self.end_id in row else row
                outs.append(self.tokenizer.decode(row, skip_special_tokens=True).strip())
            if progress is not None:
                progress((c + 1) / len(chunks), "generating")
        return outs


_SPLITS: dict[tuple, SplitLM] = {}


def get_split(adapt_layers: int | None, loader: Any, *, device: Any = "cpu", amp: str = "off") -> SplitLM:
    """The process-wide :class:`SplitLM` for ``adapt_layers`` on ``device`` (its caches serve every arm and seed).

    ``loader() -> (model, tokenizer)`` gives the base model (it is copied, never mutated).
    """
    dev = resolve_device(device)
    key = (adapt_layers, getattr(loader, "__qualname__", str(loader)), str(dev), amp)
    if key not in _SPLITS:
        _SPLITS.clear()  # one model in memory at a time
        model, tok = loader()
        _SPLITS[key] = SplitLM(model, tok, adapt_layers, device=dev, amp=amp)
    return _SPLITS[key]
