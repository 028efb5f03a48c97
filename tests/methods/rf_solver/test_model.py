"""The tiny DiT: shapes, parameter budget, single-stream layout, checkpoint round trip, training."""

import json

import pytest
import torch

from methods.rf_solver.checkpoints import get_model, load_model, model_dir, save_model
from methods.rf_solver.config import PRESETS, TrainConfig, get_preset
from methods.rf_solver.model import RFDiT, SingleStreamBlock, count_params
from methods.rf_solver.train import data_sampler, lr_at, train


@pytest.mark.parametrize("name", ["digits", "photo", "tiny"])
def test_presets_shapes_and_budget(name):
    cfg = PRESETS[name].model
    model = RFDiT(cfg)
    assert count_params(model) <= 1_000_000
    assert cfg.tokens == 64
    x = torch.randn(2, cfg.channels, cfg.image_size, cfg.image_size)
    out = model(x, torch.tensor([0.2, 0.9]), torch.tensor([0, cfg.null_label]))
    assert out.shape == x.shape
    single = [i for i, b in enumerate(model.blocks) if isinstance(b, SingleStreamBlock)]
    assert single == list(cfg.single_blocks) and single[-1] == cfg.depth - 1 and len(single) == cfg.depth // 2


def test_spec_model_shape():
    cfg = PRESETS["digits"].model
    assert (cfg.patch_size, cfg.depth, cfg.width, cfg.heads) == (2, 6, 128, 4)


def test_label_enters_only_through_its_tokens():
    """Every attention sees [label tokens ; image tokens]; with label_in_vector off, the label has no other route."""
    cfg = PRESETS["tiny"].model
    assert cfg.label_in_vector == "none"
    model = RFDiT(cfg)
    with torch.no_grad():  # zero-initialised gates would hide the attention path
        for p in model.parameters():
            if p.abs().sum() == 0:
                p.normal_(0, 0.05)
    lengths = {}

    class Tap:
        def on_qkv(self, block_id, q, k, v):
            lengths[block_id] = v.shape[2]
            return q, k, v

    x = torch.randn(1, 1, 16, 16)
    out3 = model(x, 0.5, torch.tensor([3]), Tap())
    assert lengths == {b: cfg.tokens + cfg.label_tokens for b in range(cfg.depth)}
    assert not torch.allclose(out3, model(x, 0.5, torch.tensor([4])))

    assert "y_vec" not in dict(model.named_parameters()) and model.y_vec is None


def test_patchify_roundtrip():
    model = RFDiT(PRESETS["photo"].model)
    x = torch.randn(2, 3, 32, 32)
    assert torch.equal(model.unpatchify(model.patchify(x)), x)


def test_lr_schedule():
    cfg = TrainConfig(steps=100, warmup=10, lr=1e-3)
    assert lr_at(0, cfg) == pytest.approx(1e-4)
    assert lr_at(9, cfg) == pytest.approx(1e-3)
    assert lr_at(99, cfg) < 1e-5


def test_training_lowers_loss_and_checkpoint_roundtrip(tmp_path):
    preset = get_preset("tiny").with_train(steps=30, batch_size=16)
    result = train(preset.train, RFDiT(preset.model), data_sampler(preset))
    first, last = sum(result.losses[:5]) / 5, sum(result.losses[-5:]) / 5
    assert last < 0.6 * first
    folder = save_model(result.model, preset, model_dir(preset, tmp_path), {"losses": result.losses})
    loaded, config = load_model(folder)
    assert config["preset"] == "tiny" and json.loads((folder / "train.json").read_text())["losses"]
    x = torch.randn(2, 1, 16, 16)
    assert torch.equal(loaded(x, 0.3, torch.tensor([1, 2])), result.model(x, 0.3, torch.tensor([1, 2])))
    again, same = get_model(preset, cache_dir=tmp_path, train_if_missing=False)
    assert same == folder
    with pytest.raises(FileNotFoundError):
        get_model(preset.with_train(steps=31), cache_dir=tmp_path, train_if_missing=False)
