"""PROPOSE: fill the run's task pool (train tasks, SFT demos, held-out tests), idempotently.

Splits:
* ``train``: template tasks (and LLM-proposed ones when asked) on the training sites;
* ``demo``: other template tasks the scripted oracle demonstrates for the SFT start;
* ``test``: unseen tasks of the training sites: only of whole templates held out from
  ``train`` and ``demo`` (``holdout_templates`` per site; with 0, other tasks of the same
  templates, i.e. only new entities);
* ``heldout_site``: template tasks of sites never practised on (unseen websites);
* ``webarena``: N evenly spaced of the 89 WebArena map tasks, on the local MiniMap.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from langchain_core.runnables import RunnableConfig

from agents.pae import store
from agents.pae.nodes.common import load_config, progress_of
from agents.pae.proposer import LLMProposer, TemplateProposer, heldout_templates, site_templates
from agents.pae.sites import build_sites
from agents.pae.state import PaeState

log = logging.getLogger(__name__)


def propose(state: PaeState, config: RunnableConfig) -> dict[str, Any]:
    run_id = state["run_id"]
    cfg = load_config(run_id)
    progress = progress_of(config)
    if store.load_tasks(run_id=run_id):
        log.info("run %s already has tasks: keeping them", run_id)
        return {"iteration": state.get("iteration", 0)}
    sites = build_sites(cfg.seed)
    templ = TemplateProposer()
    train, demo, test = [], [], []
    held_out = {name: heldout_templates(sites[name], cfg.holdout_templates, cfg.seed) for name in cfg.train_sites}
    practised = {name: [t for t in site_templates(sites[name]) if t not in held_out[name]] for name in cfg.train_sites}
    for name in cfg.train_sites:
        rng = random.Random(f"train:{cfg.seed}:{name}")
        train += templ.propose(sites[name], cfg.tasks_per_site, rng, templates=practised[name])
    used = {t.id for t in train}
    for name in cfg.train_sites:
        rng = random.Random(f"demo:{cfg.seed}:{name}")
        d = templ.propose(sites[name], cfg.sft_demos_per_site, rng, used, templates=practised[name])
        demo += d
        used |= {t.id for t in d}
        rng = random.Random(f"test:{cfg.seed}:{name}")
        test += templ.propose(sites[name], cfg.test_tasks_per_site, rng, used, templates=held_out[name] or None)
        used |= {t.id for t in test}
    held = []
    for name in cfg.heldout_sites:
        held += templ.propose(sites[name], cfg.test_tasks_per_site, random.Random(f"test:{cfg.seed}:{name}"))
    counts = {"template": len(train)}
    if cfg.llm_tasks_per_site > 0:
        llm = LLMProposer(
            model=cfg.proposer_model, max_tokens=cfg.proposer_max_tokens, constrained=cfg.proposer_constrained
        )
        n_llm = 0
        for i, name in enumerate(cfg.train_sites):
            progress(i / len(cfg.train_sites), f"LLM proposer on {name}")
            got = llm.propose(sites[name], cfg.llm_tasks_per_site, seen=[t.question for t in train], seed=cfg.seed + i)
            train += got
            n_llm += len(got)
        counts["llm"] = n_llm
        counts["llm_asked"] = cfg.llm_tasks_per_site * len(cfg.train_sites)
    store.add_tasks(run_id=run_id, tasks=train, split="train")
    store.add_tasks(run_id=run_id, tasks=demo, split="demo")
    store.add_tasks(run_id=run_id, tasks=test, split="test")
    store.add_tasks(run_id=run_id, tasks=held, split="heldout_site")
    if cfg.webarena_tasks:
        from agents.pae.heldout import default_path, load_map_tasks
        from core.config import get_settings

        path = default_path(get_settings().data_dir)
        if path.exists():
            every = load_map_tasks(path)
            picks = sorted({round(i * len(every) / cfg.webarena_tasks) for i in range(cfg.webarena_tasks)})
            store.add_tasks(run_id=run_id, tasks=[every[i] for i in picks], split="webarena")  # evenly spaced
        else:
            log.warning("WebArena map tasks not found at %s: the webarena split is empty", path)
    record = {
        "kind": "propose",
        "iteration": 0,
        "proposed": counts,
        "train": len(train),
        "demo": len(demo),
        "test": len(test),
        "heldout_site": len(held),
        "heldout_templates": held_out,
    }
    store.update_run(run_id=run_id, metrics={"proposal": record})
    return {"iteration": 0, "history": [record]}
