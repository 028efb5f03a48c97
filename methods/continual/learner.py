"""The method interface of the continual-learning harness, and its registry.

A continual method implements :class:`ContinualLearner`:

* ``learn_task(task, progress)`` learns one :class:`~methods.continual.data.Task`. It sees only
  that task's training data (exemplar-free protocol); anything it keeps about old classes is
  its own business (prototypes, Grams, GMMs, LoRA masks ...).
* ``predict(x, head)`` returns stream labels (``0..n_seen-1``) for a batch of inputs.
* ``heads`` names the predictors the learner exposes. A method that evaluates several arms on
  one training trajectory (DPCR: plain LwF head, ridge on uncalibrated statistics, TSSP-only,
  DPCR, oracle) lists them all; the harness builds one accuracy matrix per head. A method
  with one predictor keeps the default ``("default",)``.
* ``diagnostics()`` may return per-task scalars (shift errors, chosen hyper-parameters); the
  harness stores them beside the accuracies.

A method makes itself runnable by the harness, the ``continual.run`` job, the CLI and the UI by
registering a factory::

    class Options(BaseModel):
        lr: float = Field(0.1, gt=0)

    @register_learner("mymethod", options=Options, heads=("default",), description="...",
                      presets={"quick": {"lr": 0.5}})
    def make(options: Options, *, seed: int, stream: TaskStream) -> ContinualLearner: ...

Registration happens in the method's ``jobs.py`` (imported by ``core.jobs.load_all``). The learners live in
the one registry of :mod:`core.jobs` (components of kind ``"continual.learner"``), beside the jobs that run
them: discovered with them, restored with them by ``core.jobs.registry_snapshot()``.

A torch method that can run on an accelerator takes ``device`` (a ``torch.device``) and ``amp``
(``"off"``/``"bf16"``) as keyword arguments of its factory; the harness passes them when a run asks
for a device. A factory without them (NumPy learners) runs on the CPU only.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from core.jobs import JobContext, UnknownMethod
from core.jobs.registry import get_component, list_components, register_component
from methods.continual.data import Task, TaskStream

log = logging.getLogger(__name__)


class ContinualLearner(ABC):
    """A class-incremental learner driven by the harness, one task at a time."""

    heads: tuple[str, ...] = ("default",)

    @abstractmethod
    def learn_task(self, task: Task, progress: JobContext) -> None:
        """Learn ``task`` (its training split only); report progress 0..1 on ``progress``."""

    @abstractmethod
    def predict(self, x: np.ndarray, head: str | None = None) -> np.ndarray:
        """Stream labels (int64, shape (N,)) predicted by ``head`` (default: ``heads[0]``)."""

    def diagnostics(self) -> dict[str, float]:
        """Scalars describing the last learned task (optional)."""
        return {}


Factory = Callable[..., ContinualLearner]


@dataclass(frozen=True)
class LearnerSpec:
    """A registered continual method."""

    name: str
    factory: Factory
    options_model: type[BaseModel]
    heads: tuple[str, ...]
    description: str = ""
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    protocol: str = "class_incremental"  # or "xtail" (methods.continual.xtail; run by lada.xtail)

    def validate_options(self, options: dict[str, Any] | None) -> BaseModel:
        try:
            return self.options_model.model_validate(options or {})
        except ValidationError as exc:
            msgs = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg']}" for e in exc.errors(include_url=False)
            )
            raise ValueError(f"invalid options for {self.name}: {msgs}") from None

    @property
    def takes_device(self) -> bool:
        """Whether the factory accepts ``device`` and ``amp`` (it can run on an accelerator)."""
        names = inspect.signature(self.factory).parameters
        return "device" in names and "amp" in names

    def build(
        self,
        options: dict[str, Any] | BaseModel | None,
        *,
        seed: int,
        stream: TaskStream,
        device: Any = None,
        amp: str = "off",
    ) -> ContinualLearner:
        """A learner for ``stream``; ``device``/``amp`` go to a factory that takes them.

        ``device=None`` leaves the factory's default. A factory without a device refuses any
        device but the CPU and any ``amp`` but ``"off"``.
        """
        opts = options if isinstance(options, BaseModel) else self.validate_options(options)
        kwargs: dict[str, Any] = {}
        if self.takes_device:
            if device is not None:
                kwargs["device"] = device
            if amp != "off":
                kwargs["amp"] = amp
        elif (device is not None and str(device) != "cpu") or amp != "off":
            raise ValueError(
                f"continual method {self.name!r} runs on the CPU only (its factory takes no device); "
                f"got device={str(device)!r}, amp={amp!r}"
            )
        learner = self.factory(opts, seed=seed, stream=stream, **kwargs)
        if not isinstance(learner, ContinualLearner):
            raise TypeError(f"{self.name} factory returned {type(learner).__name__}")
        return learner


KIND = "continual.learner"


def register_learner(
    name: str,
    *,
    options: type[BaseModel],
    heads: tuple[str, ...] = ("default",),
    description: str = "",
    presets: dict[str, dict[str, Any]] | None = None,
    protocol: str = "class_incremental",
) -> Callable[[Factory], Factory]:
    """Decorator registering ``factory(options, *, seed, stream) -> ContinualLearner`` as ``name``.

    ``presets`` names option dicts a UI can offer (e.g. ``{"quick": {...}, "spec": {}}``); each is
    validated against ``options`` at registration. ``protocol`` says which harness runs it:
    ``"class_incremental"`` (``continual.run``) or ``"xtail"`` (the X-TAIL stream, job ``lada.xtail``).
    """
    for pname, values in (presets or {}).items():
        try:
            options.model_validate(values)
        except ValidationError as exc:
            raise ValueError(f"preset {pname!r} of {name} is invalid: {exc}") from None

    def deco(fn: Factory) -> Factory:
        spec = LearnerSpec(
            name=name,
            factory=fn,
            options_model=options,
            heads=tuple(heads),
            description=description or (fn.__doc__ or "").strip().split("\n")[0],
            presets=dict(presets or {}),
            protocol=protocol,
        )
        try:
            register_component(
                KIND, name, spec, same=lambda old, new: old.factory.__qualname__ == new.factory.__qualname__
            )
        except ValueError:
            raise ValueError(f"continual method {name!r} registered twice") from None
        return fn

    return deco


def get_learner(name: str) -> LearnerSpec:
    """The registered method ``name`` (every ``jobs.py`` is imported first)."""
    try:
        return get_component(KIND, name)
    except UnknownMethod:
        known = ", ".join(list_components(KIND))
        raise KeyError(f"unknown continual method {name!r}; known: {known}") from None


def list_learners(protocol: str | None = None) -> list[LearnerSpec]:
    """Registered learners, all or those of one ``protocol``."""
    return [s for s in list_components(KIND).values() if protocol is None or s.protocol == protocol]
