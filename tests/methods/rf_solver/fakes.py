"""Stand-ins for the device tests (tests/test_devices.py): the jobs' digits model replaced by the tiny one."""

from __future__ import annotations


def tiny_digits_model(monkeypatch, tmp_path) -> None:
    """``rf.edit``/``rf.reconstruct`` on digits use the ``tiny`` preset (trained once on the CPU, then cached).

    The jobs' own work — inversion, V recording and injection, sampling — then runs on the device
    under test in seconds; training on a device is tested in tests/methods/rf_solver/test_train.py.
    """
    from methods.rf_solver import config
    from methods.rf_solver.checkpoints import get_model

    get_model("tiny")  # on the CPU, once per cache
    monkeypatch.setitem(config.PRESETS, "digits", config.PRESETS["tiny"])
