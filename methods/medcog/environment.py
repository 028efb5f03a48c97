"""The interactive-diagnosis environment (spec §3.4): prompts, the action parser and the exam results.

The conversation state is a plain dict (so a LangGraph graph can checkpoint it); :func:`respond`
takes the model's latest reply and returns the updates: the next user message, the phase, the
remaining actions, the requested tests. Actions: PE, LAB, IMAGE, MICRO, OUTPUT; each exam type is
offered once; LAB/IMAGE/MICRO need a second turn naming the tests; once every exam has been used
the model is told to output. Prompts are our own wording of the reference's.
"""

from __future__ import annotations

import re
from typing import Any

from methods.medcog.cases import Case
from methods.medcog.exams import extract_diagnosis, imaging_hits, match_tests, parse_imaging

ACTIONS = ("PE", "LAB", "IMAGE", "MICRO", "OUTPUT")
EXAMS = ("PE", "LAB", "IMAGE", "MICRO")
MAX_TURNS = 30
CONTEXT_TOKENS = 4096
TEMPERATURE = 0.8
MAX_FORMAT_WARNINGS = 3

SYSTEM = (
    "You are a medical AI assistant helping a doctor reach a diagnosis and a treatment plan for a patient. "
    "You see the patient's history and the results of tests ordered so far, and you may order more: a physical "
    "examination, laboratory tests, microbiology tests or imaging.\n\n"
    "Actions:\n"
    "1. PE: perform a physical examination and receive the findings.\n"
    "2. LAB: order laboratory tests and receive all their values at once.\n"
    "3. MICRO: order microbiology tests and receive all their results at once.\n"
    "4. IMAGE: order imaging and receive the radiology reports at once.\n"
    "5. OUTPUT: give the final diagnosis and treatment plan.\n\n"
    "Order examinations only when the diagnosis needs them; choose OUTPUT when you are confident.\n\n"
    "Always answer in this format:\n\nRationale: (why you choose the next action)\nAction: (one of {actions})"
)
START = "A patient comes to see the doctor.\nPatient history: {history}\nChoose your next action from [{actions}]."
PE_RESULT = "Physical examination of the patient: {text}\nChoose your next action from [{actions}]."
SPEC = {
    "LAB": ("laboratory tests", "Lab Tests"),
    "MICRO": ("microbiology tests", "Microbiology tests"),
    "IMAGE": ("imaging scans", "Imaging scans"),
}
SPEC_PROMPT = (
    "You chose {action}. List the specific {what} you want, in this format:\n"
    "Rationale: (why)\n{field}: (the {what}, separated by commas)"
)
RESULT = {
    "LAB": "Laboratory results of this patient:\n{text}\nChoose your next action from [{actions}].",
    "MICRO": "Microbiology results of this patient:\n{text}\nChoose your next action from [{actions}].",
    "IMAGE": "Radiology reports of this patient:\n{text}\nChoose your next action from [{actions}].",
}
NO_TESTS = (
    "NO VALID TESTS FOUND. Choose your next action from [{actions}].\n\n"
    "Answer in this format:\nRationale: (why)\nAction: (one of [{actions}])"
)
WARN_ACTION = (
    "That action is not available or the format is wrong. Answer in this format:\n"
    "Rationale: (why)\nAction: (one of [{actions}])\nChoose your next action from [{actions}]."
)
OUTPUT_PROMPT = (
    "You chose OUTPUT. Give the diagnosis and treatment plan for this patient from what you know, in this format:\n"
    "Diagnosis: (the final diagnosis, a specific disease name)\nTreatment: (procedures and prescriptions)"
)
FORCE_OUTPUT = (
    "You have seen all the information available for this patient. Give the diagnosis and treatment plan now, "
    "in this format:\nDiagnosis: (the final diagnosis, a specific disease name)\nTreatment: (procedures and "
    "prescriptions)"
)
WARN_DIAGNOSIS = (
    "No diagnosis or treatment found. Use exactly this format:\n"
    "Diagnosis: (the final diagnosis, a specific disease name)\nTreatment: (procedures and prescriptions)"
)
SUMMARY_PROMPT = (
    "Summarise our conversation as briefly as possible while keeping everything that matters for the diagnosis "
    "(history, findings, results). Answer in this format:\nSummary: (the summary)"
)


def start_state(case: Case) -> dict[str, Any]:
    """The first messages and bookkeeping of an episode."""
    actions = list(ACTIONS)
    return {
        "messages": [
            {"role": "system", "content": SYSTEM.format(actions="[" + ", ".join(ACTIONS) + "]")},
            {"role": "user", "content": START.format(history=case.history, actions=", ".join(actions))},
        ],
        "phase": "choose",
        "available": actions,
        "requested_labs": [],
        "requested_micro": [],
        "requested_imaging": [],
        "actions_taken": [],
        "warnings": 0,
        "diagnosis": None,
        "done": False,
        "turn": 0,
    }


def parse_action(reply: str, available: list[str]) -> str | None:
    """The ``Action:`` of a reply when it is one of the available actions."""
    m = re.search(r"Action\s*:\s*\**\s*\[?\s*([A-Za-z]+)", reply)
    if not m:
        return None
    action = m.group(1).upper()
    return action if action in available else None


def parse_list(reply: str, field: str) -> list[str]:
    m = re.search(rf"{re.escape(field)}\s*:\s*(.*)", reply, re.IGNORECASE | re.DOTALL)
    text = m.group(1) if m else ""
    return [t.strip(" .*") for t in re.split(r"[,;\n]", text) if t.strip(" .*")]


def _offer(available: list[str]) -> str:
    return ", ".join(available)


def respond(case: Case, state: dict[str, Any], reply: str, data_dir=None) -> dict[str, Any]:
    """State updates after the model's ``reply`` (already appended to ``messages`` by the caller)."""
    phase, available = state["phase"], list(state["available"])
    upd: dict[str, Any] = {}

    def say(text: str) -> None:
        upd["messages"] = state["messages"] + [{"role": "user", "content": text}]

    def after_exam(action: str) -> list[str]:
        left = [a for a in available if a != action]
        upd["available"] = left
        upd["actions_taken"] = state["actions_taken"] + [action]
        return left

    if phase == "choose":
        action = parse_action(reply, available)
        if action is None:
            upd["warnings"] = state["warnings"] + 1
            say(WARN_ACTION.format(actions=_offer(available)))
        elif action == "OUTPUT":
            upd["phase"] = "output"
            upd["actions_taken"] = state["actions_taken"] + ["OUTPUT"]
            say(OUTPUT_PROMPT)
        elif action == "PE":
            left = after_exam("PE")
            if left == ["OUTPUT"]:
                upd["phase"] = "output"
                say(PE_RESULT.format(text=case.physical_exam, actions="OUTPUT") + "\n\n" + FORCE_OUTPUT)
            else:
                say(PE_RESULT.format(text=case.physical_exam, actions=_offer(left)))
        else:
            what, field = SPEC[action]
            upd["phase"] = f"spec:{action}"
            say(SPEC_PROMPT.format(action=action, what=what, field=field))
    elif phase.startswith("spec:"):
        action = phase.split(":", 1)[1]
        names = parse_list(reply, SPEC[action][1])
        left = after_exam(action)
        text = ""
        if action == "LAB":
            ids = sorted({i for v in match_tests(names, data_dir).values() for i in v} & set(case.labs))
            upd["requested_labs"] = sorted(set(state["requested_labs"]) | set(ids))
            text = case.lab_text(ids)
        elif action == "MICRO":
            ids = sorted({i for v in match_tests(names, data_dir).values() for i in v} & set(case.micro))
            upd["requested_micro"] = sorted(set(state["requested_micro"]) | set(ids))
            text = case.micro_text(ids)
        else:
            hits = imaging_hits(list(case.radiology), parse_imaging(", ".join(names)), data_dir)
            upd["requested_imaging"] = sorted(set(state["requested_imaging"]) | set(hits))
            text = "\n".join(f"{h}: {case.radiology[h]}" for h in hits)
        if left == ["OUTPUT"]:
            upd["phase"] = "output"
            body = RESULT[action].format(text=text, actions="OUTPUT") if text else "NO VALID TESTS FOUND."
            say(body + "\n\n" + FORCE_OUTPUT)
        else:
            upd["phase"] = "choose"
            say(
                RESULT[action].format(text=text, actions=_offer(left))
                if text
                else NO_TESTS.format(actions=_offer(left))
            )
    elif phase == "output":
        diagnosis = extract_diagnosis(reply)
        if diagnosis:
            upd.update(diagnosis=diagnosis, done=True, phase="done")
        elif state["warnings"] + 1 >= MAX_FORMAT_WARNINGS:
            upd.update(diagnosis="", done=True, phase="done", warnings=state["warnings"] + 1)
        else:
            upd["warnings"] = state["warnings"] + 1
            say(WARN_DIAGNOSIS)
    return upd


def summary_restart(case: Case, state: dict[str, Any], summary_reply: str) -> list[dict[str, str]]:
    """The messages after summarising: the system prompt, then the summary and the pending instruction."""
    m = re.search(r"Summary\s*:\s*(.*)", summary_reply, re.IGNORECASE | re.DOTALL)
    summary = (m.group(1) if m else summary_reply).strip()
    last_user = state["messages"][-1]["content"] if state["messages"][-1]["role"] == "user" else ""
    return [
        state["messages"][0],
        {"role": "user", "content": f"Summary of the consultation so far: {summary}\n\n{last_user}"},
    ]
