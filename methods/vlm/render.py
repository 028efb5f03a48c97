"""A seeded procedural renderer of captioned scenes with ground-truth boxes.

A scene is a background colour and one to three objects of one kind (shape, colour, texture)
at known positions. :func:`render` draws it as an RGB image in [0, 1] and returns the objects'
boxes; :func:`captions` writes the captions that describe it (attribute captions, and noun
captions when the object kind is one of the :data:`LEXICON` nouns). The lexicon gives the
tiny CLIP's world real nouns: ``tomato`` is a plain red circle, ``brick`` a plain red square.
The same scene always renders to the same pixels (everything random comes from the scene's
own generator).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw

SHAPES = ("circle", "square", "triangle", "star", "ring", "cross")
PLURAL = {"circle": "circles", "square": "squares", "triangle": "triangles", "star": "stars", "ring": "rings"}
PLURAL["cross"] = "crosses"
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (50, 80, 220),
    "yellow": (240, 220, 50),
    "purple": (140, 60, 190),
    "orange": (245, 140, 30),
    "brown": (130, 80, 40),
    "pink": (245, 150, 200),
}
BACKGROUNDS: dict[str, tuple[int, int, int]] = {
    "gray": (128, 128, 128),
    "white": (235, 235, 235),
    "black": (20, 20, 20),
    "teal": (30, 110, 110),
}
TEXTURES = ("plain", "striped", "dotted", "checkered")
POSITIONS = ("top left", "top", "top right", "left", "center", "right", "bottom left", "bottom", "bottom right")
COUNTS = {1: "one", 2: "two", 3: "three"}

#: Real nouns, each the name of one object kind (shape, colour, texture) of this world.
LEXICON: dict[str, tuple[str, str, str]] = {
    "tomato": ("circle", "red", "plain"),
    "lime": ("circle", "green", "plain"),
    "pumpkin": ("circle", "orange", "plain"),
    "lemon": ("circle", "yellow", "plain"),
    "plum": ("circle", "purple", "plain"),
    "coconut": ("circle", "brown", "plain"),
    "planet": ("circle", "blue", "plain"),
    "melon": ("circle", "green", "striped"),
    "ladybug": ("circle", "red", "dotted"),
    "cookie": ("circle", "brown", "dotted"),
    "marble": ("circle", "blue", "striped"),
    "peach": ("circle", "pink", "plain"),
    "brick": ("square", "red", "plain"),
    "box": ("square", "brown", "plain"),
    "sponge": ("square", "yellow", "dotted"),
    "tablecloth": ("square", "red", "checkered"),
    "chessboard": ("square", "brown", "checkered"),
    "towel": ("square", "blue", "striped"),
    "cushion": ("square", "purple", "plain"),
    "napkin": ("square", "pink", "checkered"),
    "window": ("square", "blue", "checkered"),
    "lawn": ("square", "green", "striped"),
    "tent": ("triangle", "green", "plain"),
    "sail": ("triangle", "blue", "plain"),
    "roof": ("triangle", "brown", "striped"),
    "pennant": ("triangle", "purple", "striped"),
    "cone": ("triangle", "orange", "striped"),
    "wedge": ("triangle", "yellow", "plain"),
    "pyramid": ("triangle", "yellow", "striped"),
    "warning": ("triangle", "red", "plain"),
    "starfish": ("star", "orange", "plain"),
    "badge": ("star", "yellow", "plain"),
    "ornament": ("star", "red", "dotted"),
    "medal": ("star", "blue", "plain"),
    "sheriff": ("star", "brown", "plain"),
    "firework": ("star", "pink", "dotted"),
    "bagel": ("ring", "brown", "plain"),
    "donut": ("ring", "pink", "dotted"),
    "bracelet": ("ring", "yellow", "plain"),
    "tire": ("ring", "purple", "striped"),
    "lifebuoy": ("ring", "red", "striped"),
    "wreath": ("ring", "green", "dotted"),
    "clover": ("cross", "green", "plain"),
    "hospital": ("cross", "red", "plain"),
    "crossroad": ("cross", "brown", "striped"),
    "propeller": ("cross", "blue", "plain"),
    "pinwheel": ("cross", "orange", "checkered"),
    "kite": ("cross", "yellow", "checkered"),
}
KIND_TO_NOUN = {v: k for k, v in LEXICON.items()}


@dataclass(frozen=True)
class SceneObject:
    """One object: its kind, centre (pixels), radius (pixels) and rotation (radians)."""

    shape: str
    colour: str
    texture: str
    cx: float
    cy: float
    r: float
    angle: float = 0.0


@dataclass(frozen=True)
class Scene:
    """A background and the objects on it (all of one kind), plus the seed of its pixel noise."""

    background: str
    objects: tuple[SceneObject, ...]
    size: int = 32
    seed: int = 0
    noise: float = 0.03
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def kind(self) -> tuple[str, str, str]:
        o = self.objects[0]
        return (o.shape, o.colour, o.texture)

    @property
    def noun(self) -> str | None:
        return KIND_TO_NOUN.get(self.kind)


def position_name(obj: SceneObject, size: int) -> str:
    """Which of the 3×3 regions holds the object's centre."""
    col = min(2, int(obj.cx / size * 3))
    row = min(2, int(obj.cy / size * 3))
    return POSITIONS[row * 3 + col]


def sample_scene(
    rng: np.random.Generator,
    *,
    size: int = 32,
    kind: tuple[str, str, str] | None = None,
    count: int | None = None,
    noise: float = 0.03,
) -> Scene:
    """A random scene; ``kind`` and ``count`` fix the objects' kind and number."""
    shape, colour, texture = kind or (
        str(rng.choice(SHAPES)),
        str(rng.choice(list(COLOURS))),
        str(rng.choice(TEXTURES)),
    )
    n = count or int(rng.choice([1, 1, 1, 2, 3]))
    background = str(rng.choice(list(BACKGROUNDS)))
    objects: list[SceneObject] = []
    r_lo, r_hi = (0.22, 0.34) if n == 1 else (0.13, 0.18)
    for _ in range(n):
        for _try in range(30):
            r = float(rng.uniform(r_lo, r_hi)) * size
            cx, cy = (float(v) for v in rng.uniform(r, size - r, size=2))
            if all(math.hypot(cx - o.cx, cy - o.cy) > r + o.r for o in objects):
                break
        objects.append(SceneObject(shape, colour, texture, cx, cy, r, float(rng.uniform(-0.3, 0.3))))
    return Scene(background, tuple(objects), size=size, seed=int(rng.integers(2**31)), noise=noise)


def _polygon(obj: SceneObject) -> list[tuple[float, float]]:
    k, radii = {
        "square": (4, [1.0]),
        "triangle": (3, [1.0]),
        "star": (10, [1.0, 0.45]),
        "cross": (12, None),
    }[obj.shape]
    if obj.shape == "cross":  # a plus sign: 12 corners at arm half-width w
        w = 0.36
        pts = [(w, 1), (w, w), (1, w), (1, -w), (w, -w), (w, -1), (-w, -1), (-w, -w), (-1, -w), (-1, w), (-w, w)]
        pts.append((-w, 1))
    else:
        start = -math.pi / 2 + (math.pi / 4 if obj.shape == "square" else 0.0)
        pts = [
            (
                radii[i % len(radii)] * math.cos(start + 2 * math.pi * i / k),
                radii[i % len(radii)] * math.sin(start + 2 * math.pi * i / k),
            )
            for i in range(k)
        ]
    if obj.shape == "square":
        pts = [(x * math.sqrt(2) * 0.8, y * math.sqrt(2) * 0.8) for x, y in pts]
    ca, sa = math.cos(obj.angle), math.sin(obj.angle)
    return [(obj.cx + obj.r * (x * ca - y * sa), obj.cy + obj.r * (x * sa + y * ca)) for x, y in pts]


def _mask(obj: SceneObject, size: int, scale: int = 4) -> np.ndarray:
    """Anti-aliased coverage of the object (size × size, in [0, 1]), drawn at ``scale``× and reduced."""
    big = Image.new("L", (size * scale, size * scale), 0)
    draw = ImageDraw.Draw(big)
    s = scale
    if obj.shape in ("circle", "ring"):
        draw.ellipse([(obj.cx - obj.r) * s, (obj.cy - obj.r) * s, (obj.cx + obj.r) * s, (obj.cy + obj.r) * s], fill=255)
        if obj.shape == "ring":
            ri = obj.r * 0.5
            draw.ellipse([(obj.cx - ri) * s, (obj.cy - ri) * s, (obj.cx + ri) * s, (obj.cy + ri) * s], fill=0)
    else:
        draw.polygon([(x * s, y * s) for x, y in _polygon(obj)], fill=255)
    return np.asarray(big.resize((size, size), Image.BOX), dtype=np.float32) / 255.0


def _texture(obj: SceneObject, size: int, rng: np.random.Generator) -> np.ndarray:
    """The object's colour field (size × size × 3, in [0, 1]) with its texture pattern."""
    base = np.array(COLOURS[obj.colour], dtype=np.float32) / 255.0
    base = np.clip(base + rng.normal(0, 0.03, 3), 0, 1)
    alt = base * 0.35 if obj.colour != "black" else np.full(3, 0.8, np.float32)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    u, v = xx - obj.cx, yy - obj.cy
    ca, sa = math.cos(obj.angle), math.sin(obj.angle)
    ru, rv = u * ca + v * sa, -u * sa + v * ca
    period = max(3.0, obj.r * 0.55)
    if obj.texture == "striped":
        pat = (np.floor(ru / period * 2) % 2).astype(np.float32)
    elif obj.texture == "checkered":
        pat = ((np.floor(ru / period * 2) + np.floor(rv / period * 2)) % 2).astype(np.float32)
    elif obj.texture == "dotted":
        fu = (ru / period) % 1.0 - 0.5
        fv = (rv / period) % 1.0 - 0.5
        pat = (fu**2 + fv**2 < 0.09).astype(np.float32)
    else:
        pat = np.zeros((size, size), np.float32)
    return base[None, None] * (1 - pat[..., None]) + alt[None, None] * pat[..., None]


def render(scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """The scene's image (size × size × 3 float32 in [0, 1]) and boxes ((n, 4) x0, y0, x1, y1 in pixels)."""
    rng = np.random.default_rng(scene.seed)
    size = scene.size
    bg = np.array(BACKGROUNDS[scene.background], dtype=np.float32) / 255.0
    yy = np.linspace(-0.06, 0.06, size, dtype=np.float32)
    img = np.clip(bg[None, None] + yy[:, None, None] * rng.choice([-1, 1]), 0, 1) * np.ones((size, size, 3), np.float32)
    boxes = []
    for obj in scene.objects:
        m = _mask(obj, size)[..., None]
        img = img * (1 - m) + _texture(obj, size, rng) * m
        ys, xs = np.nonzero(m[..., 0] > 0.5)
        boxes.append([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1] if len(xs) else [0, 0, 0, 0])
    img = np.clip(img + rng.normal(0, scene.noise, img.shape).astype(np.float32), 0, 1)
    return img.astype(np.float32), np.asarray(boxes, dtype=np.float32).reshape(-1, 4)


def attribute_phrase(scene: Scene, *, texture: bool = True) -> str:
    """``"a red striped circle"`` / ``"two red striped circles"`` (plain texture is left unsaid)."""
    shape, colour, tex = scene.kind
    words = [colour] + ([tex] if texture and tex != "plain" else [])
    n = len(scene.objects)
    if n == 1:
        return " ".join([article(words[0]), *words, shape])
    return " ".join([COUNTS[n], *words, PLURAL[shape]])


def article(word: str) -> str:
    """``"an"`` before a vowel, else ``"a"``."""
    return "an" if word[:1] in "aeiou" else "a"


def captions(scene: Scene) -> list[str]:
    """Every caption that truthfully describes ``scene`` (the training set samples one per view)."""
    attr = attribute_phrase(scene)
    bg = f"on a {scene.background} background"
    out = [f"{attr}.", f"{attr} {bg}.", f"a photo of {attr}.", f"a picture of {attr} {bg}."]
    if len(scene.objects) == 1:
        pos = position_name(scene.objects[0], scene.size)
        out += [f"{attr} at the {pos}.", f"{attr} at the {pos} {bg}."]
        noun = scene.noun
        if noun is not None:
            a = article(noun)
            out += [
                f"a photo of {a} {noun}.",
                f"{a} {noun}.",
                f"{a} {noun} {bg}.",
                f"a photo of {a} {noun}, {attr}.",
                f"{a} {noun} at the {pos} of the picture.",
            ] * 2  # nouns are rarer than attributes: weight their captions up
    else:
        out += [f"a photo of {COUNTS[len(scene.objects)]} {PLURAL[scene.kind[0]]}."]
    return out


def caption_words() -> set[str]:
    """Every word the caption grammar can produce (for the tokenizer's vocabulary)."""
    words = set(SHAPES) | set(PLURAL.values()) | set(COLOURS) | set(BACKGROUNDS) | set(TEXTURES)
    words |= {w for p in POSITIONS for w in p.split()} | set(COUNTS.values()) | set(LEXICON)
    words |= {"a", "an", "photo", "of", "picture", "on", "background", "at", "the", "."}
    words.add(",")
    return words
