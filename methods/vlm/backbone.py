"""The image–text dual encoder every VLM method uses: the :class:`VLBackbone` protocol and its CLIP implementation.

Two ways to get one, both a :class:`CLIPBackbone` around a transformers ``CLIPModel``:

* :func:`load_backbone` — a checkpoint folder on disk, loaded with ``local_files_only=True``:
  a real CLIP saved by ``save_pretrained`` (with its ``CLIPTokenizer``), or a tiny CLIP this
  package trained (with its word vocabulary, ``word_vocab.json``). Nothing downloads; a missing
  or incomplete folder raises :class:`CheckpointNotFound` saying what was expected.
* :func:`tiny_clip` — a fresh, untrained tiny CLIP from a :class:`~methods.vlm.config.TinyCLIPConfig`
  (:mod:`methods.vlm.cache` trains and caches it).

Images go in as (n, 3, H, W) floats in [0, 1]; the backbone resizes them to its input size and
normalises with CLIP's mean/std. Features come out L2-normalised unless ``normalize=False``.
Prompt learners use two lower-level hooks: :meth:`CLIPBackbone.token_embeddings` and
:meth:`CLIPBackbone.encode_text_embeddings` (the text tower on given input embeddings, pooled at
each sequence's end-of-text position, projected) — CoOp's ``TextEncoder``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import torch
import torch.nn.functional as F
from torch import nn

log = logging.getLogger(__name__)

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
WORD_VOCAB = "word_vocab.json"


class CheckpointNotFound(FileNotFoundError):
    """A CLIP checkpoint folder is missing or incomplete (nothing is ever downloaded)."""


@runtime_checkable
class VLBackbone(Protocol):
    """An image–text dual encoder with CLIP's interface."""

    image_size: int

    def tokenize(self, texts: Sequence[str]) -> torch.Tensor: ...

    def encode_image(self, images: torch.Tensor, *, normalize: bool = True) -> torch.Tensor: ...

    def encode_text(self, tokens: torch.Tensor, *, normalize: bool = True) -> torch.Tensor: ...

    @property
    def logit_scale(self) -> float: ...


class CLIPBackbone(nn.Module):
    """A transformers ``CLIPModel`` plus its tokenizer, speaking :class:`VLBackbone`."""

    def __init__(
        self,
        model,
        tokenizer: Callable[[Sequence[str]], torch.Tensor],
        *,
        eos_token_id: int,
        name: str = "clip",
        mean: Sequence[float] = CLIP_MEAN,
        std: Sequence[float] = CLIP_STD,
    ):
        super().__init__()
        self.model = model
        self._tokenizer = tokenizer
        self.eos_token_id = int(eos_token_id)
        self.name = name
        self.image_size = int(model.config.vision_config.image_size)
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1), persistent=False)

    # --- the protocol ---------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> torch.Tensor:
        """(n, L) token ids; every row holds one end-of-text token."""
        return self._tokenizer(list(texts))

    def preprocess(self, images: torch.Tensor) -> torch.Tensor:
        """(n, 3, H, W) in [0, 1] → the model's resized, normalised pixel values."""
        if images.ndim != 4 or images.shape[1] != 3:
            raise ValueError(f"images must be (n, 3, H, W), got {tuple(images.shape)}")
        x = images.to(self.mean.device, torch.float32)  # images may come from the CPU; the model may not be there
        if x.shape[-2:] != (self.image_size, self.image_size):
            x = F.interpolate(x, size=(self.image_size,) * 2, mode="bicubic", align_corners=False, antialias=True)
        return (x.clamp(0, 1) - self.mean) / self.std

    def encode_image(self, images: torch.Tensor, *, normalize: bool = True) -> torch.Tensor:
        feats = self.model.get_image_features(pixel_values=self.preprocess(images)).pooler_output
        return F.normalize(feats, dim=-1) if normalize else feats

    def encode_text(self, tokens: torch.Tensor, *, normalize: bool = True) -> torch.Tensor:
        """(n, d) text features of token rows (from :meth:`tokenize`, on any device: moved to the model's)."""
        eos = self.eos_positions(tokens)  # checked where the tokenizer put them (the CPU): no device sync
        tokens = tokens.to(self.device)
        return self.encode_text_embeddings(self.token_embeddings(tokens), eos, normalize=normalize)

    @property
    def logit_scale(self) -> float:
        """exp of the learned log temperature (CLIP's 1/τ, capped at 100 as in CLIP)."""
        return float(self.model.logit_scale.detach().exp().clamp(max=100.0))

    @property
    def device(self) -> torch.device:
        """Where the model's weights are (inputs on another device are moved there)."""
        return self.model.text_model.embeddings.token_embedding.weight.device

    # --- hooks for prompt learners -------------------------------------------
    @property
    def text_width(self) -> int:
        return int(self.model.config.text_config.hidden_size)

    def eos_positions(self, tokens: torch.Tensor) -> torch.Tensor:
        """Index of the first end-of-text token of each row."""
        hit = tokens == self.eos_token_id
        if not bool(hit.any(dim=1).all()):
            raise ValueError("every token row needs an end-of-text token")
        return hit.int().argmax(dim=1)

    def token_embeddings(self, tokens: torch.Tensor) -> torch.Tensor:
        """(n, L, width) token embeddings, before positional embeddings (on the model's device)."""
        return self.model.text_model.embeddings.token_embedding(tokens.to(self.device))

    def encode_text_embeddings(
        self, embeds: torch.Tensor, eos_index: torch.Tensor, *, normalize: bool = True
    ) -> torch.Tensor:
        """The text tower on ``embeds`` (n, L, width): + positions, causal encoder, final LN, pool at ``eos_index``, project."""
        from transformers.masking_utils import create_causal_mask

        text = self.model.text_model
        hidden = text.embeddings(inputs_embeds=embeds)
        mask = create_causal_mask(config=text.config, inputs_embeds=hidden, attention_mask=None, cache=None)
        hidden = text.encoder(inputs_embeds=hidden, attention_mask=mask, is_causal=True).last_hidden_state
        hidden = text.final_layer_norm(hidden)
        pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), eos_index.to(hidden.device)]
        feats = self.model.text_projection(pooled)
        return F.normalize(feats, dim=-1) if normalize else feats


def tiny_clip(cfg, tokenizer) -> CLIPBackbone:
    """A fresh tiny CLIP (transformers ``CLIPConfig``) for ``cfg`` with the word ``tokenizer``'s vocabulary."""
    from transformers import CLIPConfig, CLIPModel

    config = CLIPConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": cfg.text_width,
            "intermediate_size": cfg.text_width * 4,
            "num_hidden_layers": cfg.text_layers,
            "num_attention_heads": cfg.text_heads,
            "max_position_embeddings": tokenizer.context_length,
            "pad_token_id": tokenizer.pad_token_id,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
        },
        vision_config={
            "hidden_size": cfg.vision_width,
            "intermediate_size": cfg.vision_width * 4,
            "num_hidden_layers": cfg.vision_layers,
            "num_attention_heads": cfg.vision_heads,
            "image_size": cfg.image_size,
            "patch_size": cfg.patch_size,
        },
        projection_dim=cfg.embed_dim,
    )
    model = CLIPModel(config)
    if getattr(cfg, "word_vectors", "random") == "minilm":
        from methods.vlm.wordvec import minilm_word_vectors

        table = model.text_model.embeddings.token_embedding
        with torch.no_grad():
            table.weight[4:] = minilm_word_vectors(tokenizer.vocab[4:], cfg.text_width)
        table.weight.requires_grad_(False)  # frozen: unseen words stay in the space seen words were learned in
    elif getattr(cfg, "word_vectors", "random") != "random":
        raise ValueError(f"unknown word_vectors {cfg.word_vectors!r}; use 'minilm' or 'random'")
    return CLIPBackbone(model, tokenizer, eos_token_id=tokenizer.eos_token_id, name="tiny-clip")


def load_backbone(path: str | Path, *, device: str | torch.device = "cpu") -> CLIPBackbone:
    """A CLIP checkpoint folder → :class:`CLIPBackbone` on ``device`` (eval mode, frozen); never downloads.

    The weights are read on the CPU and moved to ``device`` (a checkpoint does not depend on
    where it was trained).

    The folder is what ``CLIPModel.save_pretrained`` writes (``config.json`` + weights) plus a
    tokenizer: ``word_vocab.json`` (this package's tiny CLIP) or the files of a ``CLIPTokenizer``.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise CheckpointNotFound(
            f"no CLIP checkpoint folder at {folder}: give a local directory written by "
            "CLIPModel.save_pretrained (config.json + model.safetensors) with its tokenizer; nothing is downloaded"
        )
    if not (folder / "config.json").is_file():
        raise CheckpointNotFound(f"{folder} has no config.json: it is not a saved CLIPModel")
    if not any(folder.glob("*.safetensors")) and not any(folder.glob("*.bin")):
        raise CheckpointNotFound(f"{folder} has a config.json but no weights (*.safetensors or *.bin)")
    from transformers import CLIPModel

    model = CLIPModel.from_pretrained(folder, local_files_only=True).eval().requires_grad_(False)
    if getattr(model, "use_kernels", False):
        # transformers >= 5 kernelizes loaded models with Hugging Face hub kernels and again on every
        # train()/eval() switch, for the device the weights are on then (a download where a kernel
        # exists; an error on devices it does not know). The plain torch layers compute the same here.
        model.use_kernels = False
    if (folder / WORD_VOCAB).is_file():
        from methods.vlm.tokenizer import WordTokenizer

        words = WordTokenizer.load(folder / WORD_VOCAB)
        return CLIPBackbone(model, words, eos_token_id=words.eos_token_id, name=folder.name).to(device).eval()
    if not any((folder / f).is_file() for f in ("tokenizer.json", "vocab.json")):
        raise CheckpointNotFound(
            f"{folder} holds a CLIPModel but no tokenizer: expected word_vocab.json (tiny CLIP) or a CLIPTokenizer's "
            "tokenizer.json / vocab.json + merges.txt (save the tokenizer with save_pretrained into the same folder)"
        )
    from transformers import AutoTokenizer

    hf_tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    max_len = int(model.config.text_config.max_position_embeddings)

    def tokenize(texts: Sequence[str]) -> torch.Tensor:
        return hf_tok(list(texts), padding=True, truncation=True, max_length=max_len, return_tensors="pt")["input_ids"]

    return CLIPBackbone(model, tokenize, eos_token_id=hf_tok.eos_token_id, name=folder.name).to(device).eval()
