"""The pairs (same caption, controllable gap), retrieval with shared captions, attribute prompts, BLEU-4."""

import math

import numpy as np
import pytest
import torch

from methods.gmail.caption import attribute_captions, corpus_bleu
from methods.gmail.data import add_artifacts, reimagine, render_pairs
from methods.gmail.evaluate import domain_separability, paired_cosine, retrieval, retrieval_chance
from methods.vlm.render import captions, position_name, sample_scene


def test_reimagined_scene_keeps_the_caption_but_not_the_pixels():
    for i in range(20):
        scene = sample_scene(np.random.default_rng([1, i]))
        twin = reimagine(scene, np.random.default_rng([2, i]))
        assert twin.kind == scene.kind and twin.background == scene.background
        assert len(twin.objects) == len(scene.objects)
        if len(scene.objects) == 1:
            assert position_name(twin.objects[0], 32) == position_name(scene.objects[0], 32)
            assert captions(twin) == captions(scene)
        assert twin.objects != scene.objects


def test_artifacts_are_identity_at_zero_and_grow_with_strength():
    pairs = render_pairs("test", 6)
    clean = pairs.clean_gen
    assert torch.equal(add_artifacts(clean, 0.0), clean)
    dist = [float((add_artifacts(clean, s) - clean).abs().mean()) for s in (0.25, 0.5, 1.0, 2.0)]
    assert dist == sorted(dist) and dist[0] > 0
    x = add_artifacts(clean, 1.0)
    assert x.min() >= 0 and x.max() <= 1
    assert float((x[:, 0] - clean[:, 0]).mean()) > 0 > float((x[:, 2] - clean[:, 2]).mean())  # the warm colour cast
    with pytest.raises(ValueError):
        add_artifacts(clean, -1)


def test_pairs_are_deterministic_by_index():
    a, b = render_pairs("train", 5), render_pairs("train", 3, start=2)
    assert torch.equal(a.real[2:], b.real) and a.captions[2:] == b.captions
    assert a.attributes["shape"].shape == (5,)


def test_retrieval_counts_equal_captions_as_hits():
    feats = torch.eye(3)
    caps = ["a", "a", "b"]
    swapped = feats[[1, 0, 2]]  # items 0 and 1 share a caption: retrieving the twin is correct
    r = retrieval(swapped, feats, caps, ks=(1,))
    assert r["i2t_r@1"] == 1.0 and r["t2i_r@1"] == 1.0
    r = retrieval(feats[[2, 0, 1]], feats, ["a", "b", "c"], ks=(1, 3))
    assert r["i2t_r@1"] == 0.0 and r["i2t_r@3"] == 1.0
    assert retrieval_chance(["a", "b", "c", "d"], ks=(1,))["r@1"] == pytest.approx(0.25)


def test_gap_measures_separate_shifted_clouds_and_not_identical_ones():
    g = torch.Generator().manual_seed(0)
    real = torch.nn.functional.normalize(torch.randn(200, 8, generator=g), dim=-1)
    assert paired_cosine(real, real) == pytest.approx(1.0)
    shifted = torch.nn.functional.normalize(real + 0.8 * torch.tensor([1.0] + [0.0] * 7), dim=-1)
    assert domain_separability(real, shifted) > 0.9
    same = torch.nn.functional.normalize(torch.randn(200, 8, generator=g), dim=-1)
    assert domain_separability(real, same) < 0.65


def test_bleu_extremes_and_a_hand_computed_case():
    ref = "a red circle on a gray background .".split()
    assert corpus_bleu([ref], [[ref]]) == pytest.approx(1.0)
    assert corpus_bleu([["blue", "star"]], [[ref]]) == 0.0
    hyp = "a red circle on a gray .".split()  # 7 of 8 tokens
    p = [7 / 7, 5 / 6, 4 / 5, 3 / 4]  # clipped 1- to 4-gram precisions
    expected = math.exp(1 - 8 / 7) * math.exp(sum(math.log(x) for x in p) / 4)
    assert corpus_bleu([hyp], [[ref]]) == pytest.approx(expected)


def test_attribute_captions_leave_out_the_noun_captions():
    scene = sample_scene(np.random.default_rng(5), kind=("circle", "red", "plain"), count=1)
    caps = attribute_captions(captions(scene))
    assert len(caps) == 6 and not any("tomato" in c for c in caps)
    multi = sample_scene(np.random.default_rng(5), count=2)
    assert len(attribute_captions(captions(multi))) == 5
