"""FourierMamba modules: FFT path (§7.2), channel branch (§7.4), the U-Net and its Mamba block."""

import pytest
import torch

from methods.fourier_mamba.config import ModelConfig, get_preset
from methods.fourier_mamba.losses import derain_loss
from methods.fourier_mamba.model import (
    ChannelFourierSSM,
    FourierMambaNet,
    SpatialFourierSSM,
    count_params,
    derain_image,
)
from methods.fourier_mamba.ssm import MambaBlock

SMALL = ModelConfig(channels=8, blocks=(1, 1), d_state=4, channel_d=4)


@pytest.mark.parametrize("spectrum", ["amp_phase", "real_imag"])
@pytest.mark.parametrize("hw", [(16, 16), (15, 10)])
def test_spatial_branch_with_identity_ssm_reconstructs_input(spectrum, hw):
    torch.manual_seed(0)
    branch = SpatialFourierSSM(4, ModelConfig(d_state=4, spectrum=spectrum))
    branch.bypass = True
    x = torch.randn(2, 4, *hw)
    assert (branch(x) - x).abs().max() < 1e-5
    spec = torch.fft.rfft2(x, norm="ortho")
    torch.testing.assert_close(branch.combine(*branch.split(spec)), spec, rtol=1e-5, atol=1e-6)


def test_spatial_branch_mixes_frequencies_and_order_matters():
    torch.manual_seed(0)
    zig = SpatialFourierSSM(4, ModelConfig(d_state=4))
    ras = SpatialFourierSSM(4, ModelConfig(d_state=4, scan_order="raster"))
    ras.load_state_dict(zig.state_dict())
    x = torch.randn(1, 4, 12, 12)
    assert (zig(x) - x).abs().max() > 1e-3
    assert (zig(x) - ras(x)).abs().max() > 1e-4


def test_channel_branch_sequence_length_and_not_permutation_invariant():
    torch.manual_seed(0)
    cb = ChannelFourierSSM(16, ModelConfig(d_state=4, channel_d=4))
    x = torch.randn(2, 16, 6, 6)
    assert cb.tokens(x).shape == (2, 16 // 2 + 1, 2)
    perm = torch.randperm(16)
    assert (cb(x[:, perm]) - cb(x)[:, perm]).abs().max() > 1e-4


def test_mamba_block_is_causal_and_implementations_agree():
    torch.manual_seed(0)
    block = MambaBlock(8, d_state=4)
    x = torch.randn(2, 30, 8)
    y = block(x)
    x2 = x.clone()
    x2[:, 17] += 1.0
    y2 = block(x2)
    torch.testing.assert_close(y2[:, :17], y[:, :17], rtol=1e-5, atol=1e-6)
    assert (y2[:, 17:] - y[:, 17:]).abs().max() > 1e-3
    block.scan_impl = "reference"
    torch.testing.assert_close(block(x), y, rtol=1e-4, atol=1e-5)


def test_network_shapes_params_and_padding():
    tiny = get_preset("spec").model
    assert count_params(FourierMambaNet(tiny)) < 300_000  # §6: FourierMamba-Tiny < 0.3M parameters
    net = FourierMambaNet(SMALL)
    x = torch.rand(2, 3, 16, 16)
    assert net(x).shape == x.shape
    with pytest.raises(ValueError, match="multiples"):
        net(torch.rand(1, 3, 15, 16))
    y = derain_image(net, torch.rand(3, 13, 18))
    assert y.shape == (3, 13, 18) and 0 <= y.min() and y.max() <= 1


def test_global_residual_and_loss():
    net = FourierMambaNet(SMALL)
    torch.nn.init.zeros_(net.out.weight)
    torch.nn.init.zeros_(net.out.bias)
    x = torch.rand(1, 3, 16, 16)
    assert torch.equal(net(x), x)  # output = input + f(input)
    assert derain_loss(x, x) == 0
    y = x + 0.1
    assert derain_loss(y, x, 0.0) == pytest.approx(0.1, rel=1e-5)
    assert derain_loss(y, x, 0.1) > derain_loss(y, x, 0.0)  # DC amplitude differs


def test_one_batch_overfits():
    torch.manual_seed(0)
    net = FourierMambaNet(SMALL)
    x = torch.rand(2, 3, 16, 16)
    target = x * 0.5
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    first = None
    for _ in range(15):
        loss = derain_loss(net(x), target)
        first = first if first is not None else float(loss.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss) < 0.5 * first
