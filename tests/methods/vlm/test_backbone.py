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
