"""render: a suite's problems become the exact prompts sent to models."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.records import InputError, Problem, Prompt, Selection, read_jsonl, without_paths
from olympiad_eval.core.templates import fill
from olympiad_eval.stages.fetch import fetch
from olympiad_eval.stages.render import render, select, selection
from tests.support import typed

HIPHO = plugin("hipho")

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SAMPLE = REPO / "data" / "sample"
BENCHMARK_OF = {
    "sample_hipho": "sample_hipho",
    "sample_mathvision": "sample_mathvision",
    "sample_mathvision_evalscope": "sample_mathvision",
    "hipho_vlmevalkit": "sample_hipho",
    "sample_physelite_en": "sample_physelite",
    "sample_physelite_zh": "sample_physelite",
}


def compose_render(suite: str, *overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        return compose(
            config_name="render", overrides=[f"suite={suite}", f"cell.benchmark={BENCHMARK_OF[suite]}", *overrides]
        )


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    """problems.jsonl of each bundled sample, fetched once for this module."""
    root = tmp_path_factory.mktemp("problems")
    paths = {}
    for benchmark in ("sample_hipho", "sample_mathvision", "sample_physelite"):
        cfg = OmegaConf.load(CONF / "benchmark" / f"{benchmark}.yaml")
        cfg.source.path = str(REPO / cfg.source.path)
        fetch(benchmark, cfg, root / benchmark)
        paths[benchmark] = root / benchmark / "problems.jsonl"
    return paths


def run(fetched, tmp_path, suite: str, *overrides: str, out: str = "out"):
    cfg = compose_render(suite, *overrides)
    benchmark = cfg.cell.benchmark
    prompts = render(suite, cfg.suite, benchmark, fetched[benchmark], tmp_path / out)
    return cfg, {p.id: p for p in prompts}


def text_of(prompt: Prompt) -> str:
    [user] = [m for m in prompt.messages if m["role"] == "user"]
    return "".join(part["text"] for part in user["content"] if part["type"] == "text")


def images_of(prompt: Prompt) -> list[dict]:
    [user] = [m for m in prompt.messages if m["role"] == "user"]
    return [part for part in user["content"] if part["type"] == "image"]


# ---------------------------------------------------------------- fill / select


@pytest.mark.parametrize(
    "template, fields, expected",
    [
        ("Q: {question}", {"question": "2+2?"}, "Q: 2+2?"),
        ("[\\boxed{answer}] {question}", {"question": "q"}, "[\\boxed{answer}] q"),  # unknown names stay
        ("\\boxed{} {a}{b}", {"a": "1", "b": "2"}, "\\boxed{} 12"),
        ("{question}", {"question": "uses {context} literally"}, "uses {context} literally"),  # no second pass
        ("{context}|{question}", {"context": "", "question": "$\\frac{1}{2}$"}, "|$\\frac{1}{2}$"),
    ],
)
def test_fill(template, fields, expected):
    assert fill(template, fields) == expected


def problem(pid, language, subset=""):
    return Problem(id=pid, benchmark="b", language=language, question="q", subset=subset)


@pytest.mark.parametrize(
    "suite, expected",
    [
        ({"language": None}, ["1", "1", "2"]),
        ({"language": "all"}, ["1", "1", "2"]),
        ({"language": "zh"}, ["1"]),
        ({"language": "en", "subsets": ["B"]}, ["2"]),
        ({"language": None, "subsets": []}, ["1", "1", "2"]),
    ],
)
def test_select(suite, expected):
    problems = [problem("1", "en", "A"), problem("1", "zh", "A"), problem("2", "en", "B")]
    assert [p.id for p in select(problems, typed("hipho", **suite))] == expected


# ---------------------------------------------------------------- taking part of a benchmark

TEN = [problem(str(n), language, "A" if n <= 5 else "B") for n in range(1, 11) for language in ("en", "zh")]


def ids(problems):
    return sorted({p.id for p in problems}, key=int)


def test_a_limit_takes_the_first_problems_by_id_each_in_every_language():
    chosen = select(TEN, typed("hipho", limit=3))
    assert [(p.id, p.language) for p in chosen] == [(i, lang) for i in ("1", "2", "3") for lang in ("en", "zh")]
    assert ids(select(TEN, typed("hipho", limit=3, language="zh"))) == ["1", "2", "3"]


def test_a_seeded_limit_draws_the_same_problems_and_a_larger_one_keeps_them():
    five = ids(select(TEN, typed("hipho", limit=5, sample_seed=7)))
    assert five == [
        "2",
        "3",
        "4",
        "5",
        "7",
    ]  # pinned (sha256 of "7/<id>"): the draw must not change across machines or versions
    assert ids(select(TEN, typed("hipho", limit=5, sample_seed=7))) == five
    assert set(five) < set(ids(select(TEN, typed("hipho", limit=8, sample_seed=7))))
    assert ids(select(TEN, typed("hipho", limit=5, sample_seed=8))) != five


def test_options_narrow_one_another_and_the_limit_comes_last():
    suite = typed("hipho", ids=["2", "4", "6", "8"], subsets=["B"], limit=1)
    assert ids(select(TEN, suite)) == ["6"]


def test_what_a_selection_took_is_counted_by_problem_not_by_language():
    suite = typed("hipho", limit=4, ids=["1", "2", "3", "4", "5", "6"])
    taken = selection(TEN, select(TEN, suite), suite)
    assert taken == Selection(options={"ids": ["1", "2", "3", "4", "5", "6"], "limit": 4}, selected=4, of=10)
    assert taken.partial and taken.describe() == "4 of 10 problems (ids 1, 2, 3 and 3 more; limit 4)"
    assert selection(TEN, TEN, typed("hipho")) is None  # a whole suite records no selection
    assert select(TEN, typed("hipho", sample_seed=3)) == TEN  # a seed without a limit draws nothing: all
    assert selection(TEN, TEN, typed("hipho", sample_seed=3)) is None
    assert not selection(TEN, TEN, typed("hipho", limit=10)).partial


def where(name: str = "suite") -> str:
    return rf"^suite '{name}' \(conf/suite/{name}.yaml or an override\): "


@pytest.mark.parametrize(
    "options, said",
    [
        ({"ids": ["1", "12"]}, r"ids: '12' selects no problem of the suite \(closest: 2, 1\)$"),
        ({"subsets": ["A", "C", "D"]}, r"subsets: 'C', 'D' select no problem of the suite \(its subsets: A, B\)$"),
        ({"ids": ["1"], "subsets": ["B"]}, r"subsets, ids: each selects problems, but together none$"),
    ],
)
def test_a_value_that_selects_nothing_names_the_suite_file_and_the_key(options, said):
    with pytest.raises(InputError, match=where() + said):
        select(TEN, typed("hipho", **options))


def test_a_value_is_looked_for_among_the_problems_of_the_suite_s_language():
    zh_only = [*TEN, problem("11", "zh")]
    assert ids(select(zh_only, typed("hipho", ids=["11"]))) == ["11"]
    with pytest.raises(InputError, match=where("x") + r"ids: '11' selects no problem"):
        select(zh_only, typed("hipho", ids=["11"], language="en"), "x")


@pytest.mark.parametrize(
    "options, said",
    [
        ({"limit": 0}, r"limit must be an integer >= 1 \(null: every problem\), got 0$"),
        ({"limit": -2}, r"limit must be an integer >= 1 \(null: every problem\), got -2$"),
        ({"limit": "five"}, r"limit: Value 'five' of type 'str' could not be converted to Integer$"),
    ],
)
def test_a_limit_below_one_is_refused_before_any_work(options, said):
    with pytest.raises(InputError, match=where("test") + said):
        typed("hipho", **options)


def test_a_limited_suite_records_what_it_took_beside_its_prompts(fetched, tmp_path):
    _, whole = run(fetched, tmp_path, "sample_hipho", out="whole")
    _, limited = run(fetched, tmp_path, "sample_hipho", "suite.limit=2", out="limited")
    assert sorted(limited) == ["DemoCPhO_2025_1_1", "DemoCPhO_2025_2_1"]  # the first two by id
    assert all(limited[pid] == whole[pid] for pid in limited)  # the same prompts: the same requests, cached
    suite = json.loads((tmp_path / "limited" / "suite.json").read_text())
    assert suite["selection"] == {"options": {"limit": 2}, "selected": 2, "of": 5}
    assert [p.id for p in read_jsonl(tmp_path / "limited" / "problems.jsonl", Problem)] == sorted(limited)
    assert "selection" not in json.loads((tmp_path / "whole" / "suite.json").read_text())


def test_an_unknown_id_stops_render_and_writes_nothing(fetched, tmp_path):
    cfg = compose_render("sample_hipho", "suite.ids=[DemoPhO_2025_1_a,DemoPhO_2025_9]")
    with pytest.raises(
        InputError,
        match=r"^suite 'sample_hipho' \(conf/suite/sample_hipho.yaml or an override\): "
        r"ids: 'DemoPhO_2025_9' selects no problem of the suite \(closest: ",
    ):
        render("sample_hipho", cfg.suite, "sample_hipho", fetched["sample_hipho"], tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- HiPhO


@pytest.fixture
def hipho_run(fetched, tmp_path):
    cfg, prompts = run(fetched, tmp_path, "sample_hipho")
    problems = {p.id: p for p in read_jsonl(fetched["sample_hipho"], Problem)}
    return cfg, prompts, problems


ZH_OPENING = "你正在参加高中物理竞赛"
EN_OPENING = "You are participating in a high school physics Olympiad exam."


def test_hipho_each_exam_gets_the_prompt_of_its_language(hipho_run):
    _, prompts, _ = hipho_run
    assert len(prompts) == 5
    for pid, prompt in prompts.items():
        text = text_of(prompt)
        if pid.startswith("DemoCPhO"):
            assert prompt.language == "zh"
            assert text.startswith(ZH_OPENING) and EN_OPENING not in text
        else:
            assert prompt.language == "en"
            assert text.startswith(EN_OPENING) and ZH_OPENING not in text


@pytest.mark.parametrize(
    "pid", ["DemoPhO_2025_1_a", "DemoPhO_2025_1_b", "DemoPhO_2025_2_a", "DemoCPhO_2025_1_1", "DemoCPhO_2025_2_1"]
)
def test_hipho_placeholders_are_filled_and_boxes_stay(hipho_run, pid):
    cfg, prompts, problems = hipho_run
    problem, prompt = problems[pid], prompts[pid]
    template = cfg.suite.templates[problem.language].text
    expected = (
        template.replace("{information}", problem.information or "None.")
        .replace("{context}", problem.context)
        .replace("{question}", problem.question)
    )
    text = text_of(prompt)
    assert text == expected
    for placeholder in ("{information}", "{context}", "{question}"):
        assert placeholder not in text
    assert problem.question in text
    box = "[\\boxed{答案}]" if problem.language == "zh" else "[\\boxed{answer}]"
    assert box in text and "[\\boxed{A}, \\boxed{3.2}]" in text


def test_hipho_information_sheet(hipho_run):
    _, prompts, _ = hipho_run
    assert "Useful information (formulas, constants, units, if applicable):\nConstants sheet:" in text_of(
        prompts["DemoPhO_2025_2_a"]
    )
    assert "可用信息（如物理公式、常数、单位等）：\nNone.\n" in text_of(prompts["DemoCPhO_2025_1_1"])


def test_hipho_every_figure_is_an_image_part(hipho_run):
    _, prompts, problems = hipho_run
    for pid, prompt in prompts.items():
        parts = images_of(prompt)
        assert [(p["sha256"], p["path"], p["mime"]) for p in parts] == [
            (f.sha256, f.path, f.mime) for f in problems[pid].figures
        ]
        for part in parts:
            assert hashlib.sha256(Path(part["path"]).read_bytes()).hexdigest() == part["sha256"]
    assert [len(images_of(prompts[pid])) for pid in sorted(prompts)] == [0, 0, 1, 1, 1]


def test_hipho_figures_none(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_hipho", "suite.figures=none")
    assert all(images_of(p) == [] for p in prompts.values())


def test_hipho_all_english_prompt_language(fetched, tmp_path):
    _, english = run(fetched, tmp_path, "sample_hipho", "suite.prompt_language=en", out="en")
    _, native = run(fetched, tmp_path, "sample_hipho", out="native")
    assert text_of(english["DemoCPhO_2025_1_1"]).startswith(EN_OPENING)
    assert english["DemoCPhO_2025_1_1"].language == "zh"  # still the problem's language
    assert english["DemoCPhO_2025_1_1"].prompt_hash != native["DemoCPhO_2025_1_1"].prompt_hash
    assert english["DemoPhO_2025_1_a"].prompt_hash == native["DemoPhO_2025_1_a"].prompt_hash


def test_hipho_reference_is_the_gold_in_the_asked_format(hipho_run):
    _, prompts, problems = hipho_run
    for pid, prompt in prompts.items():
        assert prompt.reference == HIPHO.reference(problems[pid], None)
    assert "[\\boxed{a = 3.20}, \\boxed{t = 0.790}]" in prompts["DemoPhO_2025_1_b"].reference


def test_prompt_hash_is_the_sha256_of_the_messages_without_figure_paths(hipho_run):
    _, prompts, _ = hipho_run
    for prompt in prompts.values():
        data = json.dumps(without_paths(prompt.messages), sort_keys=True, ensure_ascii=False).encode()
        assert prompt.prompt_hash == hashlib.sha256(data).hexdigest()
    assert len({p.prompt_hash for p in prompts.values()}) == 5


def test_render_is_byte_identical_across_runs(fetched, tmp_path):
    run(fetched, tmp_path, "sample_hipho", out="first")
    run(fetched, tmp_path, "sample_hipho", out="second")
    for name in ("problems.jsonl", "prompts.jsonl", "suite.json"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes()


def test_render_outputs(fetched, tmp_path):
    run(fetched, tmp_path, "sample_hipho")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["problems.jsonl", "prompts.jsonl", "suite.json"]
    suite = json.loads((out / "suite.json").read_text())
    scoring = suite.pop("scoring")  # how the judge scores it: the suite's protocol settings, carried to the judge
    assert suite == {
        "suite": "sample_hipho",
        "benchmark": "sample_hipho",
        "kind": "hipho",
        "language": None,
        "templates": {"en": "hipho_en", "zh": "hipho_zh"},
    }
    assert {key: value for key, value in scoring.items() if key != "prompts"} == {
        "protocol": "olympiad_eval",
        "rel_tol": 0.0,
        "check_options": {},
        "judge_figures": False,
        "prediction_chars": 32767,
    }
    assert {key: (prompt["name"], prompt["version"]) for key, prompt in scoring["prompts"].items()} == {
        "criterion": ("hipho_criterion_judge", 1),
        "answer": ("hipho_answer_judge", 2),
    }
    assert read_jsonl(out / "problems.jsonl", Problem) == read_jsonl(fetched["sample_hipho"], Problem)


# ---------------------------------------------------------------- PhysElite


@pytest.mark.parametrize("language", ["en", "zh"])
def test_physelite_suite_selects_only_its_language(fetched, tmp_path, language):
    suite = f"sample_physelite_{language}"
    cfg, prompts = run(fetched, tmp_path, suite)
    assert sorted(prompts) == ["PE-S-0001", "PE-S-0002", "PE-S-0003"]
    assert {p.language for p in prompts.values()} == {language}
    selected = read_jsonl(tmp_path / "out" / "problems.jsonl", Problem)
    assert {p.language for p in selected} == {language} and len(selected) == 3
    by_id = {p.id: p for p in selected}
    for pid, prompt in prompts.items():
        text = text_of(prompt)
        assert text == cfg.suite.templates.default.text.replace("{problem}", by_id[pid].question)
        assert prompt.reference.endswith(f"FINAL ANSWER: {by_id[pid].answers[0].value}")


def test_physelite_sends_the_schematic_only_by_default(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_physelite_en")
    problems = {p.id: p for p in read_jsonl(fetched["sample_physelite"], Problem) if p.language == "en"}
    schematic = [f.sha256 for f in problems["PE-S-0002"].figures if f.role == "schematic"]
    assert [part["sha256"] for part in images_of(prompts["PE-S-0002"])] == schematic
    assert [len(images_of(prompts[pid])) for pid in sorted(prompts)] == [1, 1, 0]


def test_physelite_process_images_on_request(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_physelite_zh", "suite.figures=schematic+process")
    assert len(images_of(prompts["PE-S-0002"])) == 2


def test_physelite_hint_is_the_first_step_never_the_answer(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_physelite_zh", "suite.hint.mode=first_step")
    text = text_of(prompts["PE-S-0001"])
    assert text.endswith("\n\n提示：\n第一步：竖直方向为自由落体运动，$h = \\frac{1}{2} g t^2$。")
    assert "24" not in text.split("提示：")[1] and "第二步" not in text


# ---------------------------------------------------------------- MATH-Vision


OFFICIAL = (
    'Please solve the problem and put your answer in one "\\boxed{}". If it is a multiple choice question, only one '
    'letter is allowed in the "\\boxed{}".\n'
)


def test_mathvision_official_prompt_lists_options_as_the_official_script(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_mathvision")
    problems = {p.id: p for p in read_jsonl(fetched["sample_mathvision"], Problem)}
    assert text_of(prompts["1"]) == (
        OFFICIAL + problems["1"].question + "\n(A) 13 cm\n(B) 18 cm\n(C) 26 cm\n(D) 40 cm\n(E) 21 cm\n"
    )
    assert text_of(prompts["2"]).rstrip("\n") == OFFICIAL + problems["2"].question  # the script adds "\n" + no options


def test_mathvision_official_prompt_omits_options_that_are_only_letters():

    letters = Problem(id="9", benchmark="b", language="en", question="Which? <image1>", choices=tuple("ABCDE"))
    assert plugin("mathvision").template_fields(letters, {})[1]["options"] == ""


def test_mathvision_multiple_choice_uses_the_choices_template(fetched, tmp_path):
    cfg, prompts = run(fetched, tmp_path, "sample_mathvision_evalscope")
    text = text_of(prompts["1"])
    assert text.startswith("Answer the following multiple choice question.")
    assert text.endswith("<image1>\n\nA) 13 cm\nB) 18 cm\nC) 26 cm\nD) 40 cm\nE) 21 cm")
    assert "{choices}" not in text and "{question}" not in text
    assert text_of(prompts["3"]).endswith("\n\nA) 2\nB) 3\nC) 4\nD) 5\nE) 6")
    assert prompts["1"].reference.endswith("ANSWER: C")


def test_mathvision_free_form_uses_the_free_form_template(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_mathvision_evalscope")
    problems = {p.id: p for p in read_jsonl(fetched["sample_mathvision"], Problem)}
    for pid in ("2", "4"):
        text = text_of(prompts[pid])
        assert (
            text
            == problems[pid].question
            + "\nPlease reason step by step, and put your final answer within \\boxed{} without units."
        )
    assert all(len(images_of(p)) == 1 for p in prompts.values())


def test_mathvision_evalscope_puts_the_figure_after_the_whole_text(fetched, tmp_path):
    """evalscope appends the image to the prompt's text (one text part, then the image), the
    `<image1>` marker staying in the question."""
    _, prompts = run(fetched, tmp_path, "sample_mathvision_evalscope")
    for prompt in prompts.values():
        [user] = [m for m in prompt.messages if m["role"] == "user"]
        assert [part["type"] for part in user["content"]] == ["text", "image"]
        assert "<image1>" in user["content"][0]["text"]


# ---------------------------------------------------------------- errors


def test_no_matching_language_is_an_error_and_writes_nothing(fetched, tmp_path):
    cfg = compose_render("sample_physelite_en", "suite.language=fr")
    with pytest.raises(InputError, match="no problem .* matches language=fr"):
        render("sample_physelite_en", cfg.suite, "sample_physelite", fetched["sample_physelite"], tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_missing_template_is_an_error_and_writes_nothing(fetched, tmp_path):
    cfg = compose_render("sample_hipho", "~suite.templates.zh")
    with pytest.raises(InputError, match="no template 'zh'"):
        render("sample_hipho", cfg.suite, "sample_hipho", fetched["sample_hipho"], tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_system_prompt_comes_first(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_mathvision", "+suite.system_prompt=Be brief.")
    prompts = list(prompts.values())
    assert all(p.messages[0] == {"role": "system", "content": "Be brief."} for p in prompts)
    assert all(p.messages[1]["role"] == "user" for p in prompts)


def kinds(prompt: Prompt) -> list[str]:
    [user] = [m for m in prompt.messages if m["role"] == "user"]
    return [part["type"] for part in user["content"]]


def test_a_figure_goes_right_after_its_marker(hipho_run):
    _, prompts, _ = hipho_run
    marked = prompts["DemoPhO_2025_1_a"]  # its context cites [figure1]
    assert kinds(marked) == ["text", "image", "text"]
    assert marked.messages[0]["content"][0]["text"].endswith("[figure1]")
    unmarked = prompts["DemoPhO_2025_2_a"]  # has a figure but never cites it
    assert kinds(unmarked) == ["text", "image"]


def test_figures_after_the_text_on_request(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_hipho", "suite.figure_placement=after_text")
    assert kinds(prompts["DemoPhO_2025_1_a"]) == ["text", "image"]


def test_mathvision_images_replace_no_text(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "sample_mathvision")
    for prompt in prompts.values():
        assert kinds(prompt).count("image") == 1 and "<image1>" in text_of(prompt)


def test_an_unknown_figure_placement_is_an_error(fetched, tmp_path):
    with pytest.raises(InputError, match="figure_placement"):
        run(fetched, tmp_path, "sample_hipho", "suite.figure_placement=inline")
    assert not (tmp_path / "out").exists()


def test_hipho_vlmevalkit_variant_puts_figures_first_and_keeps_its_wording(fetched, tmp_path):
    _, prompts = run(fetched, tmp_path, "hipho_vlmevalkit")
    english, chinese = prompts["DemoPhO_2025_1_a"], prompts["DemoCPhO_2025_1_1"]
    assert kinds(english)[0] == "image" and kinds(english)[-1] == "text"
    text = text_of(english)
    assert text.startswith("You are participating in a high school physics competition.")
    assert "Problem:\nFind the speed" in text and "[\\boxed{{answer}}]" in text  # sent as VLMEvalKit sends it
    assert "using the format\n   of [\\boxed{{answer}}]" in text  # the pinned commit's wrapping
    assert text_of(chinese).startswith("你正在参加高中物理竞赛。\n请仔细阅读下列题目")


def figure(name: str):
    from olympiad_eval.core.records import Figure

    return Figure(sha256=name, path=f"{name}.png", mime="image/png", name=name)


def placed(parts: list[dict]) -> list[str]:
    """Each part as the test reads it: the text's last marker, or the image's name."""
    return [part["sha256"] if part["type"] == "image" else part["text"].split()[-1] for part in parts]


def test_figures_keyed_by_their_own_number_go_after_that_marker():
    from olympiad_eval.stages.render import place_figures

    parts = place_figures("see [figure2] then [figure4] end", {2: figure("c_1"), 4: figure("d_1")}, at_markers=True)
    assert placed(parts) == ["[figure2]", "c_1", "[figure4]", "d_1", "end"]


def test_a_list_of_figures_is_numbered_by_position_and_unmarked_ones_follow_the_text():
    from olympiad_eval.stages.render import place_figures

    parts = place_figures(
        "<image2> and <image1> then [figure9]", [figure("a"), figure("b"), figure("c")], at_markers=True
    )
    assert placed(parts) == ["<image2>", "b", "<image1>", "a", "[figure9]", "c"]
