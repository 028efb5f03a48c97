"""The §6 data: split sizes, attribute captions, slant sign."""

import numpy as np

from methods.m3_jepa import data


def test_split_sizes_are_the_specs_and_disjoint():
    parts = data.split()
    assert {k: len(v.labels) for k, v in parts.items()} == {"fit": 1000, "val": 200, "test": 597}
    idx = [set(v.index.tolist()) for v in parts.values()]
    assert not (idx[0] & idx[1] or idx[0] & idx[2] or idx[1] & idx[2])
    assert set(np.bincount(parts["test"].labels)) <= set(range(55, 65))  # stratified


def test_captions_state_the_class_and_both_attributes():
    parts = data.split()
    p = parts["test"]
    for i in range(0, 597, 37):
        cap = p.captions[i].lower()
        c = int(p.labels[i])
        assert data.WORDS[c] in cap or str(c) in cap
        ink_words = [w for group in data._INK_WORDS[data.INK[p.ink[i]]] for phrase in group for w in [phrase]]
        slant_words = [w for group in data._SLANT_WORDS[data.SLANT[p.slant[i]]] for w in group]
        assert any(w in cap for w in ink_words) and any(w in cap for w in slant_words), cap
    assert len(set(p.captions)) > 300  # paraphrases: far more distinct captions than (class, ink, slant) groups
    assert 0.05 < data.oracle_r1(p) < 0.3


def test_slant_sign():
    img = np.zeros((2, 8, 8), dtype=np.float32)
    for r in range(8):
        img[0, r, 7 - r] = 1.0  # top right → bottom left: leans right
        img[1, r, r] = 1.0  # leans left
    s = data._slant(img)
    assert s[0] > 0.5 and s[1] < -0.5


def test_class_prompts_carry_no_attribute():
    for c in range(10):
        for p in data.class_prompts(c):
            assert not any(w in p for w in ("thin", "bold", "left", "right", "upright"))
