"""Which LLMs a request may name, and which may receive the server's credentials.

Several job types take a free-text litellm model string (``llm.complete``'s ``model``, DEFAME's
``model``, PAE's ``policy_model``/``judge_model``). Unchecked, a client chooses where the worker
connects (``ollama/x`` → ``localhost:11434``) and a remote provider would be sent the server's
``PAPERWORKS_LLM_API_KEY``. So:

* a model is **allowed** when it is on ``settings.llm_allowed_models`` (comma-separated), or — when
  that is empty — a registered local model (``local/<name>``); the configured default
  ``settings.llm_model`` (and DEFAME's ``vlm_model``) are always allowed; ``scripted/*`` (the
  in-process test provider: no network) is allowed; so is ``local/<directory>`` inside the app's own
  stores (fine-tuned checkpoints under ``home``/``cache_dir``/``artifact_dir``);
* the API refuses other values with a 422 listing :func:`allowed_models`
  (:func:`check_params`), and the gateway refuses them again before any call (:func:`check_model`);
* the API key and API base are sent only to a model the operator configured by name
  (:func:`gets_credentials`): ``llm_model`` or an entry of ``llm_allowed_models``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.config import get_settings

MODEL_KEYS = frozenset({"model", "policy_model", "judge_model", "vlm_model"})
IN_PROCESS_PREFIX = "scripted/"


class ModelNotAllowed(ValueError):
    """A model string that is not on the allow-list."""

    def __init__(self, model: str, field: str | None = None) -> None:
        self.model, self.field, self.allowed = model, field, allowed_models()
        where = f"{field}: " if field else ""
        super().__init__(
            f"{where}model {model!r} is not allowed on this server; allowed: {', '.join(self.allowed)} "
            "(operators: PAPERWORKS_LLM_ALLOWED_MODELS)"
        )


def _configured() -> list[str]:
    s = get_settings()
    return [m.strip() for m in s.llm_allowed_models.split(",") if m.strip()]


def allowed_models() -> list[str]:
    """The models a request may name (sorted, de-duplicated)."""
    from core.llm.local_models import LOCAL_MODELS

    s = get_settings()
    names = _configured() or [f"local/{n}" for n in LOCAL_MODELS]
    names.append(s.llm_model)
    if s.defame.vlm_model:
        names.append(s.defame.vlm_model)
    return sorted(set(names))


def _inside_stores(path: str) -> bool:
    s = get_settings()
    p = Path(path)
    if not p.is_absolute():
        return False
    resolved = p.resolve()
    roots = [Path(r).resolve() for r in (s.home, s.cache_dir, s.artifact_dir) if r is not None]
    return any(resolved == r or resolved.is_relative_to(r) for r in roots)


def is_allowed(model: str) -> bool:
    if model.startswith(IN_PROCESS_PREFIX) or model in allowed_models():
        return True
    return model.startswith("local/") and _inside_stores(model.split("/", 1)[1])


def check_model(model: str, field: str | None = None) -> str:
    """``model`` itself, or :class:`ModelNotAllowed`."""
    if not is_allowed(model):
        raise ModelNotAllowed(model, field)
    return model


def gets_credentials(model: str) -> bool:
    """Whether the server's ``llm_api_key``/``llm_api_base`` may be sent with a call to ``model``."""
    if model.startswith(("local/", IN_PROCESS_PREFIX)):
        return False
    return model == get_settings().llm_model or model in _configured()


def check_params(params: dict[str, Any], schema: dict[str, Any] | None = None) -> None:
    """Raise :class:`ModelNotAllowed` for any LLM model named in a job's params (nested dicts included).

    A top-level field whose schema is an ``enum`` (``rf.edit``'s ``model``: which trained RF net) is not
    an LLM and is skipped.
    """
    props = (schema or {}).get("properties", {})

    def walk(obj: Any, path: str, top: bool) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                here = f"{path}.{k}" if path else str(k)
                if k in MODEL_KEYS and isinstance(v, str):
                    if top and "enum" in props.get(k, {}):
                        continue
                    check_model(v, here)
                else:
                    walk(v, here, False)
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                walk(v, f"{path}[{i}]", False)

    walk(params, "", True)
