"""What the generate and judge stages read, as one record each, written by the check stage for the
plan's cells to depend on instead of on the conf files:

- a model's record for a suite (`layout.model_record`): its generate config as `stages/generate.py`
  composes it (the model's in it, the cell left out, interpolations as written) and each file its
  provider reads to answer that suite (a replay's recordings), with its MD5;
- a judge's record (`layout.judge_record`): its config as `stages/judge.py` composes it.

A value that changes reruns the stages that read it; a comment, a judge outside the plan, a model's
neighbour or a recording of another suite does not; and a stage's dvc.lock entry names one file
instead of every value of every conf file."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from omegaconf import OmegaConf

from olympiad_eval.core.code import listing
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import InputError, atomic_dir

GENERATE, JUDGE = "generate", "judge"  # the primary configs (conf/<name>.yaml) composed


def compose_judges(names: list[str]) -> dict:
    """Each judge's config as `stages/judge.py` composes it, by name: within a Hydra app (a stage's
    main) or `hydra.initialize_config_dir`."""
    from hydra import compose

    return {name: compose(config_name=JUDGE, overrides=[f"judge={name}"]) for name in names}


def _config(cfg) -> dict:
    """A stage's config as composed, without the cell it is run for (its names are the stage's own)."""
    own = OmegaConf.to_container(cfg, resolve=False)
    own.pop("cell", None)
    return own


def _dump(data: dict) -> str:
    return yaml.safe_dump(data, sort_keys=True, allow_unicode=True, width=1000)


def model_record(cfg, inputs: list[Path], root: Path) -> str:
    """A model's record for one suite: `cfg` its generate config as composed, `inputs` the files its
    provider reads for the suite (`Provider.inputs`; one that is missing is named so, and its stage
    then says why)."""
    present = [path for path in inputs if (root / path).is_file()]
    lines = listing([str(path) for path in present], root).splitlines() if present else []
    lines += [f"missing  {path}" for path in inputs if path not in present]
    return _dump({"config": _config(cfg), "inputs": lines})


def judge_record(cfg) -> str:
    """A judge's record: its config as composed."""
    return _dump({"config": _config(cfg)})


def provider_inputs(model_cfg, suite: str) -> list[Path]:
    from olympiad_eval.llm.providers import provider_class

    return provider_class(model_cfg.get("provider"), "model").inputs(model_cfg, suite)


def write_records(plan: dict, conf: Path, layout: Layout, root: Path = Path(".")) -> None:
    """The record of each model of the plan for each of its suites, and of each of its judges, into
    `layout.model_record()`'s and `layout.judge_record()`'s folders (each written whole)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(Path(conf).resolve()), version_base=None):
        judges = {name: judge_record(cfg) for name, cfg in compose_judges(plan["judges"]).items()}
        models = {}
        for model in plan["models"]:
            cfg = compose(config_name=GENERATE, overrides=[f"model={model}"])
            models |= {
                (model, suite): model_record(cfg, provider_inputs(cfg.model, suite), root) for suite in plan["suites"]
            }
    _write_folder(layout.judge_record(), {layout.judge_record(name).name: text for name, text in judges.items()})
    _write_folder(
        layout.model_record(),
        {
            layout.model_record(suite, model).relative_to(layout.model_record()): text
            for (model, suite), text in models.items()
        },
    )


def _write_folder(folder: Path, files: dict) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(folder) as staging:
        os.chmod(staging, 0o755)
        for name, text in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            path.write_text(text, encoding="utf-8")


def recorded_model(record: Path) -> dict:
    """The settings of a model as its record for a suite holds them (`model_record`), resolved."""
    if not record.is_file():
        raise InputError(f"{record}: no record of the model for the suite: the check stage writes it (dvc repro check)")
    return OmegaConf.to_container(
        OmegaConf.create(yaml.safe_load(record.read_text(encoding="utf-8"))["config"]["model"]), resolve=True
    )


def check_recorded(tracked: Path, text: str, what: str) -> str | None:
    """Why the config composed here is not the one DVC tracks for the stage (an override on the
    command line, or a config edited since `dvc repro check`), or None where it is, or where there is
    no record (a stage run by hand or in a sweep before the check stage ever ran)."""
    if not tracked.is_file() or tracked.read_text(encoding="utf-8") == text:
        return None
    return (
        f"{what}: the config composed here differs from {tracked}, which DVC tracks for this stage (written by "
        "the check stage: `dvc repro check`): an override on the command line, or a config edited since; DVC "
        "does not know what made these outputs"
    )
