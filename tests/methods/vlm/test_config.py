"""Tiny-CLIP presets: the cache identity."""

import pytest

from methods.vlm.config import get_preset


def test_hash_covers_training_but_not_threads():
    base = get_preset("default")
    assert get_preset("default", threads=4).hash() == base.hash()
    assert get_preset("default", steps=10).hash() != base.hash()
    assert get_preset("test").hash() != base.hash()
    with pytest.raises(ValueError, match="unknown tiny-CLIP preset"):
        get_preset("huge")
