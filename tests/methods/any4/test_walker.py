"""The model walker, QuantLinear, calibration and checkpoints on a tiny random llama."""

import copy

import pytest
import torch
from torch import nn

from methods.any4 import QuantConfig, QuantLinear, load_quantized, quantize_model, save_quantized
from methods.any4.calibrate import collect_input_means, read_default_prompt
from methods.any4.walker import linear_layers, replace_with_dense


def test_walker_swaps_every_linear_but_lm_head(tiny_llama):
    targets, _ = linear_layers(tiny_llama, ("lm_head",))
    summary = quantize_model(tiny_llama, QuantConfig(fmt="int4", group_size=32))
    assert len(summary.layers) == len(targets) == 2 * 7
    assert summary.skipped == ["lm_head"]
    assert type(tiny_llama.lm_head) is nn.Linear
    assert all(type(m) is not nn.Linear for n, m in tiny_llama.named_modules() if n != "lm_head")
    assert summary.bits_per_weight == pytest.approx(4.0 + 32 / 32)
    assert 0 < summary.weight_mse < 1e-3


@pytest.mark.parametrize("fmt,cal", [("any4", "offline"), ("nf4", "none"), ("any2", "online")])
def test_quantized_logits_match_dequantized_model(tiny_llama, calib_ids, fmt, cal):
    """QuantLinear's CPU paths give the logits of a dense model holding Ŵ, to fp32 rounding."""
    quantize_model(tiny_llama, QuantConfig(fmt=fmt, group_size=32, calibration=cal), calib_ids=calib_ids)
    dense = replace_with_dense(copy.deepcopy(tiny_llama))
    ids = torch.randint(0, 96, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref = dense(input_ids=ids).logits
        for mode in ("cached", "dequant"):
            for m in tiny_llama.modules():
                if isinstance(m, QuantLinear):
                    m.cpu_mode = mode
            torch.testing.assert_close(tiny_llama(input_ids=ids).logits, ref, rtol=1e-5, atol=1e-5)


def test_quantization_changes_the_model_and_formats_rank_sensibly(tiny_llama):
    """Weight MSE: any4 < int4 and fp4 worst among 4-bit; any2 ≫ any4."""
    mse = {}
    for fmt in ("int4", "nf4", "fp4", "any4", "any2"):
        m = copy.deepcopy(tiny_llama)
        mse[fmt] = quantize_model(m, QuantConfig(fmt=fmt, group_size=32, calibration="none")).weight_mse
    assert mse["any4"] < mse["int4"] and mse["any4"] < mse["nf4"]
    assert mse["fp4"] > max(mse["int4"], mse["nf4"])
    assert mse["any2"] > 5 * mse["any4"]


def test_offline_means_are_signed_means_over_tokens(tiny_llama, calib_ids):
    layer = tiny_llama.model.layers[0].mlp.down_proj
    seen = []
    h = layer.register_forward_hook(lambda m, a, o: seen.append(a[0].reshape(-1, a[0].shape[-1])))
    means = collect_input_means(tiny_llama, calib_ids, {"down": layer})
    h.remove()
    torch.testing.assert_close(means["down"], seen[0].mean(dim=0))
    assert (means["down"] < 0).any()  # signed: |·| is taken by the quantizer, after averaging


def test_online_calibration_sees_quantized_predecessors(tiny_llama, calib_ids):
    """Online and offline statistics agree for the first layer and differ later (§3.3)."""
    cfg_on = QuantConfig(fmt="any4", group_size=32, calibration="online")
    cfg_off = QuantConfig(fmt="any4", group_size=32, calibration="offline")
    on, off = copy.deepcopy(tiny_llama), copy.deepcopy(tiny_llama)
    quantize_model(on, cfg_on, calib_ids=calib_ids)
    quantize_model(off, cfg_off, calib_ids=calib_ids)
    first_on, first_off = on.model.layers[0].self_attn.q_proj, off.model.layers[0].self_attn.q_proj
    assert torch.equal(first_on.lut, first_off.lut)
    last_on, last_off = on.model.layers[1].mlp.down_proj, off.model.layers[1].mlp.down_proj
    assert not torch.equal(last_on.lut, last_off.lut)
    with pytest.raises(ValueError, match="calibration"):
        quantize_model(copy.deepcopy(tiny_llama), cfg_on)


def test_checkpoint_round_trip(tmp_path, tiny_llama, calib_ids):
    quantize_model(tiny_llama, QuantConfig(fmt="any4", group_size=32), calib_ids=calib_ids)
    save_quantized(tiny_llama, tmp_path / "ckpt", quant_config={"fmt": "any4"}, metadata={"note": "t"})
    loaded, meta = load_quantized(tmp_path / "ckpt")
    assert meta["metadata"]["note"] == "t" and len(meta["layers"]) == 14
    ids = torch.randint(0, 96, (1, 12), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(loaded(input_ids=ids).logits, tiny_llama(input_ids=ids).logits, rtol=0, atol=0)
    q = loaded.model.layers[1].mlp.up_proj
    assert isinstance(q, QuantLinear) and q.packed.dtype == torch.uint8
    assert loaded.lm_head.weight.data_ptr() == loaded.model.embed_tokens.weight.data_ptr()


def test_quant_linear_with_bias_and_validation():
    lin = nn.Linear(64, 8)
    from methods.any4.quantizers import AnyQuantizer

    q = QuantLinear.from_quantized(AnyQuantizer(4).quantize(lin.weight, 32), lin.bias)
    x = torch.randn(3, 64)
    torch.testing.assert_close(q(x), x @ q.dequantized_weight().t() + lin.bias)
    with pytest.raises(ValueError):
        QuantLinear(60, 8, group_size=32)


def test_default_prompt_is_byte_exact(data_dir):
    import hashlib

    text = read_default_prompt(data_dir)
    assert (
        hashlib.sha256(text.encode()).hexdigest() == "eccb766a5d869e92447175639a592715dfea1a0242943c19c037668b387369b2"
    )


def test_online_block_replay_equals_a_full_pass(tiny_llama, calib_ids):
    """Re-running only the enclosing block gives the same input means as a full forward pass."""
    from methods.any4.calibrate import OnlineCalibrator, enclosing_block

    quantize_model(tiny_llama, QuantConfig(fmt="int4", group_size=32))
    cal = OnlineCalibrator(tiny_llama, calib_ids)
    for name in ("model.layers.0.self_attn.q_proj", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"):
        layer = tiny_llama.get_submodule(name)
        assert enclosing_block(tiny_llama, name) == ".".join(name.split(".")[:3])
        full = collect_input_means(tiny_llama, calib_ids, {name: layer}, stop_after=name)[name]
        torch.testing.assert_close(cal.means(name, layer), full, rtol=1e-5, atol=1e-6)
    assert enclosing_block(tiny_llama, "lm_head") is None


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: QuantLinear dispatches to Triton there")
def test_quantized_model_on_cuda_uses_the_kernel_and_matches_cpu(tiny_llama, calib_ids):
    quantize_model(tiny_llama, QuantConfig(fmt="any4", group_size=32), calib_ids=calib_ids)
    ids = torch.randint(0, 96, (1, 8), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        cpu = tiny_llama(input_ids=ids).logits
        gpu = tiny_llama.cuda()(input_ids=ids.cuda()).logits.cpu()
    torch.testing.assert_close(gpu, cpu, rtol=1e-4, atol=1e-4)
