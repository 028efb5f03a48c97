"""Every torch job runs where its params say: the device contract, the device-leak run, the GPU run.

* ``test_torch_methods_take_device_and_amp`` — a registry contract: every method is either in
  :data:`CASES` (a torch job: its params model has ``device`` = cpu | auto | cuda, default
  ``cpu``, and ``amp`` = off | bf16, default ``off``) or in :data:`NO_TORCH` (no tensor work of
  its own: LLM calls through the gateway, graphs, diagnostics), never both, never neither.
* ``test_tiny_preset_runs_on_a_stand_in_accelerator`` — each torch job's tiny preset runs to its
  report on PyTorch's ``lazy`` device (``tests/devices.py``), which fails on any tensor built on
  the CPU behind the caller's back and mixed with the model's; the report records the device.
* ``test_tiny_preset_on_cuda_matches_the_cpu_run`` (``-m gpu``, one per torch job) — the same
  preset on CUDA and on the CPU; the metrics named by the case agree within its tolerance.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field
from typing import Any

import pytest

from core.jobs import list_methods, load_all
from core.jobs.context import null_context
from tests.devices import cuda_or_skip, lazy_safe_views, params_on, stand_in_device
from tests.methods.any4.fakes import EVAL_CHECKPOINT, TINY_QUANTIZE, tiny_base, tiny_base_with_checkpoint
from tests.methods.double_filter.fakes import fresh_runs
from tests.methods.fourier_mamba.fakes import SMALL_SHA, isolated_models, tiny_model_and_small_upload
from tests.methods.lms3.fakes import QUERY as LMS3_QUERY
from tests.methods.lms3.fakes import tiny_local_model
from tests.methods.m3_jepa.fakes import install as m3_jepa_stand_ins
from tests.methods.rf_solver.fakes import tiny_digits_model
from tests.methods.sefe.fakes import tiny_local_model as tiny_llama_for_every_local_model


@dataclass(frozen=True)
class Case:
    """A torch job's tiny preset and the metrics to compare between devices."""

    params: dict[str, Any]
    compare: tuple[str, ...] = ()
    rtol: float = 0.05
    atol: float = 1e-3
    marks: tuple[Any, ...] = field(default=())
    # setup(monkeypatch, tmp_path) before each run: stand-ins a job needs to run in seconds in a test
    # (e.g. synthetic frozen-encoder features instead of ten minutes of LLM encoding), undone after it.
    setup: Any = None


# One entry per torch job: its smallest meaningful params (seconds on two cores), and the metrics
# (keys of Report.metrics) whose CPU and CUDA values must agree.
CASES: dict[str, Case] = {
    # helper M2b: DPCR (through continual.run), long-short alignment, nonlinear SDR, SEFE, PAE's learner
    "continual.run": Case(
        {
            "method": "dpcr",
            "n_tasks": 2,
            "seeds": 1,
            "samples_per_class": 40,
            "options": {
                "channels": [4, 8, 8],
                "epochs_first": 2,
                "milestones_first": [1],
                "epochs_inc": 1,
                "milestones_inc": [1],
                "tssp_passes": 2,
            },
        },
        compare=("A_f",),  # the dpcr arm's; 3 epochs of a tiny CNN: accuracies move a few test items apart
        rtol=0.0,
        atol=0.15,
    ),
    "lsa.synthetic": Case(
        {"task": "mean", "pe": "sinusoidal", "steps": 3, "eval_per_length": 10},
        compare=("final_train_loss", "mse@5"),
        rtol=0.02,
    ),
    "lsa.lm": Case(
        {
            "l_train": 16,
            "d": 16,
            "layers": 1,
            "stage_a_steps": 2,
            "stage_b_steps": 2,
            "alphas": [0.0, 0.1],
            "saves": 1,
            "eval_tokens": 512,
        },
        compare=("last_train_loss", "last_heldout_nll"),
        rtol=0.01,
    ),
    "lsa.smollm2": Case(
        {"l_train": 16, "n_samples": 2},
        compare=("sce", "skl_same"),
        rtol=0.01,
        setup=tiny_llama_for_every_local_model,  # SmolLM2 on the stand-in: minutes per forward pass
    ),
    "nonlinear_sdr.fit": Case(
        {"dataset": "iris", "method": "neural", "n_components": 2, "evaluate": False, "neural_steps": 20},
        compare=("eigenvalue_share_1",),
        rtol=0.05,
        atol=0.02,
    ),
    "nonlinear_sdr.simulate": Case(
        {"model": "M1", "n": 60, "p": 4, "seeds": [0], "estimators": ["neural PSVM"], "neural_steps": 20},
        compare=("neural PSVM.rho",),
        rtol=0.0,
        atol=0.05,
    ),
    "sefe.run": Case(
        {
            "tasks": ["iris", "cancer"],
            "adapt_layers": 1,
            "n_train": 4,
            "n_test": 2,
            "epochs": 1,
            "batch_size": 4,
            "seeds": [0],
            "arms": ["seq", "sefe"],
            "max_new_tokens": 2,
            "eval_batch": 2,
            "cache": False,  # train every stage here, never a stage cached by another run
        },
        compare=("seq.train_ce_last", "sefe.train_ce_last"),
        rtol=0.01,
        setup=tiny_llama_for_every_local_model,
    ),
    "pae.train": Case(
        {
            "name": "device-case",
            "train_sites": ["dictionary"],
            "heldout_sites": ["news"],
            "tasks_per_site": 1,
            "test_tasks_per_site": 0,
            "webarena_tasks": 0,
            "llm_tasks_per_site": 0,
            "iterations": 0,
            "initial_test": False,
            "sft_demos_per_site": 1,  # the scripted demonstrator in chromium, then the SFT start: LoRA BC
            "sft_epochs": 1,
            "sft_cache": False,
            "max_len": 128,
            "lora_r": 2,
            "lora_alpha": 4,
            "grad_accum": 1,
            "max_steps": 4,
            "wait_s": 0,
            "judge_tests": False,
            "keep_screenshots": False,
        },
        compare=("sft_loss",),
        rtol=0.01,
        marks=(pytest.mark.integration,),  # a browser plays the demonstrations
        setup=tiny_llama_for_every_local_model,
    ),
    "double_filter.experiment": Case(
        {
            "backbone": "test",
            "tasks": ["vqa"],
            "seeds": 1,
            "steps": 1,
            "batch_size": 8,
            "n_train": 32,
            "n_val": 16,
            "n_test": 16,
            "population": 4,
            "generations": 1,
            "directional": False,
        },
        compare=("checks_passed", "vqa_none_score"),  # §7 checks 1–4 hold; accuracy of 16 items after 1 step
        rtol=0.0,
        atol=0.26,
        setup=fresh_runs,  # fine-tune and evaluate, never a stored run
    ),
    "double_filter.patches": Case({"backbone": "test", "count": 2}, compare=("kept", "patches"), rtol=0.0, atol=0.0),
    "gmail.align": Case(
        {
            "backbone": "test",
            "n_train": 64,
            "n_test": 32,
            "stage1_steps": 3,
            "stage2_steps": 2,
            "caption_steps": 0,  # the captioner's GRU does not run on the lazy stand-in (tests/methods/gmail/test_device.py: meta)
            "batch_size": 16,
        },
        compare=("naive_paired_cosine", "gmail_paired_cosine", "zero-shot_r@1"),  # cosines; R@1 in % of 32 pairs
        rtol=0.0,
        atol=0.05,
    ),
    "m3_jepa.retrieve": Case(
        {"caption": "a bold seven leaning to the left", "k": 4, "epochs": 1},
        setup=m3_jepa_stand_ins,  # synthetic frozen features (tests/methods/m3_jepa/fakes.py)
    ),
    "m3_jepa.study": Case(
        {"variants": ["m3_jepa"], "seeds": 1, "epochs": 1, "patience": 0, "dispatch": "inline"},
        compare=("m3_mean_r1", "checks_passed"),
        rtol=0.0,
        atol=0.05,
        setup=m3_jepa_stand_ins,
    ),
    "m3_jepa.train": Case(
        {"variant": "m3_jepa", "epochs": 1, "patience": 0},
        compare=("mean_recall", "zs_i2t"),  # two AGD steps from the same init; dropout draws differ by device
        rtol=0.0,
        atol=0.1,
        setup=m3_jepa_stand_ins,
    ),
    "dor.tune": Case(
        {
            "backbone": "test",
            "dataset": "digits",
            "n_base": 5,
            "shots": 2,
            "epochs": 2,
            "batch_size": 8,
            "outlier_k": 20,
            "outlier_batch": 4,
            "views": 1,
        },
        compare=("zeroshot_base_acc", "base_acc", "new_acc"),  # percentages of ~150 test images each
        rtol=0.0,
        atol=3.0,
    ),
    "lada.xtail": Case(
        {
            "method": "lada",
            "backbone": "test",
            "preset": "quick",
            "domains": ["shapes", "textures"],
            "shots": 2,
            "seeds": 1,
        },
        compare=("average", "last"),
        rtol=0.0,
        atol=0.05,
    ),
    "vlm.train": Case(
        {"preset": "test", "steps": 10, "retrain": True},
        compare=("final_loss", "zeroshot_digits"),
        rtol=0.05,
        atol=0.05,
    ),
    "vlm.zeroshot": Case({"preset": "test", "dataset": "digits", "index": 3}, compare=("top1_prob",), atol=0.02),
    "patch_scaling.sweep": Case(
        {"patches": [8, 1], "seeds": 1, "epochs": 1, "backbones": ["vit"], "dispatch": "inline"},
        compare=("vit_gap_points",),
        rtol=0.0,
        atol=8.0,
    ),
    "patch_scaling.train": Case(
        {"backbone": "vit", "patch": 8, "epochs": 1}, compare=("accuracy", "final_loss"), rtol=0.05, atol=0.03
    ),
    "fourier_mamba.train": Case(
        {"preset": "tiny", "steps": 2},
        compare=("first_loss", "final_loss"),  # L1 + 0.1·L1(|FFT|); Triton vs CPU scan, same crops
        rtol=0.05,
        atol=0.01,
        setup=isolated_models,  # the trained model goes to tmp_path, not the shared cache
    ),
    "fourier_mamba.derain": Case(
        {"preset": "tiny", "image_sha256": SMALL_SHA, "add_rain": "L"},
        compare=("psnr_y_input", "psnr_y_output", "ssim_y_output"),
        rtol=0.0,
        atol=0.1,
        setup=tiny_model_and_small_upload,  # a 2-step CPU model in tmp_path and a 32×24 upload
    ),
    "rf.edit": Case(
        {"digit_index": 3, "source_label": "0", "target_label": "6", "steps": 4, "inject": 2},
        compare=("recon_mse", "edit_mse_to_source"),  # per-pixel MSE in [0, 1]² after 8 + 8 evaluations
        rtol=0.0,
        atol=2e-3,
        setup=tiny_digits_model,  # the digits model is the cached tiny one (trained once on the CPU)
    ),
    "any4.quantize": Case(
        TINY_QUANTIZE,  # a tiny random llama stands in for the base model (tests/methods/any4/fakes.py)
        compare=("ppl_fp", "ppl_quantized", "weight_mse"),  # CUDA scores through the Triton LUT-GEMM
        rtol=0.01,
        atol=1e-3,
        setup=tiny_base,
    ),
    "any4.evaluate": Case(
        {"checkpoint": EVAL_CHECKPOINT, "eval_windows": 2, "seqlen": 48},
        compare=("ppl_fp", "ppl_quantized"),
        rtol=0.01,
        atol=1e-3,
        setup=tiny_base_with_checkpoint,  # quantized once on the CPU into tmp_path
    ),
    "lms3.index": Case(
        {"dataset": "mawps", "pool_size": 4, "seed": 7},
        compare=("items", "encoded"),
        rtol=0.0,
        atol=0.0,
        setup=tiny_local_model,  # a tiny random llama instead of SmolLM2 (tests/methods/lms3/fakes.py)
    ),
    "lms3.select": Case(
        {"dataset": "mawps", "pool_size": 4, "seed": 7, "query": LMS3_QUERY, "index_if_missing": True},
        compare=("pool_size", "demos"),
        rtol=0.0,
        atol=0.0,
        setup=tiny_local_model,
    ),
    "rf.reconstruct": Case(
        {"digit_index": 5, "label": "1", "nfes": [4]},
        compare=("euler_mse_nfe4", "rf2_mse_nfe4"),
        rtol=0.0,
        atol=2e-3,
        setup=tiny_digits_model,
    ),
}

# Jobs with no tensor work of their own (LLM calls go through core.llm, whose device is a setting).
NO_TORCH: set[str] = {
    "clinical_got.case",
    "clinical_got.run",
    "defame.batch",
    "defame.check",
    "diag.sleep",
    "ecolevels.classify",
    "ecolevels.probe",
    "ecolevels.run",
    "llm.complete",
    "llm_eval.batch",
    "medcog.high",
    "medcog.lowmid",
    "pae.evaluate",
    # the policy answers through the LLM gateway (core.llm, whose device is a setting); an adapter policy is
    # merged into a model directory once, a CPU checkpoint conversion for the gateway to load
    "pae.rollouts",
}


def _specs():
    load_all()
    return {s.name: s for s in list_methods()}


def test_torch_methods_take_device_and_amp():
    specs = _specs()
    assert not set(CASES) & NO_TORCH
    unknown = (set(CASES) | NO_TORCH) - set(specs)
    assert not unknown, f"not registered: {sorted(unknown)}"
    missing = set(specs) - set(CASES) - NO_TORCH
    assert not missing, f"neither a torch case nor listed as torch-free: {sorted(missing)}"
    for name in CASES:
        fields = specs[name].params_model.model_fields
        assert "device" in fields and "amp" in fields, f"{name}: no device/amp field"
        assert fields["device"].default == "cpu" and fields["amp"].default == "off", name
        assert set(typing.get_args(fields["device"].annotation)) == {"cpu", "auto", "cuda"}, name
        assert set(typing.get_args(fields["amp"].annotation)) == {"off", "bf16"}, name
    for name in NO_TORCH:
        assert "device" not in specs[name].params_model.model_fields, f"{name} takes a device: add a Case"


def _run(name: str, device: Any):
    spec = _specs()[name]
    params = params_on(spec.params_model, CASES[name].params, device)
    return spec.run(params, null_context())


def _setup(name: str, monkeypatch, tmp_path) -> None:
    if CASES[name].setup is not None:
        CASES[name].setup(monkeypatch, tmp_path)


def _cases(marks: tuple[Any, ...] = ()):
    return [pytest.param(name, id=name, marks=[*case.marks, *marks]) for name, case in sorted(CASES.items())]


@pytest.mark.parametrize("name", _cases())
def test_tiny_preset_runs_on_a_stand_in_accelerator(name, monkeypatch, tmp_path):
    _setup(name, monkeypatch, tmp_path)
    with lazy_safe_views():
        report = _run(name, stand_in_device())
    assert report.metrics.get("device", "").startswith("lazy"), (
        f"{name}: the report must record where it ran (core.device.device_provenance), got {report.metrics.get('device')!r}"
    )


def test_stand_in_fails_on_a_cpu_tensor_but_not_on_split_views():
    import torch

    dev = stand_in_device()
    lin = torch.nn.Linear(3, 2).to(dev)
    x = torch.randn(4, 6).to(dev)
    with lazy_safe_views():
        parts = [*x.chunk(2, dim=1), torch.split(x, [3, 3], dim=1)[1], torch.stack(x.unbind(1)[:3], 1)]
        outs = [lin(p).cpu() for p in parts]
        with pytest.raises(RuntimeError, match="not a lazy tensor"):
            lin(torch.randn(4, 3))  # a CPU tensor behind the caller's back
    ref = torch.nn.Linear(3, 2)
    ref.load_state_dict({k: v.cpu() for k, v in lin.state_dict().items()})
    xc = x.cpu()
    for out, part in zip(outs, [xc[:, :3], xc[:, 3:], xc[:, 3:], xc[:, :3]], strict=True):
        assert torch.allclose(out, ref(part), atol=1e-6)


def test_stand_in_trains_through_a_label_smoothed_loss():
    import torch
    import torch.nn.functional as F

    from core.device import step_barrier

    dev = stand_in_device()
    logits, target = torch.randn(8, 5), torch.randint(0, 5, (8,))
    on_dev = logits.to(dev).requires_grad_()
    with lazy_safe_views():
        loss = 0.5 * F.cross_entropy(on_dev, target.to(dev), label_smoothing=0.1)
        loss.backward()
        step_barrier(dev)  # runs the graph: fails on a float64 constant without the patch
    on_cpu = logits.clone().requires_grad_()
    (0.5 * F.cross_entropy(on_cpu, target, label_smoothing=0.1)).backward()
    assert loss.dtype == torch.float32 and float(loss) == pytest.approx(
        float(0.5 * F.cross_entropy(logits, target, label_smoothing=0.1))
    )
    assert torch.allclose(on_dev.grad.cpu(), on_cpu.grad, atol=1e-6)


def test_stand_in_pixel_shuffles_and_lerp_match_the_cpu():
    import copy

    import torch
    from torch import nn

    from core.device import step_barrier

    dev = stand_in_device()
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(4, 16, 1), nn.PixelShuffle(2), nn.PixelUnshuffle(2), nn.Conv2d(16, 4, 1))
    x = torch.randn(2, 4, 6, 6)
    on_dev = copy.deepcopy(net).to(dev)
    with lazy_safe_views():
        out = on_dev(x.to(dev))
        (out**2).sum().backward()
        a, b = torch.randn(5), torch.randn(5)
        mixed = a.to(dev).lerp_(b.to(dev), 0.25)
        step_barrier(dev)
    ref = net(x)
    (ref**2).sum().backward()
    assert torch.allclose(out.cpu(), ref, atol=1e-5)
    for p, q in zip(on_dev.parameters(), net.parameters(), strict=True):
        assert torch.allclose(p.grad.cpu(), q.grad, atol=1e-4)  # pixel_unshuffle's backward is a pixel_shuffle
    assert torch.allclose(mixed.cpu(), a.lerp(b, 0.25))


@pytest.mark.gpu
@pytest.mark.parametrize("name", _cases())
def test_tiny_preset_on_cuda_matches_the_cpu_run(name, monkeypatch, tmp_path):
    cuda = cuda_or_skip()
    case = CASES[name]
    _setup(name, monkeypatch, tmp_path)
    on_gpu, on_cpu = _run(name, cuda), _run(name, "cpu")
    assert on_gpu.metrics["device"].startswith("cuda") and on_gpu.metrics.get("gpu")
    for key in case.compare:
        a, b = float(on_gpu.metrics[key]), float(on_cpu.metrics[key])
        assert math.isfinite(a), f"{name}: {key} = {a} on CUDA"
        assert a == pytest.approx(b, rel=case.rtol, abs=case.atol), f"{name}: {key} CUDA {a} vs CPU {b}"
