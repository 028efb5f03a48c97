"""The text instruction tasks of the CPU-scale SEFE benchmark (spec §6), built from scikit-learn data.

Each task turns one real scikit-learn dataset into question/answer pairs with its own **native
answer style**, so that style drift between tasks (superficial forgetting) is visible:

==========  =======================================  =============  =========================
task        data                                     native style   answer
==========  =======================================  =============  =========================
iris        4 measurements (cm)                      SA             ``setosa``
cancer      6 named features of the tumour           YN             ``Yes`` / ``No`` (malignant?)
wine        5 chemical measurements                  MCQ            ``A``–``C`` (D: distractor only)
digits      8×8 digit pooled to 4×4 intensities      SA             ``seven``
==========  =======================================  =============  =========================

The five answer styles and their format instructions follow the LLaVA-1.5 conventions the
spec names (§3.2). :func:`judge` is the format rule of each style (superficial forgetting =
an answer that does not parse in the task's native style) and the correctness rule (the answer
names the right class in that style). The CoIN images and the CoIN-ASD annotations cannot be
had offline, so these tasks are a stand-in, said plainly in the report.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Style = Literal["YN", "MCQ", "SA", "BE", "DE"]
STYLES: tuple[Style, ...] = ("YN", "MCQ", "SA", "BE", "DE")
LETTERS = ("A", "B", "C", "D")

#: The format instruction appended to a question in each style (LLaVA-1.5 wording where it exists).
INSTRUCTIONS: dict[str, str] = {
    "SA": "Answer the question using a single word or phrase.",
    "YN": "Answer with yes or no.",
    "MCQ": "Answer with the option's letter from the given choices directly.",
    "BE": "Answer the question and give a brief explanation.",
    "DE": "Answer the question and explain your answer in detail.",
}


@dataclass(frozen=True)
class TaskDef:
    """One task: which dataset, its class names, its native style and how to phrase it."""

    name: str
    title: str
    native: Style
    classes: tuple[str, ...]
    #: extra wrong answers for 4-option MCQs when the task has fewer than 4 classes
    extra_distractors: tuple[str, ...]
    subject: str  # "this iris flower"
    question: str  # SA / BE / DE question
    yn_question: str  # with {c}
    units: str = ""


TASKS: dict[str, TaskDef] = {
    "iris": TaskDef(
        "iris",
        "Iris species",
        "SA",
        ("setosa", "versicolor", "virginica"),
        ("pumila",),
        "iris flower",
        "Which iris species is it?",
        "Is it an iris {c}?",
        " cm",
    ),
    "cancer": TaskDef(
        "cancer",
        "Breast-cancer diagnosis",
        "YN",
        ("benign", "malignant"),
        ("inflamed", "cystic"),
        "breast tumour",
        "What is the diagnosis of this tumour?",
        "Is this tumour {c}?",
    ),
    "wine": TaskDef(
        "wine",
        "Wine cultivar",
        "MCQ",
        ("cultivar 1", "cultivar 2", "cultivar 3"),
        ("cultivar 4",),
        "wine",
        "Which cultivar produced this wine?",
        "Was this wine produced by {c}?",
    ),
    "digits": TaskDef(
        "digits",
        "Handwritten digit",
        "SA",
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
        (),
        "digit image",
        "Which digit is it?",
        "Is it the digit {c}?",
    ),
}
TASK_ORDER: tuple[str, ...] = ("iris", "cancer", "wine", "digits")

_CANCER_FEATURES = (
    "mean radius",
    "mean texture",
    "mean smoothness",
    "mean concavity",
    "worst area",
    "worst concave points",
)
_WINE_FEATURES = ("alcohol", "malic_acid", "flavanoids", "color_intensity", "proline")


@dataclass
class Example:
    """One instruction example: the prompt (question + format instruction) and the target answer."""

    task: str
    style: Style
    prompt: str
    answer: str
    label: int  # class index (ground truth of the underlying sample)
    transformed: bool = False
    meta: dict = field(default_factory=dict)


@dataclass
class TaskData:
    """A task's raw features, names and fixed train/test split."""

    defn: TaskDef
    x: np.ndarray  # (N, F) raw values shown in the prompt
    y: np.ndarray
    feature_names: tuple[str, ...]
    train_idx: np.ndarray
    test_idx: np.ndarray

    def z(self, i: int) -> np.ndarray:
        mu, sd = self.x[self.train_idx].mean(0), self.x[self.train_idx].std(0) + 1e-9
        return (self.x[i] - mu) / sd


@functools.lru_cache(maxsize=8)
def load_task(name: str, split_seed: int = 0) -> TaskData:
    """Features, labels and a fixed stratified 75/25 split (``split_seed``) of task ``name``."""
    from sklearn import datasets
    from sklearn.model_selection import train_test_split

    if name == "iris":
        d = datasets.load_iris()
        x, y, names = d.data, d.target, ("sepal length", "sepal width", "petal length", "petal width")
    elif name == "cancer":
        d = datasets.load_breast_cancer()
        cols = [list(d.feature_names).index(f) for f in _CANCER_FEATURES]
        x, y, names = d.data[:, cols], 1 - d.target, _CANCER_FEATURES  # sklearn: 0 = malignant; here 1 = malignant
    elif name == "wine":
        d = datasets.load_wine()
        cols = [list(d.feature_names).index(f) for f in _WINE_FEATURES]
        x, y, names = d.data[:, cols], d.target, tuple(f.replace("_", " ") for f in _WINE_FEATURES)
    elif name == "digits":
        d = datasets.load_digits()
        img = d.images.reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4))  # 8×8 → 4×4 average pooling
        x, y, names = np.rint(img.reshape(-1, 16)), d.target, tuple(f"r{r}c{c}" for r in range(4) for c in range(4))
    else:
        raise KeyError(f"unknown task {name!r}; known: {', '.join(TASKS)}")
    idx = np.arange(len(y))
    tr, te = train_test_split(idx, test_size=0.25, random_state=split_seed, stratify=y)
    return TaskData(TASKS[name], np.asarray(x, float), np.asarray(y, int), tuple(names), np.sort(tr), np.sort(te))


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}".rstrip("0").rstrip(".") if abs(v) < 1 else f"{v:.1f}"


def describe(data: TaskData, i: int) -> str:
    """The sample as text: ``"An iris flower: sepal length 5.1 cm, ..."`` or the 4×4 grid of a digit."""
    d = data.defn
    if d.name == "digits":
        grid = data.x[i].reshape(4, 4).astype(int)
        rows = " / ".join(" ".join(str(v) for v in row) for row in grid)
        return f"A handwritten digit as a 4x4 grid of intensities 0-16, row by row: {rows}."
    parts = ", ".join(f"{n} {_fmt(v)}{d.units}" for n, v in zip(data.feature_names, data.x[i]))
    return f"A {d.subject}: {parts}."


def mcq_block(options: list[str]) -> str:
    return "\n".join(f"{letter}. {o}" for letter, o in zip(LETTERS, options))


def native_options(defn: TaskDef) -> list[str]:
    """The fixed options of a native MCQ task: its classes in order, then distractor-only options."""
    return (list(defn.classes) + list(defn.extra_distractors))[:4]


def explanation(data: TaskData, i: int, label: int, n_features: int) -> str:
    """A templated justification citing the ``n_features`` most discriminative features (largest |z|)."""
    d = data.defn
    name = d.classes[label]
    z = data.z(i)
    if d.name == "digits":
        order = np.argsort(-np.abs(z))[:n_features]
        cells = ", ".join(
            f"the cell in row {k // 4 + 1}, column {k % 4 + 1} is {'bright' if z[k] > 0 else 'dark'} ({int(data.x[i, k])})"
            for k in order
        )
        head = f"The stroke pattern fits a {name}: {cells}."
    else:
        order = np.argsort(-np.abs(z))[:n_features]
        cells = ", ".join(
            f"the {data.feature_names[k]} of {_fmt(data.x[i, k])}{d.units} is {'high' if z[k] > 0 else 'low'}"
            for k in order
        )
        head = f"The evidence points to {name}: {cells}."
    if n_features == 1:
        return head + " This value is typical of that class."
    return (
        head + f" Taken together these measurements are typical of {name} and unlike the other classes of "
        f"this {d.subject}, whose usual values lie on the other side, so {name} is the most likely answer here."
    )


def native_example(data: TaskData, i: int) -> Example:
    """Sample ``i`` in its task's native style (the form of every test example)."""
    return render(data, i, data.defn.native, np.random.default_rng(0), transformed=False)


def render(
    data: TaskData,
    i: int,
    style: Style,
    rng: np.random.Generator,
    *,
    transformed: bool,
    yn_truth: bool | None = None,
    mcq_letter: int | None = None,
) -> Example:
    """Sample ``i`` of ``data`` written in ``style`` (spec §3.2 rules, distractors = other class names)."""
    d = data.defn
    y = int(data.y[i])
    desc = describe(data, i)
    cls = d.classes[y]
    wrong = [c for c in d.classes if c != cls]
    meta: dict = {}
    if style == "SA":
        prompt, answer = f"{desc}\n{d.question}", cls
    elif style == "YN":
        if d.native == "YN" and not transformed:  # the native YN question: "Is this tumour malignant?"
            cand, truth = d.classes[1], y == 1
        else:
            truth = bool(rng.integers(2)) if yn_truth is None else yn_truth
            cand = cls if truth else str(rng.choice(wrong))
        prompt, answer = f"{desc}\n{d.yn_question.format(c=cand)}", "Yes" if truth else "No"
        meta["yn_truth"] = bool(truth)
    elif style == "MCQ":
        if d.native == "MCQ" and not transformed:
            options = native_options(d)
            pos = options.index(cls)
        else:
            pool = wrong + list(d.extra_distractors)
            picks = list(rng.choice(pool, size=3, replace=False))
            pos = int(rng.integers(4)) if mcq_letter is None else mcq_letter
            options = picks[:pos] + [cls] + picks[pos:]
        prompt, answer = f"{desc}\n{d.question}\n{mcq_block(options)}", LETTERS[pos]
        meta["mcq_letter"] = LETTERS[pos]
    elif style in ("BE", "DE"):
        why = explanation(data, i, y, 1 if style == "BE" else 3)
        prompt, answer = f"{desc}\n{d.question}", f"{cls[0].upper()}{cls[1:]}. {why}"
    else:
        raise ValueError(f"unknown style {style!r}")
    return Example(d.name, style, f"{prompt}\n{INSTRUCTIONS[style]}", answer, y, transformed, meta)


# ---------------------------------------------------------------------------------------------
# judging: format compliance (superficial) and correctness (essential), spec §6
# ---------------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def judge(defn: TaskDef, output: str, label: int) -> tuple[bool, bool]:
    """``(compliant, correct)`` of a model output for a native-style test item of ``defn``.

    * SA: one line of at most 3 words that is neither yes/no nor a bare option letter; correct
      when it names the class (substring match both ways, as CoIN scores ImageNet).
    * YN: first word yes/no and at most 3 words; correct when it matches ``label == 1``.
    * MCQ: a bare option letter A–D (optionally ``"B."``/``"(B)"``, at most 4 words); correct
      when it is the right letter.

    An answer that is correct only in another style (e.g. "Yes" to an SA question) is not compliant.
    """
    text = output.strip().split("\n")[0].strip()
    words = _norm(text).split()
    if not words:
        return False, False
    if defn.native == "YN":
        ok = words[0] in ("yes", "no") and len(words) <= 3
        return ok, ok and (words[0] == "yes") == (label == 1)
    if defn.native == "MCQ":
        m = re.match(r"^\(?([A-D])\)?(?:[.:)]|\s|$)", text)
        ok = m is not None and len(words) <= 4
        return ok, ok and m.group(1) == LETTERS[native_options(defn).index(defn.classes[label])]
    ok = len(words) <= 3 and words[0] not in ("yes", "no") and not (len(words) == 1 and text.strip(".():") in LETTERS)
    got, want = " ".join(words), _norm(defn.classes[label])
    hit = want == got or (want in got and not any(_norm(c) in got for c in defn.classes if c != defn.classes[label]))
    return ok, ok and hit


def majority_accuracy(name: str, split_seed: int = 0) -> float:
    """Accuracy of always answering the majority training class on the test split (a baseline)."""
    data = load_task(name, split_seed)
    major = np.bincount(data.y[data.train_idx]).argmax()
    return float((data.y[data.test_idx] == major).mean())
