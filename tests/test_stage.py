"""What the stage scripts share, seen from the command line: the way DVC and launchers run them."""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest
import yaml
from omegaconf import OmegaConf

from olympiad_eval.core.config import user_cache
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import check_family, check_release_folder, family_of_suite, read_plan
from olympiad_eval.core.records import Generation, InputError, read_jsonl
from olympiad_eval.stages.generate import check_model
from olympiad_eval.stages.judge import check_judge
from olympiad_eval.stages.runner import clear_errors
from tests.support import REQUEST_CACHE_VARIABLE, ROOT, compose_stage


def test_a_submitit_sweep_writes_what_the_dvc_cells_write(render_suite, tmp_path):
    """submitit (the SLURM launcher, here its local flavour) pickles the stage and runs it in a new
    process: everything the stage imports must come from the installed package."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="pip install hydra-submitit-launcher")
    outputs = render_suite("sample_hipho", "sample_hipho")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [
            sys.executable,
            "stages/generate.py",
            "-m",
            "hydra/launcher=submitit_local",
            "model=reference,demo",
            "cell.suite=sample_hipho",
            f"paths.outputs={outputs}",
            f"paths.request_cache={tmp_path / 'cache.sqlite'}",
            f"hydra.sweep.dir={tmp_path / 'multirun'}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    for model in ("reference", "demo"):
        generations = read_jsonl(Layout(outputs).generations("hipho", "sample_hipho", model), Generation)
        assert len(generations) == 5 and all(g.error is None and g.response for g in generations)


# ---------------------------------------------------------------- the request cache


def test_the_request_cache_is_in_the_user_s_cache_folder_unless_the_variable_moves_it(monkeypatch, tmp_path):
    """Not relative to the workspace: clones, worktrees and `dvc exp run --queue` copies share it
    (tests/test_pipeline_e2e.py runs a queued experiment over cached cells)."""
    monkeypatch.delenv(REQUEST_CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    cell = ["model=reference", "cell.suite=sample_hipho"]
    default = compose_stage("generate", cell).paths.request_cache
    assert default == user_cache("requests.sqlite") and os.path.isabs(default)
    if sys.platform == "linux":
        assert default == str(tmp_path / "cache-home" / "olympiad-eval" / "requests.sqlite")
    monkeypatch.setenv(REQUEST_CACHE_VARIABLE, "/mnt/shared/requests")
    assert compose_stage("generate", cell).paths.request_cache == "/mnt/shared/requests"


# ---------------------------------------------------------------- the plan


def test_the_plan_joins_its_pipelines(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(
        "models: [reference, demo]\njudges: [rule]\npipelines:\n"
        "  hipho: {benchmarks: {h: data/h}, suites: {h: h}}\n"
        "  mathvision: {benchmarks: {}, suites: {}}\n"
        "  physelite: {benchmarks: {p: data/p, q: conf/benchmark/q.yaml}, suites: {p_en: p, p_zh: p, q_en: q}}\n",
        encoding="utf-8",
    )
    plan = read_plan(path)
    assert plan["benchmarks"] == ["h", "p", "q"]
    assert plan["releases"] == {"h": "data/h", "p": "data/p", "q": "conf/benchmark/q.yaml"}
    assert plan["suites"] == {"h": "h", "p_en": "p", "p_zh": "p", "q_en": "q"}
    assert plan["family"] == {"h": "hipho", "p": "physelite", "q": "physelite"}
    assert plan["families"] == ["hipho", "mathvision", "physelite"]  # an empty one too: it keeps its pipeline
    assert plan["models"] == ["reference", "demo"] and plan["judges"] == ["rule"]


PIPELINE = {"benchmarks": {"pe": "data/pe"}, "suites": {"pe_en": "pe"}}


@pytest.mark.parametrize(
    "plan,message",
    [
        ({"models": ["m"], "judges": ["rule"]}, "pipelines must map each benchmark family"),
        (
            {"models": ["m"], "judges": ["rule"], "pipelines": {"physelite": {"benchmarks": {"pe": "data/pe"}}}},
            "pipelines.physelite must have a mapping `benchmarks` (benchmark: the folder its release is read from, "
            "e.g. sample_hipho: data/sample/hipho) and a mapping `suites`",
        ),
        # the plan's layout before each benchmark named its release's folder
        (
            {"models": ["m"], "judges": ["rule"], "pipelines": {"physelite": {"benchmarks": ["pe"], "suites": {}}}},
            "pipelines.physelite must have a mapping `benchmarks` (benchmark: the folder its release is read from",
        ),
        (
            {
                "models": ["m"],
                "judges": ["rule"],
                "pipelines": {"physelite": {"benchmarks": {"pe": None}, "suites": {}}},
            },
            "pipelines.physelite.benchmarks.pe must be the folder its release is read from (the source.path of "
            "conf/benchmark/pe.yaml, or that file for a release on the Hub), got None",
        ),
        (
            {
                "models": ["m"],
                "judges": ["rule"],
                "pipelines": {"physelite": {"benchmarks": {}, "suites": {"pe_en": "pe"}}},
            },
            "pipelines.physelite.suites.pe_en: benchmark 'pe' is not in pipelines.physelite.benchmarks",
        ),
        (
            {"models": ["m"], "judges": ["rule"], "pipelines": {"physelite": PIPELINE, "hipho": PIPELINE}},
            "pipelines.hipho: benchmark 'pe' is also in pipelines.physelite",
        ),
        # DVC fans a name given twice out into one cell, silently; the tables would count it twice
        (
            {"models": ["m", "gpt-4o", "m"], "judges": ["rule"], "pipelines": {}},
            "models: 'm' named twice; each name once",
        ),
        (
            {"models": ["m"], "judges": ["rule", "gpt-4o", "gpt-4o", "rule"], "pipelines": {}},
            "judges: 'gpt-4o', 'rule' named twice; each name once",
        ),
        (
            {"models": "m", "judges": ["rule"], "pipelines": {}},
            "models must be a list of names (a list even of one: [m]), got 'm'",
        ),
        (
            {"models": ["m"], "judges": "rule", "pipelines": {}},
            "judges must be a list of names (a list even of one: [rule])",
        ),
    ],
)
def test_a_malformed_plan_is_named_with_its_key(tmp_path, plan, message):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_plan(path)
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value)


HOSTILE_NAMES = ["../../../../elsewhere/x", "a/b", "..", ".", "a\0b", "-rf", ".hidden", "x.", "", "a b", "ü"]


def plan_naming(key: str, name: str) -> tuple[dict, str]:
    """A plan whose `key` (models, judges, family, benchmark or suite) is `name`, and the kind named."""
    benchmarks = {name if key == "benchmark" else "pe": "data/pe"}
    suites = {name if key == "suite" else "pe_en": name if key == "benchmark" else "pe"}
    return {
        "models": [name if key == "models" else "m"],
        "judges": [name if key == "judges" else "rule"],
        "pipelines": {name if key == "family" else "physelite": {"benchmarks": benchmarks, "suites": suites}},
    }, {"models": "model", "judges": "judge"}.get(key, key)


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=repr)
@pytest.mark.parametrize("key", ["models", "judges", "family", "benchmark", "suite"])
def test_a_plan_naming_something_with_no_plain_file_name_is_refused(tmp_path, key, name):
    """Each name becomes a path of the outputs (`model=../../../../elsewhere/x` would write there)."""
    plan, kind = plan_naming(key, name)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_plan(path)
    said = str(error.value)
    assert said.startswith(f"{path}: ") and f"{kind} {name!r} is not a name that can become a path" in said, said
    assert "\n" not in said


# ---------------------------------------------------------------- config checks

GPT = {"provider": "openai", "base_url": "https://api.example.com/v1", "model": "m", "api_key_env": None}


@pytest.mark.parametrize(
    "cfg,message",
    [
        ({"provider": "reference", "generation": "greedy"}, "generation must be a mapping of request settings"),
        (
            {**GPT, "generation": [0.7, 100]},
            "generation must be a mapping of request settings (temperature: 0, max_tokens: 4096, ...), got [0.7, 100]",
        ),
        ({**GPT, "generation": {"seed": 1.5}}, "generation: seed must be an integer, got 1.5"),
        ({**GPT, "prices": 2.5}, "prices must map input and output to USD per million tokens"),
        (
            {**GPT, "prices": [2.5, 10.0]},
            "prices must map input and output to USD per million tokens (input: 2.5, output: 10.0), got [2.5, 10.0]",
        ),
        ({**GPT, "prices": {"input": "2.5", "output": 10}}, "prices: input must be a number >= 0, got '2.5'"),
        ({**GPT, "prices": {"input": 2.5, "output": None}}, "prices: output must be a number >= 0, got None"),
        ({**GPT, "prices": {"input": float("nan")}}, "prices: input must be a number >= 0, got nan"),
        ({**GPT, "prices": {"input": -1}}, "prices: input must be a number >= 0, got -1"),
        ({**GPT, "prices": {"inputs": 1}}, "prices: 'inputs' is not one of input, output"),
        ({**GPT, "assumed_output_tokens": "4k"}, "assumed_output_tokens must be an integer >= 0, got '4k'"),
        ({**GPT, "concurrency": 0}, "concurrency must be an integer >= 1, got 0"),
        ({**GPT, "concurrency": 2.0}, "concurrency must be an integer >= 1, got 2.0"),
        ({**GPT, "concurrency": True}, "concurrency must be an integer >= 1, got True"),
        ({"provider": "replay", "samples": -2}, "samples must be an integer >= 1, got -2"),
        ({"provider": "reference", "samples": "8"}, "samples must be an integer >= 1, got '8'"),
        # each provider checks its own settings; an unknown one is named with the known ones
        (
            {"provider": "opena1", "base_url": "https://api.example.com/v1"},
            "provider must be one of openai, reference, replay, scripted, got 'opena1'",
        ),
        ({"samples": 1}, "provider must be one of openai, reference, replay, scripted, got None"),
        ({"provider": "replay"}, "path (the recorded responses, `{suite}` for the suite's name) must be set, got None"),
    ],
)
def test_a_model_config_of_the_wrong_type_is_named_with_its_key(cfg, message):
    with pytest.raises(InputError) as error:
        check_model(OmegaConf.create(cfg), "m")
    assert str(error.value).startswith("model 'm' (conf/model/m.yaml or an override): ")
    assert message in str(error.value)


@pytest.mark.parametrize(
    "endpoint,message",
    [
        (
            {"base_url": "localhost:8000", "model": "m"},
            "judges.j: base_url must be an http(s) URL, got 'localhost:8000'",
        ),
        ({**GPT, "concurrency": 0}, "judges.j: concurrency must be an integer >= 1, got 0"),
        (
            {"provider": "reference"},
            "judges.j: provider 'reference' answers only a suite's prompts; a judge needs one "
            "that answers any request (openai, scripted)",
        ),
        (
            {"provider": "anthropic"},
            "judges.j: provider must be one of openai, reference, replay, scripted, got 'anthropic'",
        ),
        # judge endpoints take prices like models
        ({**GPT, "prices": {"input": "2.5"}}, "judges.j: prices: input must be a number >= 0, got '2.5'"),
        ({**GPT, "assumed_output_tokens": -1}, "judges.j: assumed_output_tokens must be an integer >= 0, got -1"),
    ],
)
def test_each_judge_endpoint_is_checked_by_its_provider_openai_unless_named(endpoint, message):
    cfg = OmegaConf.create({"kind": "llm", "judges": {"j": endpoint}})
    with pytest.raises(InputError) as error:
        check_judge(cfg, "x")
    assert str(error.value) == f"judge 'x' (conf/judge/x.yaml or an override): {message}"


def test_the_shipped_model_configs_pass_their_checks():
    for path in sorted((ROOT / "conf" / "model").glob("*.yaml")):
        cfg = OmegaConf.load(path)
        if "api_key_env" in cfg:  # an endpoint's: no key needed here (an offline provider has no such setting)
            cfg.api_key_env = None
        check_model(cfg, path.stem)


def composed_model(change: dict):
    """conf/model/gpt-4o.yaml as the generate stage composes it, `change` merged in (as if written in
    the file: a key the file adds is no override of one it has)."""
    model = compose_stage("generate", ["model=gpt-4o", "cell.suite=sample_hipho"]).model
    OmegaConf.set_struct(model, False)
    return OmegaConf.merge(model, change)


def composed_judge(change: dict):
    """conf/judge/gpt-4o.yaml as the judge stage composes it, `change` merged into its endpoint."""
    cfg = compose_stage("judge", ["judge=gpt-4o", "cell.suite=sample_hipho", "cell.model=m"]).judge
    OmegaConf.set_struct(cfg, False)
    return OmegaConf.merge(cfg, {"judges": {"gpt-4o": change}})


SECRET = "sk-proj-" + "Zq8vR2" * 8
INLINE_SECRETS = [
    ({"api_key": SECRET}, "api_key"),
    ({"apiKey": "abc123"}, "apiKey"),
    (
        {"generation": {"extra_headers": {"Authorization": f"Bearer {SECRET}"}}},
        "generation.extra_headers.Authorization",
    ),
    ({"generation": {"extra_headers": {"X-Api-Key": SECRET}}}, "generation.extra_headers.X-Api-Key"),
    ({"generation": {"extra_body": {"auth": {"token": SECRET}}}}, "generation.extra_body.auth"),
    ({"generation": {"extra_body": {"user_ref": SECRET}}}, "generation.extra_body.user_ref"),
]


@pytest.mark.parametrize("change,field", INLINE_SECRETS)
def test_a_secret_written_in_a_model_config_is_refused_naming_the_field_never_the_value(change, field):
    with pytest.raises(InputError) as error:
        check_model(composed_model(change), "gpt-4o")
    said = str(error.value)
    assert said.startswith(f"model 'gpt-4o' (conf/model/gpt-4o.yaml or an override): {field}"), said
    assert "api_key_env" in said and SECRET not in said and "abc123" not in said


@pytest.mark.parametrize(
    "change,field",
    [
        ({"api_key": SECRET}, "api_key"),
        ({"token": SECRET}, "token"),
        ({"prices": {"input": 1, "secret": SECRET}}, "prices.secret"),
    ],
)
def test_a_secret_written_in_a_judge_endpoint_is_refused_naming_the_field_never_the_value(change, field):
    with pytest.raises(InputError) as error:
        check_judge(composed_judge(change), "gpt-4o")
    said = str(error.value)
    assert said.startswith(f"judge 'gpt-4o' (conf/judge/gpt-4o.yaml or an override): judges.gpt-4o: {field}"), said
    assert "api_key_env" in said and SECRET not in said


@pytest.mark.parametrize(
    "pasted",
    [SECRET, "sk-ant-api03-" + "x1" * 20, "hf_" + "a1B2" * 9, "Bearer abc9", "my key", "0PENAI_KEY", "OPENAI-API-KEY"],
)
def test_a_value_of_api_key_env_that_is_no_variable_name_is_refused_without_being_shown(pasted):
    with pytest.raises(InputError) as error:
        check_model(composed_model({"api_key_env": pasted}), "gpt-4o")
    said = str(error.value)
    assert said.startswith("model 'gpt-4o' (conf/model/gpt-4o.yaml or an override): api_key_env "), said
    assert "MY_ENDPOINT_KEY" in said and pasted not in said


def test_an_unset_variable_named_by_api_key_env_is_named(monkeypatch):
    monkeypatch.delenv("OE_UNSET_KEY", raising=False)
    with pytest.raises(InputError, match="the environment variable OE_UNSET_KEY, which is not set"):
        check_model(composed_model({"api_key_env": "OE_UNSET_KEY"}), "gpt-4o")


@pytest.mark.parametrize(
    "change,words",
    [
        ({"max_retry": 3}, "'max_retry' is not a setting of a model of provider 'openai'; did you mean 'max_retries'?"),
        ({"max_retires": 3}, "'max_retires' is not a setting of a model of provider 'openai'; did you mean"),
        # a request setting written beside `generation` instead of under it
        (
            {"temprature": 0},
            "'temprature' is not a setting of a model of provider 'openai'; did you mean 'generation.temperature'?",
        ),
        ({"timout": 60}, "did you mean 'timeout'?"),
        (  # a count of tokens, never taken for a secret
            {"generation": {"max_token": 100}},
            "generation.max_token is not a request setting of the chat API; did you mean 'max_tokens'?",
        ),
        (
            {"generation": {"max_tokes": 100}},
            "generation.max_tokes is not a request setting of the chat API; did you mean 'max_tokens'?",
        ),
        (
            {"generation": {"temprature": 0.2}},
            "generation.temprature is not a request setting of the chat API; did you mean 'temperature'?",
        ),
        ({"generation": {"top_k": 20}}, "a parameter that your endpoint adds goes under generation.extra_body"),
    ],
)
def test_a_misspelt_model_setting_is_refused_with_the_closest(change, words):
    with pytest.raises(InputError) as error:
        check_model(composed_model(change), "gpt-4o")
    assert words in str(error.value), str(error.value)


def test_a_misspelt_judge_setting_is_refused_with_the_closest():
    with pytest.raises(
        InputError, match="'max_retry' is not a setting of a judge endpoint .*did you mean 'max_retries'"
    ):
        check_judge(composed_judge({"max_retry": 3}), "gpt-4o")


def test_an_endpoint_s_own_parameters_pass_under_extra_body():
    extra = {"top_k": 20, "min_p": 0.05, "max_new_tokens": 7, "chat_template_kwargs": {"enable_thinking": False}}
    check_model(composed_model({"api_key_env": None, "generation": {"extra_body": extra}}), "gpt-4o")


@pytest.mark.parametrize(
    "text,line,key",
    [
        (
            "models: [m]\njudges: [rule]\npipelines:\n  physelite:\n    benchmarks: {pe: data/pe}\n"
            "    suites:\n      pe_en: pe\n"
            "      pe_en: pe\n",
            8,
            "pe_en",
        ),
        (
            "models: [m]\njudges: [rule]\npipelines:\n  physelite:\n    benchmarks:\n"
            "      pe: data/pe\n      pe: data/pe2\n"
            "    suites: {}\n",
            7,
            "pe",
        ),
        ("models: [m]\njudges: [rule]\npipelines: {}\nmodels: [n]\n", 4, "models"),
    ],
)
def test_a_key_given_twice_in_the_plan_is_refused(tmp_path, text, line, key):
    """PyYAML keeps the last of two equal keys; DVC refuses the file, and so does the plan's reader."""
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_plan(path)
    assert str(error.value) == f"{path}: line {line}: '{key}' is given twice in one mapping; each name once"


def test_a_benchmark_in_the_pipeline_of_another_kind_is_named(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"models": ["m"], "judges": ["rule"], "pipelines": {"hipho": PIPELINE}}))
    plan = read_plan(path)
    check_family(plan, "pe", "hipho", path)
    with pytest.raises(
        InputError,
        match=r"pipelines.hipho lists 'pe', a physelite benchmark \(conf/benchmark/pe.yaml\): "
        r"move it under pipelines.physelite",
    ):
        check_family(plan, "pe", "physelite", path)


def plan_with(tmp_path, folder: str) -> tuple[dict, object]:
    path = tmp_path / "params.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "models": ["m"],
                "judges": ["rule"],
                "pipelines": {
                    "hipho": {"benchmarks": {"sample_hipho": folder}, "suites": {"sample_hipho": "sample_hipho"}}
                },
            }
        ),
        encoding="utf-8",
    )
    return read_plan(path), path


@pytest.mark.parametrize("folder", ["data/sample/hipho", "data/sample", "data", "./data/sample/hipho/"])
def test_a_local_release_is_read_from_its_plan_s_folder_or_inside_it(tmp_path, monkeypatch, folder):
    monkeypatch.chdir(ROOT)
    plan, path = plan_with(tmp_path, folder)
    check_release_folder(plan, "sample_hipho", OmegaConf.create({"type": "local", "path": "data/sample/hipho"}), path)


@pytest.mark.parametrize("folder", ["data/sample/mathvision", "data/sample/hipho/data", "data/sample/hip"])
def test_a_local_release_outside_its_plan_s_folder_is_refused(tmp_path, monkeypatch, folder):
    """The folder is all that the fetch stage depends on: a release read from elsewhere could
    change without DVC rerunning its fetch."""
    monkeypatch.chdir(ROOT)
    plan, path = plan_with(tmp_path, folder)
    with pytest.raises(InputError) as error:
        check_release_folder(
            plan, "sample_hipho", OmegaConf.create({"type": "local", "path": "data/sample/hipho"}), path
        )
    assert str(error.value) == (
        f"{path}: pipelines.hipho.benchmarks.sample_hipho is '{folder}', but conf/benchmark/sample_hipho.yaml (or an "
        "override) reads the release from source.path 'data/sample/hipho', outside it: DVC would not rerun the fetch "
        "when that release changes; name the folder the release is read from"
    )


def test_a_release_on_the_hub_or_a_benchmark_outside_the_plan_has_no_folder_to_keep_to(tmp_path):
    plan, path = plan_with(tmp_path, "conf/benchmark/sample_hipho.yaml")
    check_release_folder(plan, "sample_hipho", OmegaConf.create({"type": "hub", "repo_id": "a/b"}), path)
    check_release_folder(plan, "hipho", OmegaConf.create({"type": "local", "path": "/anywhere"}), path)


def test_a_cell_of_a_suite_outside_the_plan_has_no_family_and_is_named(tmp_path):
    plan, path = plan_with(tmp_path, "data/sample/hipho")
    assert family_of_suite(plan, "sample_hipho", path) == "hipho"
    with pytest.raises(
        InputError,
        match=r"params.yaml: suite 'hipho_en' is in no pipeline of the plan: add it under "
        r"pipelines.<its benchmark's kind>.suites \(suite: its benchmark\)$",
    ):
        family_of_suite(plan, "hipho_en", path)


def test_a_stage_that_ends_at_once_has_flushed_its_log_and_written_its_output(tmp_path):
    """`stage.run` skips the interpreter's teardown: what the stage logged and wrote is all there."""
    result = subprocess.run(
        [sys.executable, "stages/fetch.py", "benchmark=sample_hipho", f"paths.outputs={tmp_path}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "sample_hipho: 5 problems" in result.stdout + result.stderr
    assert (
        len((tmp_path / "problems" / "sample_hipho" / "problems.jsonl").read_text(encoding="utf-8").splitlines()) == 5
    )


def test_a_run_logged_to_a_file_has_one_summary_line_per_stage_and_none_per_request(render_suite, fake_openai):
    """Not a terminal (DVC's log, CI): no progress bar redrawn line after line and no client line per
    HTTP request; the stage's own summary says what happened."""
    outputs = render_suite("sample_hipho", "sample_hipho")
    cache = outputs.parent / "cache.sqlite"
    common = [f"paths.outputs={outputs}", f"paths.request_cache={cache}"]
    generate = subprocess.run(
        [
            sys.executable,
            "stages/generate.py",
            "model=gpt-4o",
            "cell.suite=sample_hipho",
            f"model.base_url={fake_openai.base_url}",
            "model.api_key_env=null",
            *common,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    judge = subprocess.run(
        [sys.executable, "stages/judge.py", "judge=rule", "cell.suite=sample_hipho", "cell.model=gpt-4o", *common],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    for result in (generate, judge):
        assert result.returncode == 0, result.stderr[-2000:]
        lines = (result.stdout + result.stderr).splitlines()
        assert len(lines) == 1 and "\r" not in result.stdout + result.stderr, lines
    assert generate.stdout.startswith("sample_hipho x gpt-4o: 5 generations, 0 failed") and fake_openai.count() == 5
    assert judge.stdout.startswith("sample_hipho x gpt-4o x rule: 5 judgments: 5 scored")


def test_a_stage_logs_each_http_request_when_asked():
    from hydra import compose, initialize_config_dir

    from tests.support import CONF

    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        quiet = compose("generate", ["model=demo", "cell.suite=x"], return_hydra_config=True).hydra.job_logging
        asked = compose(
            "generate",
            ["model=demo", "cell.suite=x", "hydra.job_logging.loggers.httpx2.level=INFO"],
            return_hydra_config=True,
        ).hydra.job_logging
    assert {quiet.loggers[name].level for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai")} == {"WARNING"}
    assert asked.loggers.httpx2.level == "INFO"


def test_a_sweep_exits_with_its_launcher_s_workers_shut_down(tmp_path):
    """A sweep leaves the process the usual way: joblib's workers, kept for reuse, would otherwise
    outlive it and hold its output pipes open."""
    result = subprocess.run(
        [
            sys.executable,
            "stages/fetch.py",
            "-m",
            "hydra/launcher=joblib",
            "benchmark=sample_hipho,sample_mathvision",
            f"paths.outputs={tmp_path}",
            f"hydra.sweep.dir={tmp_path / 'multirun'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert {path.name for path in (tmp_path / "problems").iterdir()} == {"sample_hipho", "sample_mathvision"}


# ---------------------------------------------------------------- errors


def test_a_full_disk_that_names_no_file_still_ends_in_one_line(capsys):
    """Outputs name their file when the disk is full (tests/test_bad_input.py runs that); a write
    anywhere else (a scratch file) still ends in one line, never in a traceback."""

    @clear_errors
    def stage(cfg):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(SystemExit) as exit:
        stage(None)
    assert exit.value.code == 2
    assert (
        capsys.readouterr().err
        == "error: No space left on device while this stage was writing: free some space, then rerun\n"
    )


def test_an_os_error_about_no_file_is_a_bug_and_keeps_its_traceback():
    @clear_errors
    def stage(cfg):
        raise ConnectionResetError(errno.ECONNRESET, "reset")

    with pytest.raises(ConnectionResetError):
        stage(None)


@pytest.mark.parametrize(
    "key,value,words",
    [
        ("probe", "maybe", "probe must be true or false, got 'maybe'"),
        ("probe_timeout", 0, "probe_timeout must be a number > 0, got 0"),
        ("max_consecutive_failures", -1, "max_consecutive_failures must be an integer >= 0, got -1"),
        ("max_rate_limit_wait", "long", "max_rate_limit_wait must be a number >= 0, got 'long'"),
    ],
)
def test_the_fail_fast_settings_of_an_endpoint_are_checked_before_any_request(key, value, words):
    from omegaconf import OmegaConf

    cfg = OmegaConf.create(
        {"provider": "openai", "base_url": "http://localhost:8000/v1", "model": "m", "api_key_env": None, key: value}
    )
    with pytest.raises(InputError, match=f"^model 'm' \\(conf/model/m.yaml or an override\\): {words}$"):
        check_model(cfg, "m")


def test_no_config_sets_hydra_s_mode_which_the_stages_take_from_the_command_line():
    """The stages skip Hydra's first composition, which only reads `hydra.mode` (runner.mode_from_command_line):
    that holds while no config sets it."""
    setting = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "conf").rglob("*.yaml"))
        if "mode" in ((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("hydra") or {})
    ]
    assert setting == []


def test_a_stage_composes_its_config_once_and_leaves_hydra_as_it_was():
    from hydra._internal.hydra import Hydra

    from olympiad_eval.stages.runner import mode_from_command_line

    real = Hydra.get_mode
    with mode_from_command_line():
        assert Hydra.get_mode(None, "render", []) is None  # no composition: Hydra takes the mode from `-m`
    assert Hydra.get_mode is real
