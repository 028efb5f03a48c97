"""The procedural scene renderer: determinism, boxes, captions."""

import numpy as np

from methods.vlm.render import LEXICON, Scene, SceneObject, captions, position_name, render, sample_scene


def test_same_scene_same_pixels_and_seeded_sampling():
    a = sample_scene(np.random.default_rng(5))
    b = sample_scene(np.random.default_rng(5))
    assert a == b
    ia, ba = render(a)
    ib, bb = render(b)
    assert np.array_equal(ia, ib) and np.array_equal(ba, bb)
    assert ia.shape == (32, 32, 3) and ia.dtype == np.float32 and 0 <= ia.min() and ia.max() <= 1


def test_boxes_enclose_the_object():
    obj = SceneObject("square", "red", "plain", cx=10, cy=20, r=6)
    scene = Scene("white", (obj,), noise=0.0)
    img, boxes = render(scene)
    x0, y0, x1, y1 = boxes[0]
    assert x0 < 10 < x1 and y0 < 20 < y1
    red = (img[..., 0] > 0.7) & (img[..., 1] < 0.4)
    ys, xs = np.nonzero(red)
    assert xs.min() >= x0 - 1 and xs.max() <= x1 and ys.min() >= y0 - 1 and ys.max() <= y1
    outside = red.copy()
    outside[int(y0) : int(y1), int(x0) : int(x1)] = False
    assert not outside.any()


def test_captions_name_what_is_drawn():
    kind = LEXICON["tomato"]
    scene = sample_scene(np.random.default_rng(0), kind=kind, count=1)
    caps = captions(scene)
    assert "a red circle." in caps and "a photo of a tomato." in caps
    pos = position_name(scene.objects[0], 32)
    assert any(f"at the {pos}" in c for c in caps)
    many = sample_scene(np.random.default_rng(1), kind=("star", "blue", "striped"), count=3)
    assert len(many.objects) == 3 and len(render(many)[1]) == 3
    assert captions(many)[0] == "three blue striped stars."
    assert captions(sample_scene(np.random.default_rng(2), kind=("ring", "orange", "dotted"), count=1))[0].startswith(
        "an orange"
    )


def test_position_names():
    assert position_name(SceneObject("circle", "red", "plain", 2, 2, 1), 32) == "top left"
    assert position_name(SceneObject("circle", "red", "plain", 16, 16, 1), 32) == "center"
    assert position_name(SceneObject("circle", "red", "plain", 31, 31, 1), 32) == "bottom right"
