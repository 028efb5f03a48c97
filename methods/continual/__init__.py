"""Class-incremental learning harness shared by DPCR, LADA and SEFE.

A method implements :class:`ContinualLearner` (``learn_task``, ``predict``, optional ``heads`` and
``diagnostics``) and registers a factory with :func:`register_learner`; :func:`run_experiment`
runs it over seeds on a seeded class-order stream and returns accuracy matrices per head, from
which ``metrics`` computes A_f, Ā, forgetting and old/new accuracy, and ``report`` builds the
platform report. See ``learner.py`` for the full contract.
"""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Task": "methods.continual.data",
        "TaskStream": "methods.continual.data",
        "run_experiment": "methods.continual.harness",
        "ContinualLearner": "methods.continual.learner",
        "register_learner": "methods.continual.learner",
    },
)
