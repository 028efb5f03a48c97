"""Where torch work runs: the shared ``device`` / ``amp`` params and their resolution.

Every torch job's params model inherits :class:`DeviceParams`, so the CLI, the API, the UI
and MCP all show the same two fields::

    class Params(DeviceParams):
        steps: int = Field(200, ge=1)

    def run(params: Params, progress: JobContext) -> Report:
        dev = resolve_device(params.device)          # torch.device, checked at once
        model = fit(model, batches, loss, device=dev, amp=params.amp, ...)
        report.metrics.update(device_provenance(dev, params.amp))

``device``:

* ``cpu`` — this process's CPU (the default; bit-identical to the code before devices existed);
* ``cuda`` — a GPU: submission routes the job to the ``gpu`` queue (a 422 where the deployment
  declares no GPU worker), and a worker without CUDA fails the job at once with
  :class:`DeviceUnavailable` (a permanent error: retrying on the same worker cannot help);
* ``auto`` — a GPU where the deployment declares GPU workers (routing) and the worker has
  CUDA (execution), else the CPU.

``amp``: ``off`` (fp32) or ``bf16`` (``torch.autocast`` with bfloat16; no grad scaler needed).

Library code may pass any torch device string (``"cuda:1"``; ``"meta"`` for shapes only;
``"lazy"``, PyTorch's lazy-tensor device on its TorchScript backend, which the device-leak tests
use as a stand-in accelerator: it computes real numbers on the CPU but refuses to mix with CPU
tensors, as CUDA does); job params accept only the three names above.

torch is imported lazily, so importing :mod:`core` does not load it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

DeviceName = Literal["cpu", "auto", "cuda"]
AmpName = Literal["off", "bf16"]

DEVICE_HELP = (
    "Where the torch work runs: cpu (this machine's CPU), cuda (a GPU worker; refused at submission "
    "when the deployment declares none) or auto (a GPU when one is available, else the CPU)."
)
AMP_HELP = "Mixed precision: off (fp32) or bf16 (bfloat16 autocast; meant for CUDA, slow on most CPUs)."


class DeviceUnavailable(RuntimeError):
    """The job asked for a device this process does not have (permanent: a retry here cannot help)."""


class DeviceParams(BaseModel):
    """Mixin for every torch job's params: where it runs and in which precision."""

    device: DeviceName = Field("cpu", description=DEVICE_HELP)
    amp: AmpName = Field("off", description=AMP_HELP)


def cuda_available() -> bool:
    """Whether this process can use CUDA (False where torch is a CPU build)."""
    import torch

    return bool(torch.cuda.is_available())


def resolve_device(device: Any = "cpu") -> Any:
    """The ``torch.device`` for a params value (``cpu`` / ``auto`` / ``cuda``) or any torch device string.

    Raises :class:`DeviceUnavailable` for ``cuda`` where this process has no CUDA.
    """
    import torch

    if isinstance(device, torch.device):
        name = str(device)
    else:
        name = str(device or "cpu").strip().lower()
    if name == "auto":
        return torch.device("cuda" if cuda_available() else "cpu")
    if name.startswith("cuda") and not cuda_available():
        raise DeviceUnavailable(
            f"device={name!r} asked for a GPU, but this worker has no CUDA "
            f"(torch {torch.__version__}, torch.cuda.is_available() is False): run it with device=cpu or auto, "
            "or on a worker that consumes the gpu queue on a machine with a GPU (docs/GPU.md)"
        )
    try:
        return torch.device(name)
    except RuntimeError as exc:
        raise ValueError(f"unknown device {name!r}: {exc}") from None


def autocast(device: Any, amp: str = "off") -> contextlib.AbstractContextManager[Any]:
    """``torch.autocast`` in bfloat16 for ``amp="bf16"`` on CUDA or the CPU; a no-op context otherwise."""
    import torch

    if amp not in ("off", "bf16"):
        raise ValueError(f"amp must be 'off' or 'bf16', got {amp!r}")
    dev = resolve_device(device)
    if amp == "off" or dev.type not in ("cuda", "cpu"):
        return contextlib.nullcontext()
    return torch.autocast(device_type=dev.type, dtype=torch.bfloat16)


def to_device(obj: Any, device: Any, *, non_blocking: bool = True) -> Any:
    """Move every tensor in ``obj`` (tensors, tuples, lists, dicts, namedtuples) to ``device``.

    Anything else is returned as is; a tensor already there is not copied.
    """
    import torch

    if device is None:
        return obj
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=non_blocking and obj.device.type == "cpu")
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(to_device(v, device, non_blocking=non_blocking) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(v, device, non_blocking=non_blocking) for v in obj)
    if isinstance(obj, Mapping):
        return type(obj)({k: to_device(v, device, non_blocking=non_blocking) for k, v in obj.items()})  # type: ignore[call-arg]
    return obj


def device_provenance(device: Any, amp: str = "off") -> dict[str, Any]:
    """What a report records about where it ran: device, compute dtype and the GPU's name (if any)."""
    import torch

    dev = resolve_device(device)
    out: dict[str, Any] = {"device": str(dev), "dtype": "bfloat16 autocast" if amp == "bf16" else "float32"}
    if dev.type == "cuda":
        index = dev.index if dev.index is not None else torch.cuda.current_device()
        out["gpu"] = torch.cuda.get_device_name(index)
    return out


@contextlib.contextmanager
def on_device(device: Any) -> Iterator[Any]:
    """Resolve ``device`` once and make it the current CUDA device inside the block (no-op elsewhere)."""
    import torch

    dev = resolve_device(device)
    if dev.type == "cuda" and dev.index is not None:
        with torch.cuda.device(dev.index):
            yield dev
    else:
        yield dev


def step_barrier(device: Any) -> None:
    """End of one training or sampling step: cut the lazy-tensor graph (``lazy`` device); no-op elsewhere.

    The lazy device records operations until a value is needed; without a cut every step would
    grow one graph. CUDA and the CPU need nothing here (no sync happens).
    """
    if getattr(device, "type", device) == "lazy":
        import torch._lazy

        torch._lazy.mark_step()
