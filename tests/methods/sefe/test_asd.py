"""ASD proportions and rules (spec §3.2/§7), the native test prompts and the format judge."""

from collections import Counter

import pytest

from methods.sefe.asd import eval_examples, style_counts, train_examples
from methods.sefe.checks import check_asd
from methods.sefe.tasks import LETTERS, TASK_ORDER, TASKS, judge, load_task


@pytest.mark.parametrize("task", TASK_ORDER)
@pytest.mark.parametrize("x", [20.0, 40.0])
def test_styles_split_equally_over_the_non_native_ones(task, x):
    ex = train_examples(task, n_train=60, seed=3, x_percent=x)
    native = TASKS[task].native
    counts = Counter(e.style for e in ex)
    assert counts[native] == 60 - round(60 * x / 100)
    for s in ("YN", "MCQ", "SA", "BE", "DE"):
        if s != native:
            assert abs(counts[s] - 60 * x / 400) <= 1, (s, counts)
    assert sum(e.transformed for e in ex) == round(60 * x / 100)
    assert all(not e.transformed for e in ex if e.style == native)


def test_zero_x_is_the_native_training_set_and_counts_add_up():
    ex = train_examples("wine", n_train=30, seed=0, x_percent=0)
    assert {e.style for e in ex} == {"MCQ"} and not any(e.transformed for e in ex)
    assert sum(style_counts(101, 20, "SA").values()) == 101
    with pytest.raises(ValueError):
        train_examples("iris", n_train=10, seed=0, x_percent=120)


def test_yn_balanced_mcq_letters_uniform_and_answers_consistent():
    ex = train_examples("digits", n_train=400, seed=1, x_percent=20)
    yn = [e for e in ex if e.style == "YN"]
    assert abs(sum(e.answer == "Yes" for e in yn) - sum(e.answer == "No" for e in yn)) <= 1
    mcq = [e for e in ex if e.style == "MCQ"]
    letters = Counter(e.answer for e in mcq)
    assert set(letters) == set(LETTERS) and max(letters.values()) - min(letters.values()) <= 1
    for e in mcq:  # the option under the answer letter is the true class
        line = next(x for x in e.prompt.split("\n") if x.startswith(e.answer + ". "))
        assert line[3:] == TASKS["digits"].classes[e.label]
    for e in yn:  # "Yes" exactly when the candidate is the true class
        assert (f"digit {TASKS['digits'].classes[e.label]}?" in e.prompt) == (e.answer == "Yes")
    be = [e for e in ex if e.style == "BE"]
    de = [e for e in ex if e.style == "DE"]
    assert 10 <= sum(len(e.answer.split()) for e in be) / len(be) <= 35
    assert 40 <= sum(len(e.answer.split()) for e in de) / len(de) <= 80
    assert all(ok for _, ok, _ in check_asd("cancer", n=80))


def test_test_items_are_native_fixed_and_disjoint_from_training():
    for task in TASK_ORDER:
        te = eval_examples(task, n_test=20)
        assert all(e.style == TASKS[task].native and not e.transformed for e in te)
        assert [e.prompt for e in te] == [e.prompt for e in eval_examples(task, n_test=20)]
        data = load_task(task)
        assert not set(data.train_idx) & set(data.test_idx)
    cancer = eval_examples("cancer", n_test=5)
    assert all(e.prompt.splitlines()[1] == "Is this tumour malignant?" for e in cancer)
    assert all(e.answer == ("Yes" if e.label == 1 else "No") for e in cancer)


@pytest.mark.parametrize(
    "task,output,label,expected",
    [
        ("iris", "setosa", 0, (True, True)),
        ("iris", "Virginica.", 2, (True, True)),
        ("iris", "versicolor", 2, (True, False)),
        ("iris", "Yes", 0, (False, False)),  # yes/no to an SA question: superficial forgetting
        ("iris", "B", 1, (False, False)),  # a bare letter
        ("iris", "The species is setosa because the petals are small", 0, (False, False)),
        ("cancer", "No", 0, (True, True)),
        ("cancer", "yes.", 0, (True, False)),
        ("cancer", "benign", 0, (False, False)),
        ("wine", "B", 1, (True, True)),
        ("wine", "(A)", 1, (True, False)),
        ("wine", "cultivar 2", 1, (False, False)),
        ("digits", "seven", 7, (True, True)),
        ("digits", "", 7, (False, False)),
    ],
)
def test_judge(task, output, label, expected):
    assert judge(TASKS[task], output, label) == expected
