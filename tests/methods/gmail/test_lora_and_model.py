"""LoRA (spec §7.3), the freeze / asymmetry of stage 1 (§7.2) and the inference router (§7.4)."""

import pytest
import torch

from methods.gmail.lora import LoRALinear, add_lora, expected_lora_count, lora_parameters
from methods.gmail.losses import align_loss
from methods.gmail.model import GmailEncoders


def test_lora_linear_starts_as_the_base_layer_and_counts_r_times_din_plus_dout():
    base = torch.nn.Linear(10, 6)
    lora = LoRALinear(base, r=3, alpha=3.0)
    x = torch.randn(4, 10)
    assert torch.equal(lora(x), base(x))
    trainable = [p for p in lora.parameters() if p.requires_grad]
    assert sum(p.numel() for p in trainable) == 3 * (10 + 6)
    assert not base.weight.requires_grad and not base.bias.requires_grad
    with torch.no_grad():
        lora.lora_b.fill_(0.1)
    manual = x @ lora.weight.t() + base.bias
    assert torch.allclose(lora(x), manual, atol=1e-6)
    with pytest.raises(ValueError):
        LoRALinear(base, r=0)


def test_add_lora_targets_only_the_attention_projections(tiny_backbone):
    import copy

    vision = copy.deepcopy(tiny_backbone.model.vision_model)
    names = add_lora(vision, 4, 4.0)
    layers = tiny_backbone.model.config.vision_config.num_hidden_layers
    assert len(names) == 4 * layers
    assert {n.rsplit(".", 1)[1] for n in names} == {"q_proj", "k_proj", "v_proj", "out_proj"}
    assert all("mlp" not in n for n in names)
    trainable = [p for p in vision.parameters() if p.requires_grad]
    assert sum(p.numel() for p in trainable) == expected_lora_count(vision)
    w = tiny_backbone.model.config.vision_config.hidden_size
    assert expected_lora_count(vision) == 4 * layers * 4 * (w + w)
    with pytest.raises(ValueError):
        add_lora(torch.nn.Sequential(torch.nn.ReLU()), 4, 4.0)


def test_f_g_equals_f_r_at_initialisation(tiny_backbone, few_pairs):
    enc = GmailEncoders(tiny_backbone, rank=4)
    with torch.no_grad():
        assert torch.equal(enc.f_g(few_pairs.gen), enc.f_r(few_pairs.gen))
        assert torch.allclose(enc.f_r(few_pairs.real), tiny_backbone.encode_image(few_pairs.real), atol=1e-6)


def test_a_stage1_step_moves_only_lora_and_proj_for_gen(tiny_backbone, few_pairs):
    enc = GmailEncoders(tiny_backbone, rank=4)
    real_before = {k: v.clone() for k, v in tiny_backbone.state_dict().items()}
    frozen_gen_before = {n: p.clone() for n, p in enc.gen_vision.named_parameters() if not p.requires_grad}
    proj_before = enc.gen_proj.weight.clone()
    trainable = enc.trainable_parameters()
    opt = torch.optim.AdamW(trainable, lr=1e-2)
    with torch.no_grad():
        target = enc.f_r(few_pairs.real)
    align_loss(enc.f_g(few_pairs.gen), target).backward()
    got_grad = {id(p) for p in enc.parameters() if p.grad is not None}
    assert got_grad == {id(p) for p in trainable}
    opt.step()
    assert all(torch.equal(real_before[k], v) for k, v in tiny_backbone.state_dict().items())  # f_r bit-identical
    assert all(
        torch.equal(frozen_gen_before[n], p) for n, p in enc.gen_vision.named_parameters() if not p.requires_grad
    )
    assert not torch.equal(proj_before, enc.gen_proj.weight)
    assert any(m.lora_b.abs().sum() > 0 for m in enc.gen_vision.modules() if isinstance(m, LoRALinear))
    assert len(lora_parameters(enc.gen_vision)) == 2 * len(enc.adapted)


def test_router_never_sends_real_images_through_f_g_by_default(tiny_backbone, few_pairs, monkeypatch):
    enc = GmailEncoders(tiny_backbone)
    calls = []
    real_tower = enc.real_tower
    monkeypatch.setattr(enc, "gen_tower", lambda x: calls.append(len(x)) or pytest.fail("f_g used on real images"))
    monkeypatch.setattr(enc, "real_tower", lambda x: calls.append(-len(x)) or real_tower(x))
    out = enc.encode(few_pairs.real, "real")
    assert calls == [-len(few_pairs.real)] and out.shape[0] == len(few_pairs.real)


def test_router_lora_switch_uses_the_lora_tower_with_proj_for_real(tiny_backbone, few_pairs):
    enc = GmailEncoders(tiny_backbone)
    with torch.no_grad():
        for m in enc.gen_vision.modules():
            if isinstance(m, LoRALinear):
                m.lora_b.normal_()
        enc.gen_proj.weight.mul_(-1)
        lora = enc.encode(few_pairs.real, "real", "lora")
        expected = torch.nn.functional.normalize(
            tiny_backbone.model.visual_projection(enc.gen_tower(few_pairs.real)), dim=-1
        )
        assert torch.allclose(lora, expected, atol=1e-6)
        assert not torch.allclose(lora, enc.encode(few_pairs.real, "real"), atol=1e-3)
    with pytest.raises(ValueError):
        enc.encode(few_pairs.real, "real", "both")
