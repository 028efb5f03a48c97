"""Prompt texts (spec §3.1–3.2): the shared preamble, each node's knowledge, question and answer format.

Constants only. The knowledge texts keep the reference's content: Z-ADC < −2 over ADC > 0, grade
thresholds 1 / 5 / 50 %, the two MRI injury score rule sets ("clinic", "math"), the prognostic facts
and N4's instruction to predict the state at two years.
"""

from __future__ import annotations

PREAMBLE = (
    "You are an expert in Hypoxic-Ischemic Encephalopathy (HIE) and neonatal brain injury, reading the MRI of a "
    "newborn. For each slice you get three images: 'Slice k' is the skull-stripped ADC map; 'ZMAP Slice k' is "
    "the Z-ADC map (deviation from a normative atlas) with every voxel of Z-ADC < -2 painted blue, i.e. the "
    "lesion; 'ROI Slice k' is the 62-region atlas parcellation with a colour legend. Only the middle third of "
    "the slices is shown, ordered from inferior to superior."
)
VISUAL_FINDINGS_NOTE = "The images were read for you; their findings:"

KNOWLEDGE_GRADING = (
    "Knowledge: the lesion percentage is the number of voxels with Z-ADC < -2 divided by the number of voxels "
    "with ADC > 0 (the brain). Grades: level1 if the percentage is <= 1%; level2 if it is > 1% and <= 5%; "
    "level3 if it is > 5% and <= 50%; level4 if it is > 50%."
)
QUESTION_GRADING = "Question: what is the lesion grade of this ADC map, and its lesion percentage?"
FORMAT_GRADING = (
    "Answer format: [ans]: levelK, p where K is 1-4 and p the lesion fraction as a decimal with 4 digits "
    "(e.g. [ans]: level2, 0.0312). Answer only in this format."
)

QUESTION_ANATOMY = "Question: which of the 62 regions (ROI ids below) contain lesion (blue) voxels?"
ROI_TABLE_HEADER = "ROI id: region name"
FORMAT_ANATOMY = "Answer format: [ans]: id, id, ... (or [ans]: none). Answer only in this format."

KNOWLEDGE_SCORE = {
    "clinic": (
        "Knowledge (MRI injury score, NICHD): Score 0 = no injury. Score 1 = minimal cerebral lesions, or more "
        "extensive cerebral injury, without basal ganglia/thalamus (BGT), anterior limb of the internal capsule "
        "(ALIC), posterior limb (PLIC) or watershed (WS) injury. Score 2 = any BGT, ALIC, PLIC or WS injury, with "
        "or without other cerebral injury. Score 3 = cerebral hemispheric devastation."
    ),
    "math": (
        "Knowledge (MRI injury score, quantitative): Score 0 = no injury. Score 1 = white-matter injury only. "
        "Score 2 = injury in grey matter (GM), BGT, ALIC or PLIC with that region's lesion share below 75%. "
        "Score 3 = GM and white matter (WM) both injured above 75%, or BGT, ALIC or PLIC injured above 75%."
    ),
}
PROGNOSTIC_FACTS = (
    "Prognosis: a higher score means a worse outcome; with Score 3 the chance of an adverse outcome approaches "
    "100%. Injury to the vermis, cerebellum, brainstem or hippocampus is associated with an adverse outcome."
)
QUESTION_SCORE = "Question: what is the MRI injury score (0-3) of this MRI?"
FORMAT_SCORE = "Answer format: [ans]: Score s. where s is 0, 1, 2 or 3. Answer only in this format."

OUTCOME_INSTRUCTIONS = (
    "Predict the infant's neurocognitive state at 2 years of age, not now. Infants with lower scores and fewer "
    "injured regions usually become normal; high scores and injury to vermis, cerebellum, brainstem or "
    "hippocampus usually mean an adverse outcome."
)
QUESTION_OUTCOME = "Question: will the 2-year neurocognitive outcome be adverse (1) or normal (0)?"
FORMAT_OUTCOME = "Answer format: [ans]: 1 for adverse or [ans]: 0 for normal. Answer only in this format."

PARENT = {
    "n1": "Your previous answer to the lesion grading question was: {answer}",
    "n2": "Your previous answer to the lesion anatomy question (injured ROI ids) was: {answer}",
    "n3": "Your previous answer to the MRI injury score question was: {answer}",
}
