"""Class-incremental learning harness shared by DPCR, LADA and SEFE.

A method implements :class:`ContinualLearner` (``learn_task``, ``predict``, optional ``heads`` and
``diagnostics``) and registers a factory with :func:`register_learner`; :func:`run_experiment`
runs it over seeds on a seeded class-order stream and returns accuracy matrices per head, from
which ``metrics`` computes A_f, Ā, forgetting and old/new accuracy, and ``report`` builds the
platform report. See ``learner.py`` for the full contract.
"""

from methods.continual.data import Task, TaskStream
from methods.continual.harness import run_experiment
from methods.continual.learner import ContinualLearner, register_learner

__all__ = ["ContinualLearner", "Task", "TaskStream", "register_learner", "run_experiment"]
