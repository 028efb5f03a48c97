"""FourierMamba: Fourier residual state-space blocks in a small restoration U-Net (spec §3).

Modules, bottom-up:

* :class:`SpatialFourierSSM` — rfft2 (orthonormal) → fftshift of the rows → log-amplitude and
  phase (or real and imaginary parts) as two real maps → per map: 1×1 conv, tokens in the
  zigzag low→high order, Mamba, back to the grid, residual → recombine A′·e^{jP′} →
  inverse shift → irfft2 (§3.1, §3.2);
* :class:`ChannelFourierSSM` — global average pool → rfft along channels (C/2+1 frequencies in
  natural order) → (real, imag) lifted to d → Mamba → back to 2 → irfft to C values → sigmoid
  gate × X (§3.3);
* :class:`FRSSB` — LayerNorm → depthwise 3×3 conv (the spatial-domain path) → the two SSMs in
  parallel → 1×1 projection, residual; then LayerNorm → gated depthwise-conv FFN, residual (§3.4);
* :class:`FourierMambaNet` — 3×3 embedding, encoder levels with pixel-unshuffle downsampling,
  latent, decoder with pixel-shuffle upsampling + skip concatenation + 1×1 reduction, optional
  refinement, 3×3 output and the global residual ``output = input + f(input)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from methods.fourier_mamba.config import ModelConfig
from methods.fourier_mamba.scan_order import scan_order
from methods.fourier_mamba.ssm import MambaBlock


class ChannelLayerNorm(nn.Module):
    """LayerNorm over the channels of a (b, c, h, w) map (Restormer's WithBias LayerNorm)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class SpatialFourierSSM(nn.Module):
    """Mamba over the 2-D spectrum in a low→high scan order; identity when ``bypass`` is set (§7.2 check)."""

    def __init__(self, dim: int, cfg: ModelConfig) -> None:
        super().__init__()
        self.order, self.spectrum, self.bypass = cfg.scan_order, cfg.spectrum, False
        self.pre = nn.ModuleList([nn.Conv2d(dim, dim, 1) for _ in range(2)])
        self.ssm = nn.ModuleList([MambaBlock(dim, cfg.d_state, cfg.expand, scan_impl=cfg.scan_impl) for _ in range(2)])

    def split(self, spec: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(log(1 + A), P) — or (Re, Im) with ``spectrum="real_imag"``.

        The amplitude enters in log form: with the orthonormal FFT the DC amplitude grows as √(HW), so a
        network trained on 32×32 crops saw amplitudes 16× smaller than a 512×512 image has (measured:
        linear amplitudes gave 37.4 dB → 39.2 dB on a 64×64 Rain100L crop but 26.7 → 7.4 dB at 256×256).
        In log form the size becomes a bounded additive shift, and the branch's residual is a
        multiplicative gain on A (rain removal attenuates frequencies).
        """
        if self.spectrum == "amp_phase":
            return torch.log1p(spec.abs()), spec.angle()
        return spec.real, spec.imag

    def combine(self, p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        if self.spectrum == "amp_phase":
            amp = torch.expm1(p)
            return torch.complex(amp * torch.cos(q), amp * torch.sin(q))  # A′·cos P′ + j·A′·sin P′
        return torch.complex(p, q)

    def _scan(self, k: int, m: torch.Tensor, perm: torch.Tensor, inverse: torch.Tensor) -> torch.Tensor:
        b, c, h, w = m.shape
        seq = self.pre[k](m).flatten(2)[..., perm]  # (b, c, L) in scan order
        out = self.ssm[k](seq.transpose(1, 2)).transpose(1, 2)
        return m + out[..., inverse].reshape(b, c, h, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = x.shape[-2:]
        spec = torch.fft.fftshift(torch.fft.rfft2(x.float(), norm="ortho"), dim=-2)
        p, q = self.split(spec)
        if not self.bypass:
            perm, inverse = (t.to(x.device) for t in scan_order(self.order, h, spec.shape[-1], half=True))
            p, q = self._scan(0, p, perm, inverse), self._scan(1, q, perm, inverse)
        spec = torch.fft.ifftshift(self.combine(p, q), dim=-2)
        return torch.fft.irfft2(spec, s=(h, w), norm="ortho").to(x.dtype)


class ChannelFourierSSM(nn.Module):
    """Squeeze-and-excitation through Mamba over the channel spectrum (sequence length C/2 + 1)."""

    def __init__(self, dim: int, cfg: ModelConfig) -> None:
        super().__init__()
        self.lift = nn.Linear(2, cfg.channel_d)
        self.ssm = MambaBlock(cfg.channel_d, cfg.d_state, cfg.expand, scan_impl=cfg.scan_impl)
        self.head = nn.Linear(cfg.channel_d, 2)

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """(b, C/2+1, 2): real and imaginary parts of the rfft of the pooled channels."""
        spec = torch.fft.rfft(x.float().mean(dim=(2, 3)), dim=1, norm="ortho")
        return torch.stack([spec.real, spec.imag], dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tok = self.tokens(x)
        tok = tok + self.head(self.ssm(self.lift(tok)))
        g = torch.fft.irfft(torch.complex(tok[..., 0], tok[..., 1]), n=x.shape[1], dim=1, norm="ortho")
        return x * torch.sigmoid(g).to(x.dtype)[:, :, None, None]


class GatedDconvFFN(nn.Module):
    """Restormer's gated depthwise-conv feed-forward network."""

    def __init__(self, dim: int, expansion: float) -> None:
        super().__init__()
        hidden = max(1, int(dim * expansion))
        self.pin = nn.Conv2d(dim, 2 * hidden, 1, bias=False)
        self.dw = nn.Conv2d(2 * hidden, 2 * hidden, 3, padding=1, groups=2 * hidden, bias=False)
        self.pout = nn.Conv2d(hidden, dim, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.dw(self.pin(x)).chunk(2, dim=1)
        return self.pout(F.gelu(a) * b)


class FRSSB(nn.Module):
    """Fourier residual state-space block."""

    def __init__(self, dim: int, cfg: ModelConfig) -> None:
        super().__init__()
        self.norm1 = ChannelLayerNorm(dim)
        self.dw = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.spatial = SpatialFourierSSM(dim, cfg)
        self.channel = ChannelFourierSSM(dim, cfg)
        self.proj = nn.Conv2d(dim, dim, 1)
        self.norm2 = ChannelLayerNorm(dim)
        self.ffn = GatedDconvFFN(dim, cfg.ffn_expansion)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw(self.norm1(x))
        x = x + self.proj(self.spatial(y) + self.channel(y))
        return x + self.ffn(self.norm2(x))


class FourierMambaNet(nn.Module):
    """The U-Net; input (b, 3, H, W) in [0, 1] with H, W multiples of ``cfg.multiple``."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        c, levels = cfg.channels, len(cfg.blocks)
        dims = [c * 2**i for i in range(levels)]
        self.embed = nn.Conv2d(3, c, 3, padding=1)
        self.encoders = nn.ModuleList(
            [nn.Sequential(*[FRSSB(dims[i], cfg) for _ in range(cfg.blocks[i])]) for i in range(levels - 1)]
        )
        self.downs = nn.ModuleList(
            [nn.Sequential(nn.Conv2d(d, d // 2, 3, padding=1, bias=False), nn.PixelUnshuffle(2)) for d in dims[:-1]]
        )
        self.latent = nn.Sequential(*[FRSSB(dims[-1], cfg) for _ in range(cfg.blocks[-1])])
        self.ups = nn.ModuleList(
            [
                nn.Sequential(nn.Conv2d(dims[i + 1], 2 * dims[i + 1], 1, bias=False), nn.PixelShuffle(2))
                for i in range(levels - 1)
            ]
        )
        self.reduce = nn.ModuleList([nn.Conv2d(2 * d, d, 1, bias=False) for d in dims[:-1]])
        self.decoders = nn.ModuleList(
            [nn.Sequential(*[FRSSB(dims[i], cfg) for _ in range(cfg.blocks[i])]) for i in range(levels - 1)]
        )
        self.refine = nn.Sequential(*[FRSSB(c, cfg) for _ in range(cfg.refinement)])
        self.out = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        m = self.cfg.multiple
        if img.shape[-1] % m or img.shape[-2] % m:
            raise ValueError(f"height and width must be multiples of {m}, got {tuple(img.shape[-2:])}")
        x = self.embed(img)
        skips = []
        for enc, down in zip(self.encoders, self.downs, strict=True):
            x = enc(x)
            skips.append(x)
            x = down(x)
        x = self.latent(x)
        for i in reversed(range(len(self.decoders))):
            x = self.reduce[i](torch.cat([self.ups[i](x), skips[i]], dim=1))
            x = self.decoders[i](x)
        return img + self.out(self.refine(x))


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@torch.no_grad()
def derain_image(model: FourierMambaNet, rainy: torch.Tensor) -> torch.Tensor:
    """Derain (3, H, W) or (b, 3, H, W) of any size: reflect-pad to the model's multiple, run, crop, clip.

    Runs on the model's device; the result comes back on ``rainy``'s device.
    """
    single = rainy.dim() == 3
    x = rainy[None] if single else rainy
    x = x.to(next(model.parameters()).device)
    h, w = x.shape[-2:]
    m = model.cfg.multiple
    ph, pw = (-h) % m, (-w) % m
    if ph or pw:
        x = F.pad(x, (0, pw, 0, ph), mode="reflect")
    y = model(x)[..., :h, :w].clamp(0.0, 1.0).to(rainy.device)
    return y[0] if single else y
