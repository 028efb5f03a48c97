"""The VLBackbone: tiny CLIP, checkpoint loading with clear errors, the prompt-learner hooks."""

import pytest
import torch

from methods.vlm.backbone import CheckpointNotFound, VLBackbone, load_backbone
from methods.vlm.cache import save
from methods.vlm.config import get_preset


def test_missing_checkpoint_gives_a_clear_error(tmp_path):
    with pytest.raises(CheckpointNotFound, match="nothing is downloaded"):
        load_backbone(tmp_path / "nope")
    with pytest.raises(CheckpointNotFound, match="no config.json"):
        load_backbone(tmp_path)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(CheckpointNotFound, match="no weights"):
        load_backbone(tmp_path)


def test_checkpoint_without_tokenizer_is_refused(tiny, tmp_path):
    tiny.model.save_pretrained(tmp_path)
    with pytest.raises(CheckpointNotFound, match="no tokenizer"):
        load_backbone(tmp_path)


def test_saved_tiny_clip_loads_back_identically(tiny, tmp_path):
    folder = save(tiny, get_preset("test"), tmp_path / "m", {"losses": [1.0]})
    again = load_backbone(folder)
    assert isinstance(again, VLBackbone)
    x = torch.rand(3, 3, 32, 32)
    tokens = again.tokenize(["a red circle.", "a photo of a tomato."])
    assert torch.allclose(again.encode_image(x), tiny.encode_image(x), atol=1e-6)
    assert torch.allclose(again.encode_text(tokens), tiny.encode_text(tokens), atol=1e-6)
    assert again.logit_scale == pytest.approx(tiny.logit_scale)


def test_text_path_matches_transformers_pooling(tiny):
    tokens = tiny.tokenize(["a red circle.", "two blue stars on a gray background."])
    with torch.no_grad():
        ours = tiny.encode_text(tokens, normalize=False)
        theirs = tiny.model.get_text_features(input_ids=tokens).pooler_output
    assert torch.allclose(ours, theirs, atol=1e-5)
    feats = tiny.encode_text(tokens)
    assert torch.allclose(feats.norm(dim=-1), torch.ones(2), atol=1e-5)


def test_images_are_resized_and_checked(tiny):
    with torch.no_grad():
        assert tiny.encode_image(torch.rand(2, 3, 64, 48)).shape == (2, tiny.model.config.projection_dim)
    with pytest.raises(ValueError):
        tiny.encode_image(torch.rand(2, 1, 32, 32))


def test_hf_clip_checkpoint_with_its_tokenizer_loads_offline(tmp_path):
    """A saved CLIPModel + CLIPTokenizer folder (here a character-level toy) loads through the same API."""
    import json

    from transformers import CLIPConfig, CLIPModel, CLIPTokenizer

    chars = "abcdefghijklmnopqrstuvwxyz."
    vocab = {c: i for i, c in enumerate(chars)} | {c + "</w>": len(chars) + i for i, c in enumerate(chars)}
    vocab |= {"<|startoftext|>": len(vocab), "<|endoftext|>": len(vocab) + 1}
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    tok = CLIPTokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    small = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2}
    config = CLIPConfig(
        text_config={
            **small,
            "vocab_size": len(vocab),
            "eos_token_id": tok.eos_token_id,
            "bos_token_id": tok.bos_token_id,
            "pad_token_id": tok.pad_token_id,
            "max_position_embeddings": 24,
        },  # fmt: skip
        vision_config={**small, "image_size": 32, "patch_size": 8},
        projection_dim=16,
    )
    CLIPModel(config).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    bb = load_backbone(tmp_path)
    tokens = bb.tokenize(["a cat.", "a dog"])
    assert (tokens == tok.eos_token_id).any(dim=1).all()
    with torch.no_grad():
        ours = bb.encode_text(tokens, normalize=False)
        theirs = bb.model.get_text_features(input_ids=tokens).pooler_output
    assert torch.allclose(ours, theirs, atol=1e-5)
    assert bb.encode_image(torch.rand(2, 3, 40, 40)).shape == (2, 16)
