"""Named datasets: fixed splits, few-shot draws, real data."""

import pytest
import torch

from methods.vlm.data import DATASETS, OBJECTS20, load_dataset, scene_split


def test_scene_split_prefixes_agree_and_splits_differ():
    a = scene_split("val", 5)
    b = scene_split("val", 8)
    assert torch.equal(a.images, b.images[:5]) and a.captions == b.captions[:5]
    t = scene_split("test", 5)
    assert not torch.equal(a.images, t.images)
    assert a.images.shape == (5, 3, 32, 32) and len(a.boxes) == 5


def test_digits_split_is_fixed_and_real():
    tr, te = load_dataset("digits", "train"), load_dataset("digits", "test")
    assert len(tr) == 1500 and len(te) == 297
    assert te.images.shape == (297, 3, 32, 32)
    assert te.classnames[7] == "seven" and "seven" in te.captions[int((te.labels == 7).nonzero()[0])][0]
    assert torch.equal(load_dataset("digits", "test").labels, te.labels)


def test_few_shot_is_seeded_and_per_class():
    ds = load_dataset("digits", "train")
    a = ds.few_shot(4, seed=1, classes=(0, 1, 2))
    b = ds.few_shot(4, seed=1, classes=(0, 1, 2))
    c = ds.few_shot(4, seed=2, classes=(0, 1, 2))
    assert torch.equal(a.images, b.images) and not torch.equal(a.images, c.images)
    assert torch.bincount(a.labels).tolist() == [4, 4, 4]
    with pytest.raises(ValueError):
        ds.few_shot(1000, seed=0)


def test_registry_and_errors():
    assert set(DATASETS) >= {"scenes", "objects", "objects20", "digits", "photos", "examples"}
    assert len(OBJECTS20) == 20 and len(set(OBJECTS20)) == 20
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("imagenet", "test")
    with pytest.raises(ValueError, match="splits"):
        load_dataset("digits", "val")
