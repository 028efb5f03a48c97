"""The 62-ROI neonatal atlas: the real label table and a synthetic parcellation by geometric partition (spec §5).

The label table (IDs and names) is the one the paper's prompts give the LVLM, copied from
``i3-research/HIE-Reasoning`` (``roi62_labels.tsv`` beside this file; also in
``shared/data/clinical_got/``). The real parcellations are under a data-use agreement, so
:func:`build_atlas` draws a stand-in: an ellipsoidal brain split by hemisphere × lobe × depth,
deep grey nuclei (basal ganglia, thalami, ALIC/PLIC, ventral DC) as small central ellipsoids,
cerebellum / vermis / brainstem inferior-posterior, ventricles and a CSF shell. Every one of the
62 labels gets voxels at the default size (a test checks it).

Coordinates: axis 0 = x (left → right, u < 0 is the left hemisphere), axis 1 = y
(posterior → anterior, v > 0 anterior), axis 2 = z (inferior → superior, w > 0 superior), each
normalised to the brain ellipsoid's radii.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

LABELS_FILE = Path(__file__).with_name("roi62_labels.tsv")

# --- groups used by the knowledge texts, the score rules and the generator -----------------------
BGT = (23, 30, 59, 60)  # basal ganglia L/R, thalami L/R
ALIC = (91, 92)
PLIC = (93, 94)
WM = (81, 82, 83, 84, 85, 86, 87, 88, 95)  # lobar white matter L/R + corpus callosum
GM = (
    *(104, 105, 102, 103, 120, 121, 124, 125, 112, 113, 100, 101, 116, 117),
    *(160, 161, 128, 129, 108, 109, 106, 107, 148, 149, 122, 123, 132, 133, 180, 181),
)  # cortical / limbic grey matter, insula, inferior GM
WATERSHED = (81, 82, 85, 86, 83, 84, 106, 107)  # parasagittal frontal/parietal/occipital WM + parietal lateral GM
PROGNOSTIC = (71, 38, 39, 35, 47, 48)  # vermis, cerebellum L/R, brainstem, hippocampus L/R (knowledge text)
VENTRICLES_CSF = (4, 11, 49, 50, 46)

#: The "primary" (typical) HIE regions: injured ROIs outside this list are "uncommon" (N2.5).
#: The reference reads ``atlases/primary_area_0.225.json`` (not public); this stand-in lists the regions the
#: two classic patterns hit — watershed cortex/white matter and the BGT/PLIC/ALIC complex — plus the
#: corpus callosum and lateral frontal/parietal cortex.
PRIMARY = (*BGT, *ALIC, *PLIC, 81, 82, 83, 84, 85, 86, 95, 120, 121, 106, 107, 87, 88)


@functools.cache
def roi_table() -> dict[int, str]:
    """ROI id → region name, in the table's order (62 rows)."""
    rows = LABELS_FILE.read_text().strip().splitlines()[1:]
    out = {}
    for row in rows:
        rid, name = row.split("\t")
        out[int(rid)] = name.strip()
    if len(out) != 62:
        raise ValueError(f"{LABELS_FILE} should hold 62 ROIs, found {len(out)}")
    return out


def roi_table_text() -> str:
    """The table as the prompts quote it: one ``id: name`` per line."""
    return "\n".join(f"{rid}: {name}" for rid, name in roi_table().items())


def _ellipsoid(u, v, w, c, r) -> np.ndarray:
    return ((u - c[0]) / r[0]) ** 2 + ((v - c[1]) / r[1]) ** 2 + ((w - c[2]) / r[2]) ** 2 <= 1.0


def _pair(left: int, right: int, u: np.ndarray) -> np.ndarray:
    return np.where(u < 0, left, right)


def build_atlas(shape: tuple[int, int, int] = (64, 64, 24)) -> np.ndarray:
    """The synthetic 62-label parcellation (int16; 0 = outside the brain)."""
    nx, ny, nz = shape
    x, y, z = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    rx, ry, rz = 0.46 * nx, 0.46 * ny, 0.46 * nz
    u, v, w = (x - (nx - 1) / 2) / rx, (y - (ny - 1) / 2) / ry, (z - (nz - 1) / 2) / rz
    r = np.sqrt(u**2 + v**2 + w**2)
    brain = r <= 1.0
    au = np.abs(u)
    lab = np.zeros(shape, dtype=np.int16)

    # cerebral lobes × depth (painted first, overwritten by everything more specific)
    frontal, occipital = v > 0.25, v < -0.5
    parietal = ~frontal & ~occipital & (w > 0.05)
    temporal = ~frontal & ~occipital & ~parietal
    deep = r < 0.62
    lab[frontal & deep] = _pair(81, 82, u)[frontal & deep]
    lab[parietal & deep] = _pair(85, 86, u)[parietal & deep]
    lab[occipital & deep] = _pair(83, 84, u)[occipital & deep]
    lab[temporal & deep] = _pair(87, 88, u)[temporal & deep]
    cortex = brain & ~deep
    medial = au < 0.3
    sel = cortex & frontal
    lab[sel & medial] = _pair(124, 125, u)[sel & medial]
    lab[sel & ~medial & (w > -0.1)] = _pair(120, 121, u)[sel & ~medial & (w > -0.1)]
    lab[sel & ~medial & (w <= -0.1)] = _pair(112, 113, u)[sel & ~medial & (w <= -0.1)]
    lab[sel & (w < -0.45)] = _pair(104, 105, u)[sel & (w < -0.45)]
    sel = cortex & parietal
    lab[sel & medial] = _pair(148, 149, u)[sel & medial]
    lab[sel & ~medial] = _pair(106, 107, u)[sel & ~medial]
    sel = cortex & occipital
    lab[sel & medial] = _pair(108, 109, u)[sel & medial]
    lab[sel & ~medial] = _pair(128, 129, u)[sel & ~medial]
    lab[sel & (w < -0.2)] = _pair(160, 161, u)[sel & (w < -0.2)]
    sel = cortex & temporal
    lab[sel & (w > -0.2)] = _pair(180, 181, u)[sel & (w > -0.2)]
    lab[sel & (w <= -0.2)] = _pair(132, 133, u)[sel & (w <= -0.2)]
    lab[sel & (w <= -0.5)] = _pair(122, 123, u)[sel & (w <= -0.5)]
    lab[sel & medial] = _pair(116, 117, u)[sel & medial]

    # midline and deep structures (centre, radii in normalised units); mirrored for L/R pairs
    def put(left: int, right: int | None, c, rad) -> None:
        if right is None:
            lab[_ellipsoid(u, v, w, c, rad) & brain] = left
            return
        lab[_ellipsoid(u, v, w, (-c[0], c[1], c[2]), rad) & brain] = left
        lab[_ellipsoid(u, v, w, (c[0], c[1], c[2]), rad) & brain] = right

    put(100, 101, (0.08, 0.0, 0.52), (0.08, 0.45, 0.16))  # limbic cingulate GM
    put(95, None, (0.0, 0.0, 0.33), (0.16, 0.48, 0.12))  # corpus callosum
    put(102, 103, (0.55, 0.08, -0.05), (0.08, 0.2, 0.25))  # insula
    put(23, 30, (0.3, 0.15, 0.0), (0.1, 0.14, 0.22))  # basal ganglia
    put(91, 92, (0.2, 0.24, 0.05), (0.05, 0.1, 0.2))  # anterior limb IC
    put(93, 94, (0.23, -0.02, 0.05), (0.05, 0.1, 0.2))  # PLIC
    put(59, 60, (0.13, -0.12, 0.05), (0.09, 0.13, 0.2))  # thalamus
    put(49, 50, (0.17, 0.1, 0.2), (0.05, 0.3, 0.1))  # lateral ventricles
    put(4, None, (0.0, -0.08, 0.0), (0.03, 0.12, 0.2))  # 3rd ventricle
    put(61, 62, (0.1, -0.12, -0.3), (0.08, 0.1, 0.13))  # ventral DC
    put(31, 32, (0.35, 0.1, -0.42), (0.08, 0.09, 0.14))  # amygdala
    put(47, 48, (0.35, -0.15, -0.38), (0.08, 0.16, 0.14))  # hippocampus

    # infratentorial: inferior-posterior
    infra = brain & (w < -0.45) & (v < -0.05)
    lab[infra] = _pair(38, 39, u)[infra]  # cerebellum
    lab[infra & (au < 0.14) & (v < -0.45)] = 71  # vermis
    lab[infra & (au < 0.16) & (v >= -0.45)] = 35  # brainstem
    put(11, None, (0.0, -0.42, -0.62), (0.05, 0.05, 0.12))  # 4th ventricle

    lab[brain & (r > 0.94)] = 46  # CSF shell
    lab[~brain] = 0
    return lab


def roi_sizes(atlas: np.ndarray) -> dict[int, int]:
    """Voxels per ROI id (only the 62 table ids)."""
    counts = np.bincount(atlas.ravel().astype(np.int64), minlength=200)
    return {rid: int(counts[rid]) for rid in roi_table()}


def palette() -> dict[int, tuple[int, int, int]]:
    """A distinct, exact RGB colour per ROI (the ROI renders and the findings adapter share it)."""
    rng = np.random.default_rng(62)
    out: dict[int, tuple[int, int, int]] = {}
    used: set[tuple[int, int, int]] = {(0, 0, 0), (255, 255, 255)}
    for rid in roi_table():
        while True:
            c = tuple(int(x) for x in rng.integers(40, 236, 3))
            if c not in used:
                used.add(c)
                out[rid] = c
                break
    return out
