"""A diffusers-style module behind the same editing interface (names as in diffusers' FLUX)."""

import torch
from torch import nn

from methods.rf_solver.adapters import ModuleVelocity, find_v_modules
from methods.rf_solver.edit import reconstruct_image, rf_edit


class ToyAttn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.to_q, self.to_k, self.to_v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        a = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, -1)
        return a @ v


class ToyBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = ToyAttn(d)

    def forward(self, x):
        return x + 0.5 * torch.tanh(self.attn(x))


class Output:
    def __init__(self, sample):
        self.sample = sample


class ToyFlux(nn.Module):
    """forward(hidden_states, timestep, encoder_hidden_states, guidance) -> Output(sample=...)."""

    def __init__(self, d=8, blocks=4):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.single_transformer_blocks = nn.ModuleList([ToyBlock(d) for _ in range(blocks)])
        self.out = nn.Linear(d, d)

    def forward(self, hidden_states, timestep, encoder_hidden_states, guidance):
        h = (
            self.inp(hidden_states)
            + encoder_hidden_states
            + 0.1 * timestep[:, None, None]
            + 0.01 * guidance[:, None, None]
        )
        for b in self.single_transformer_blocks:
            h = b(h)
        return Output(self.out(h))


def _model():
    torch.manual_seed(0)
    net = ToyFlux()
    vmods = find_v_modules(net, min_block=2)
    return ModuleVelocity(net, seq_len=6, v_modules=vmods, guidance_kwarg="guidance"), net


def test_find_v_modules_picks_late_single_blocks():
    vm, net = _model()
    assert vm.late_blocks == (2, 3)
    assert vm.v_modules[2] is net.single_transformer_blocks[2].attn.to_v


def test_adapter_reconstruct_and_edit_wiring():
    vm, net = _model()
    x = torch.randn(2, 6, 8, generator=torch.Generator().manual_seed(1))
    src = {"encoder_hidden_states": torch.zeros(1, 1, 8)}
    tgt = {"encoder_hidden_states": torch.full((1, 1, 8), 0.5)}
    rec2, _, _ = reconstruct_image(vm, x, src, 8, order=2)
    rec1, _, _ = reconstruct_image(vm, x, src, 16, order=1)
    assert float((rec2 - x).pow(2).mean()) < float((rec1 - x).pow(2).mean())
    res = rf_edit(vm, x, src, tgt, num_steps=5, inject_k=2, guidance=2.0)
    assert res.cached_tensors == 2 * 2 * 2 and res.nfe == 20
    no_inj = rf_edit(vm, x, src, tgt, num_steps=5, inject_k=0, guidance=2.0)
    assert not torch.allclose(res.edited, no_inj.edited)
    # hooks are removed after every call: a plain forward is unaffected
    assert all(len(m._forward_hooks) == 0 for m in vm.v_modules.values())
