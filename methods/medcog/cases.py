"""Synthetic high-level cases (a stand-in for MIMIC-IV, which needs a credentialed licence).

Each case has the fields of a MIMIC-CDM case: history (shown at the start), physical
examination, lab results keyed by MIMIC-IV lab item id (ids from the panel map the simulator
matches against), microbiology keyed by item id, radiology exams (names from
``radiology_name_dict.json``) with a short report, and the label disease. Values are drawn from
per-disease templates with seeded variation (age, sex, values, which exams the record holds).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from methods.medcog.exams import SYNONYMS, meta

# item id → (label, unit, normal low, normal high)
LABS: dict[int, tuple[str, str, float, float]] = {
    51301: ("White Blood Cells", "K/uL", 4.0, 11.0),
    51222: ("Hemoglobin", "g/dL", 12.0, 17.0),
    51265: ("Platelet Count", "K/uL", 150, 400),
    50983: ("Sodium", "mEq/L", 135, 145),
    50971: ("Potassium", "mEq/L", 3.5, 5.1),
    50912: ("Creatinine", "mg/dL", 0.5, 1.2),
    51006: ("Urea Nitrogen", "mg/dL", 7, 20),
    50931: ("Glucose", "mg/dL", 70, 100),
    50861: ("Alanine Aminotransferase (ALT)", "IU/L", 5, 40),
    50878: ("Asparate Aminotransferase (AST)", "IU/L", 5, 40),
    50863: ("Alkaline Phosphatase", "IU/L", 40, 130),
    50885: ("Bilirubin, Total", "mg/dL", 0.1, 1.5),
    50956: ("Lipase", "IU/L", 0, 60),
    50889: ("C-Reactive Protein", "mg/L", 0, 5),
    50813: ("Lactate", "mmol/L", 0.5, 2.0),
    50963: ("NTproBNP", "pg/mL", 0, 125),
    51003: ("Troponin T", "ng/mL", 0, 0.01),
    50993: ("Thyroid Stimulating Hormone", "uIU/mL", 0.27, 4.2),
    50852: ("% Hemoglobin A1c", "%", 4.0, 6.0),
    51237: ("INR(PT)", "", 0.9, 1.1),
}
BASIC = [51301, 51222, 51265, 50983, 50971, 50912, 51006, 50931]
LIVER = [50861, 50878, 50863, 50885]


@dataclass(frozen=True)
class Template:
    history: str
    exam: str
    abnormal: dict[int, float]  # id → value (outside the normal range)
    extra_normal: list[int] = field(default_factory=list)
    micro: dict[str, str] = field(default_factory=dict)  # culture name (panel map key) → result
    imaging: dict[str, str] = field(default_factory=dict)  # exam name → report
    positive_tests: dict[str, str] = field(default_factory=dict)  # non-numeric lab (panel key) → result


TEMPLATES: dict[str, Template] = {
    "Pancreatitis": Template(
        "severe epigastric pain radiating to the back since last night, nausea and vomiting; drinks heavily",
        "epigastric tenderness with guarding, hypoactive bowel sounds, tachycardia 112",
        {50956: 1450, 51301: 14.2, 50931: 165},
        LIVER,
        imaging={"CT ABD & PELVIS WITH CONTRAST": "Peripancreatic fat stranding and edema of the pancreas."},
    ),
    "heart failure": Template(
        "progressive shortness of breath on exertion, orthopnea and leg swelling over two weeks",
        "bibasilar crackles, jugular venous distension, pitting edema of both legs",
        {50963: 5400, 50912: 1.6, 50983: 131},
        [51003],
        imaging={"CHEST (PA & LAT)": "Cardiomegaly with pulmonary vascular congestion and small effusions."},
    ),
    "atrial fibrillation": Template(
        "palpitations and light-headedness for a day, no chest pain",
        "irregularly irregular pulse at 128, no murmurs",
        {50993: 0.1},
        BASIC[:6] + [51003],
        imaging={"CHEST (PORTABLE AP)": "No acute cardiopulmonary process."},
    ),
    "cholecystitis": Template(
        "right upper quadrant pain after fatty meals for three days, fever",
        "Murphy sign positive, right upper quadrant tenderness, temperature 38.6",
        {51301: 15.8, 50863: 190, 50885: 2.1},
        LIVER[:2] + [50956],
        imaging={"US ABD LIMIT, SINGLE ORGAN": "Distended gallbladder with wall thickening and stones."},
    ),
    "appendicitis": Template(
        "periumbilical pain that moved to the right lower abdomen, anorexia",
        "McBurney point tenderness with rebound, temperature 38.2",
        {51301: 16.4, 50889: 84},
        BASIC[:4],
        imaging={"CT ABD & PELVIS WITH CONTRAST": "Dilated, inflamed appendix with periappendiceal fat stranding."},
    ),
    "Sepsis": Template(
        "fever, chills and confusion for a day; burning on urination last week",
        "temperature 39.4, blood pressure 84/50, heart rate 124, warm extremities",
        {51301: 21.5, 50813: 4.6, 50912: 2.1},
        BASIC[:4],
        micro={"Blood Culture": "Escherichia coli growing in 2 of 2 bottles", "URINE CULTURE": "E. coli >100,000"},
        imaging={"CHEST (PORTABLE AP)": "No focal consolidation."},
    ),
    "type 2 diabetes mellitus": Template(
        "thirst, frequent urination and weight loss over two months; overweight",
        "BMI 33, acanthosis nigricans on the neck, otherwise normal",
        {50931: 286, 50852: 9.4},
        BASIC[:6],
    ),
    "Hepatitis C": Template(
        "fatigue and dark urine; injected drugs years ago",
        "mild jaundice, tender hepatomegaly",
        {50861: 310, 50878: 240, 50885: 2.4},
        [50863, 51237],
        imaging={"LIVER OR GALLBLADDER US (SINGLE ORGAN)": "Coarsened hepatic echotexture, no focal lesion."},
        positive_tests={"Hepatitis C Virus Antibody": "POSITIVE"},
    ),
    "Hypothyroidism": Template(
        "tiredness, cold intolerance, constipation and weight gain over months",
        "dry skin, slow relaxing reflexes, heart rate 54",
        {50993: 38.0},
        BASIC[:4],
        imaging={"THYROID U.S.": "Diffusely heterogeneous, mildly enlarged thyroid."},
    ),
    "Subarachnoid hemorrhage": Template(
        "sudden worst headache of life while lifting, then vomiting",
        "neck stiffness, photophobia, drowsy but oriented",
        {},
        BASIC[:6],
        imaging={"CT HEAD W/O CONTRAST": "Hyperdense blood in the basal cisterns and sylvian fissures."},
    ),
}
DISEASES: tuple[str, ...] = tuple(TEMPLATES)


@dataclass
class Case:
    """One synthetic patient."""

    case_id: str
    disease: str
    history: str
    physical_exam: str
    labs: dict[int, str]  # item id → "value unit" or a qualitative result
    micro: dict[int, str]  # item id → result
    radiology: dict[str, str]  # exam name → report

    def lab_text(self, ids: list[int]) -> str:
        return "\n".join(f"({i}) {_label(i)}: {self.labs[i]}" for i in ids)

    def micro_text(self, ids: list[int]) -> str:
        return "\n".join(f"({i}) {self.micro[i]}" for i in ids)


_QUAL: dict[int, str] = {}


def _label(i: int) -> str:
    return LABS[i][0] if i in LABS else _QUAL.get(i, f"item {i}")


def _fmt(v: float, unit: str) -> str:
    return (f"{v:.2f}" if abs(v) < 10 else f"{v:.0f}") + (f" {unit}" if unit else "")


def make_case(disease: str, index: int, seed: int = 2024, data_dir=None) -> Case:
    """Case ``index`` of ``disease`` (deterministic in ``seed``)."""
    if disease not in TEMPLATES:
        raise ValueError(f"no template for {disease!r}; one of {DISEASES}")
    t = TEMPLATES[disease]
    rng = random.Random(f"{seed}:{disease}:{index}")
    panels = meta(data_dir)[0]
    age, sex = rng.randint(28, 82), rng.choice(["man", "woman"])
    labs: dict[int, str] = {}
    for i in sorted(set(t.extra_normal) | set(BASIC[:3]) - set(t.abnormal)):
        label, unit, lo, hi = LABS[i]
        labs[i] = _fmt(rng.uniform(lo, hi), unit)
    for i, v in t.abnormal.items():
        labs[i] = _fmt(v * rng.uniform(0.85, 1.15), LABS[i][1])
    for name, result in t.positive_tests.items():
        for i in panels.get(name, [])[:1]:
            labs[i] = result
            _QUAL[i] = name
    micro: dict[int, str] = {}
    for name, result in t.micro.items():
        ids = panels.get(name, [])
        if ids:
            micro[ids[0]] = f"{name}: {result}"
    radiology = dict(t.imaging)
    if radiology and index % 3 == 2:  # some records hold an extra exam the model is unlikely to ask for
        radiology["CHEST (PA & LAT)"] = radiology.get("CHEST (PA & LAT)", "No acute cardiopulmonary process.")
    return Case(
        case_id=f"{disease.lower().replace(' ', '_')}-{index}",
        disease=disease,
        history=f"A {age}-year-old {sex} with {t.history}.",
        physical_exam=t.exam + ".",
        labs=labs,
        micro=micro,
        radiology=radiology,
    )


def make_cases(diseases: list[str], per_disease: int, seed: int = 2024, data_dir=None) -> list[Case]:
    return [make_case(d, i, seed, data_dir) for d in diseases for i in range(per_disease)]


def case_synonyms(disease: str) -> list:
    return SYNONYMS.get(disease, [])
