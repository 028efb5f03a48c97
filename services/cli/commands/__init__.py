"""Method- and agent-specific command groups of ``paperworks``, discovered at start-up.

Naming rule: a module here is named exactly like the package it serves — ``methods/<name>``
or ``agents/<name>`` (``lms3.py``, ``continual.py``, ``rf_solver.py``, ``defame.py``, ``pae.py``)
— so the code of one method is found under one name everywhere (its package, its CLI
commands, its API routes, its UI page, its tests). The command *group* a module registers
keeps the short name users type (``rf_solver.py`` registers ``paperworks rf ...``). A command
that serves every method at once is generic and named for what it does (``models.py``, ``mcp.py``).
``tests/services/test_plugin_names.py`` checks the rule.

A module exports ``register(app: typer.Typer)``. Commands that run a job use
:func:`services.cli.jobrun.run_job` (in process or ``--remote``, progress bar, report, exit
codes) and :func:`services.cli.jobrun.parse_kv` for ``key=value`` options.
"""
