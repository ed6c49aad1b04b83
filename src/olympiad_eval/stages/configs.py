"""The configs an evaluate stage composes, as one record per model: its own config (the model's in
it) and each of the plan's judges' (each composed as conf/judge.yaml composes it), interpolations as
written. The check stage writes the record of each model of the plan (`layout.model_config`), and
that model's evaluate stages depend on it instead of on the conf files: a value that changes reruns
them, a comment, a judge outside the plan or a model's neighbour does not, and their dvc.lock entry
names one file instead of every value of every file."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from omegaconf import OmegaConf

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import atomic_dir

EVALUATE, JUDGE = "evaluate", "judge"  # the primary configs (conf/<name>.yaml) composed


def compose_judges(names: list[str]) -> dict:
    """Each judge's config as `stages/judge.py` composes it, by name: within a Hydra app (the evaluate
    stage's main) or `hydra.initialize_config_dir`."""
    from hydra import compose

    return {name: compose(config_name=JUDGE, overrides=[f"judge={name}"]).judge for name in names}


def record(cfg, judges: dict) -> str:
    """A model's record: its evaluate config without the cell it is run for, and its judges'."""
    own = OmegaConf.to_container(cfg, resolve=False)
    own.pop("cell", None)
    data = {
        EVALUATE: own,
        "judges": {name: OmegaConf.to_container(judge, resolve=False) for name, judge in judges.items()},
    }
    return yaml.safe_dump(data, sort_keys=True, allow_unicode=True, width=1000)


def write_records(plan: dict, conf: Path, layout: Layout) -> Path:
    """The record of each model of the plan, into `layout.model_config()`'s folder (written whole)."""
    from hydra import compose, initialize_config_dir

    folder = layout.model_config()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with initialize_config_dir(config_dir=str(Path(conf).resolve()), version_base=None):
        judges = compose_judges(plan["judges"])
        records = {
            model: record(compose(config_name=EVALUATE, overrides=[f"model={model}"]), judges)
            for model in plan["models"]
        }
    with atomic_dir(folder) as staging:
        os.chmod(staging, 0o755)
        for model, text in records.items():
            (staging / layout.model_config(model).name).write_text(text, encoding="utf-8")
    return folder
