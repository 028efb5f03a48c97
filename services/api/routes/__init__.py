"""Route modules of the API, discovered by ``services.api.main.create_app``.

Naming rule: a module here is either generic (``jobs``, ``methods``, ``health``, ``artifacts``,
``agent_protocol`` for every graph of ``langgraph.json``) or named exactly like the package it serves — ``methods/<name>`` or ``agents/<name>``
(``lms3.py``, ``continual.py``, ``rf_solver.py``, ``defame.py``, ``pae.py``) — so one method
has one name across its package, CLI commands, API routes, UI page and tests. URL prefixes are
part of the public API and may differ (``pae.py`` serves ``/v1/webagent/...``, ``rf_solver.py``
``/v1/rf/...``). ``tests/services/test_plugin_names.py`` checks the rule.

A module exports ``router`` (mounted under ``/v1`` behind the API key unless it sets
``PUBLIC = True``). Routes that take a job's fields derive them from the method's params model
(a typed JSON body, or :func:`services.api.forms.form_model` for multipart uploads).
"""
