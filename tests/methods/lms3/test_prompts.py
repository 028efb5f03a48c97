"""The §3.5 prompt strings, byte for byte, on one GSM8K and one MAWPS example."""

from __future__ import annotations

from methods.lms3.data import load_split
from methods.lms3.prompts import build_prompt, record_id


def test_gsm8k_one_shot_golden(data_dir):
    pool, test = load_split("gsm8k", "pool"), load_split("gsm8k", "queries")
    demo, q = pool[0], test[0]
    expected = (
        "Here are some examples you can refer to.\n\nQ: "
        + demo.text
        + "\nA: "
        + demo.answer
        + "\n\n---Now it's your turn!\n- Take a deep breath\n- Think step by step\n- I will tip $200\n\nQ: "
        + q.text
        + "\nA: "
    )
    got = build_prompt(q.text, [(demo.text, demo.answer)])
    assert got == expected
    assert got.startswith("Here are some examples you can refer to.\n\nQ: Natalia sold clips")
    assert "#### 72\n\n---Now it's your turn!\n" in got and got.endswith("\nA: ")
    assert record_id("gsm8k", 0) == "GSM8K_0@one_shot_lms3"


def test_mawps_golden_and_zero_shot(data_dir):
    pool, dev = load_split("mawps", "pool"), load_split("mawps", "queries")
    assert pool[0].answer == "6.0" and dev[0].answer == "504.0" and pool[8].answer == "4.333333333333333"
    got = build_prompt(dev[0].text, [(pool[0].text, pool[0].answer), (pool[1].text, pool[1].answer)])
    assert got == (
        "Here are some examples you can refer to.\n\nQ: Mary is baking a cake . The recipe wants 8.0 cups "
        "of flour . She already put in 2.0 cups . How many cups does she need to add ?\nA: 6.0\n\nQ: "
        + pool[1].text
        + "\nA: 270.0\n\n---Now it's your turn!\n- Take a deep breath\n- Think step by step"
        "\n- I will tip $200\n\nQ: " + dev[0].text + "\nA: "
    )
    assert build_prompt(dev[0].text, []) == "Let's think step by step: " + dev[0].text + "\nA: "
    assert record_id("mawps", 3) == "MAWPS_3@one_shot_lms3"
    assert record_id("math", "12", subject="algebra") == "algebra@12@one_shot_lms3"
