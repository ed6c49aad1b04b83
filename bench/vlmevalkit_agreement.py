"""HiPhO's `protocol: vlmevalkit` against VLMEvalKit's own HiPhO code, problem by problem, and our
default protocol (`olympiad_eval`) measured against it.

VLMEvalKit's files are never part of this project: give a checkout of open-compass/VLMEvalKit at the
pinned commit (the three HiPhO files are checked by their SHA-256):

    git clone https://github.com/open-compass/VLMEvalKit /tmp/VLMEvalKit
    git -C /tmp/VLMEvalKit checkout e8e78f05f3080fe28154f2130321f17951c3be94

and an interpreter with what its HiPhO scoring imports (no torch): by default this script makes a
venv for it (`--venv`, .cache/bench/vlmevalkit-venv, `pip install` of `VLMEVALKIT_NEEDS`, a minute),
or `--python` names one that has them.

    python bench/vlmevalkit_agreement.py --vlmevalkit /tmp/VLMEvalKit [--python PY | --venv DIR] [--exams A,B] [--keep]

What runs. The responses are written here, a deterministic function of each problem: on every exam
of the shared release (../shared/data/hipho) a model's answers (right as written, right in another
form, wrong, fewer boxes than slots, a guess boxed in the think block, a check boxed after the
answer block, no answer), and adversarial responses of our own, one synthetic exam per class of
quirk (`CLASSES`: copies of release problems, renamed `<class>__<id>`). VLMEvalKit scores them with
its own files (`bench/vlmevalkit_runner.py`, in its interpreter: `HiPhODataset.evaluate` on the
.xlsx its inference writes); our side runs the real stage scripts (fetch, render, generate with the
responses replayed, judge with `judge=gpt-4o`), as DVC runs them. Both ask ONE local fake judge:

- `prompt` judge (the agreement run): every reply a function of the SHA-256 of the whole prompt
  text, in VLMEvalKit's reply forms (an answer judge's `[Correct]`, `Correct`, `[Correct].`,
  `**[Correct]**`, `[Incorrect]`; a criterion award boxed, bare, `\\boxed{X pt}`, or "Award: X pt
  (criterion maximum Y pt)", whose last number is the maximum; a quarter of them overflow): the
  same prompt gets the same reply on both sides, a prompt worded otherwise gets another;
- `content` judge (the measured run): replies a function of what is asked (the question, the
  criterion and the attempt; the question and the answer), whatever the wording, so that our
  default protocol, whose prompts differ, gets the same judgments as VLMEvalKit; an award never
  above the criterion's points where our default bounds it.
Markers in a response steer both judges (`<<overflow>>`, `<<overflow-once>>`, `<<full>>`, `<<zero>>`,
`<<odd-awards>>`, `<<judge-http-500>>`: a failed request). Done is: under the `vlmevalkit` protocol
every problem equal (a problem VLMEvalKit drops dropped by ours too), every exam's total, maximum and
medal equal (medals: the paper's cutoffs, score >= cutoff; VLMEvalKit has none), on both judges; and
every judge prompt ours sent is one VLMEvalKit sent, but for one expected difference: where a
criterion request fails, VLMEvalKit stops asking that problem's criteria (it drops the problem),
while ours has asked them all at once. The tables then show, per exam, what our default changes
against VLMEvalKit with the content judge.

Not compared: an empty response (a failed generation to us; VLMEvalKit scores the text "nan").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import yaml
from agreement import allow_skip, skipped  # bench/ is on the path

from olympiad_eval.benchmarks.hipho.tables import medal
from olympiad_eval.benchmarks.hipho.vlmevalkit import prediction, slot_answers
from olympiad_eval.benchmarks.judging import unfenced
from olympiad_eval.cli.fake_server import FakeOpenAI, Fault
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import Judgment, read_jsonl
from olympiad_eval.scoring.answers import boxes
from olympiad_eval.scoring.expressions import to_number

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT.parent / "shared" / "data" / "hipho"
VENV = ROOT / ".cache" / "bench" / "vlmevalkit-venv"
RUNNER = Path(__file__).resolve().parent / "vlmevalkit_runner.py"
PINNED = "e8e78f05f3080fe28154f2130321f17951c3be94"
# The three files of HiPhO's scoring at the pinned commit, by SHA-256: another commit may score otherwise.
PINNED_FILES = {
    "vlmeval/dataset/hipho.py": "7ad27618415153d8a63d120bedc0e1d9b00d9384ae06484727fc31bc5963f4b6",
    "vlmeval/dataset/utils/hipho_verifier.py": "e9419d8f460efa7eb700334b3b03085463cb208f301644cac11848448a18430f",
    "vlmeval/dataset/utils/hipho_prompt_inference.py": (
        "217f1f4ddc6e2b5c580c392f815df7b2baffe7e26349f41b5bec7815a87121b1"
    ),
}
# What VLMEvalKit's HiPhO scoring imports, at the versions our protocol is written against: sympy,
# latex2sympy2_extended and math-verify as this project pins them, pylatexenc and antlr4 as VLMEvalKit
# pins them, pandas before 3 (VLMEvalKit predates its string dtype); no torch.
VLMEVALKIT_NEEDS = (
    "sympy==1.14.0 latex2sympy2_extended==1.11.0 math-verify==0.9.0 antlr4-python3-runtime==4.11.1 pylatexenc==2.10 "
    "pandas<3 numpy requests pillow validators huggingface_hub sty filelock python-dotenv tqdm xlsxwriter openpyxl "
    "pyyaml"
).split()

ANSWER_MARK = "Respond with either\n[Correct] or [Incorrect]."
CRITERION_MARK = "You are an expert physics competition grader."
OURS_CRITERION_MARK = "against ONE criterion of the official marking scheme"
OURS_ANSWER_MARK = "Is the student's final answer equivalent to the official answer?"
FAIL = "<<judge-http-500>>"


# ---------------------------------------------------------------- VLMEvalKit's side


def check_checkout(root: Path) -> None:
    for name, expected in PINNED_FILES.items():
        path = root / name
        if not path.is_file():
            sys.exit(f"{root} is not a VLMEvalKit checkout: no {name}")
        found = hashlib.sha256(path.read_bytes()).hexdigest()
        if found != expected:
            sys.exit(f"{path}: not the file of VLMEvalKit {PINNED} (sha256 {found[:12]}, expected {expected[:12]})")


def interpreter(args) -> str:
    """`--python`, or a venv of VLMEVALKIT_NEEDS made once at `--venv`."""
    if args.python:
        return args.python
    python = args.venv / "bin" / "python"
    check = [str(python), "-c", "import pylatexenc, xlsxwriter, openpyxl, sympy, math_verify, pandas"]
    if not (python.exists() and subprocess.run(check, capture_output=True).returncode == 0):
        print(f"making VLMEvalKit's environment in {args.venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(args.venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *VLMEVALKIT_NEEDS], check=True)
    return str(python)


def run_vlmevalkit(python: str, root: Path, source: Path, responses: Path, url: str, folder: Path) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "vlmevalkit.json"
    args = {
        "vlmevalkit": str(root),
        "release": str(source),
        "responses": str(responses),
        "judge_url": url,
        "out": str(out),
        "work": str(folder / "work"),
        "nproc": 32,
    }
    with (folder / "vlmevalkit.log").open("w") as log:
        done = subprocess.run([python, str(RUNNER), json.dumps(args)], stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        sys.exit(f"VLMEvalKit failed ({done.returncode}):\n{(folder / 'vlmevalkit.log').read_text()[-3000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- the exams and the responses


BOXED = re.compile(r"\\boxed\{")  # the project's one brace matcher reads what follows


def digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()


def box_payload(value: str) -> str:
    """The inside of a gold's last `\\boxed{...}` (as written), else the text."""
    found = boxes(value, BOXED)
    return found[-1].inside if found else value.strip()


def number_of(gold: str) -> float | None:
    return to_number(gold.replace("$", "").strip())


def scientific(value: float) -> str:
    mantissa, exponent = f"{value:.6e}".split("e")
    return f"{float(mantissa):g} \\times 10^{{{int(exponent)}}}"


def wrapped(slots: list[str], think: str = "Step 1: set up. Step 2: solve.", after: str = "") -> str:
    boxes = ", ".join(f"\\boxed{{{slot}}}" for slot in slots)
    return f"<think>\n{think}\n</think>\n<answer>\n[{boxes}]\n</answer>{after}"


def release_response(item: dict) -> str:
    """A model's response to a release problem (the shared exams)."""
    golds, draw = [box_payload(str(a)) for a in item["answer"]], digest("release", item["id"])
    if draw[0] % 10 == 0:
        return "<think>\nThe problem is too hard for me.\n</think>\nI could not finish."
    slots = []
    for index, gold in enumerate(golds):
        pick = digest("slot", item["id"], str(index))
        value = number_of(gold)
        if pick[0] < 140:
            slots.append(scientific(value) if value is not None and pick[1] % 3 == 0 else gold.replace("$", ""))
        elif re.fullmatch(r"\$?[A-E]\$?", gold.strip()):
            slots.append("ABCDE"[("ABCDE".index(gold.strip().strip("$")) + 1) % 5])
        else:
            slots.append(f"{pick[2] % 90 + 10}.{pick[3] % 10}")
    shown = slots if draw[1] % 10 > 2 or len(slots) < 2 else slots[: 1 + draw[2] % (len(slots) - 1)]
    think = "Step 1: set up." + (" A first guess: \\boxed{1}." if draw[3] % 5 == 0 else "") + " Step 2: solve."
    after = "\nCheck: \\boxed{0}" if draw[3] % 5 == 1 else ""
    return wrapped(shown, think, after)


def _golds(item: dict) -> list[str]:
    return [box_payload(str(a)).replace("$", "").strip() for a in item["answer"]]


def _numeric(item: dict) -> bool:
    return any(number_of(g) is not None and not g.startswith("[") for g in _golds(item))


def _ranged(item: dict) -> bool:
    return any(g.startswith("[") and "," in g for g in _golds(item))


def _marked(item: dict) -> bool:
    return bool(item.get("marking"))


def _several_schemes(item: dict) -> bool:
    marking = item.get("marking") or []
    return len(marking) > 1 and all(isinstance(scheme, list) for scheme in marking)


def _multi(item: dict) -> bool:
    return len(item["answer"]) > 1


def _symbolic(item: dict) -> bool:
    return any(re.search(r"[A-Za-z]", g) and number_of(g) is None and not g.startswith("[") for g in _golds(item))


def _choice(item: dict) -> bool:
    return any(re.fullmatch(r"[A-E](, ?[A-E])*", g) for g in _golds(item))


def _each(item: dict, rewrite) -> list[str]:
    return [rewrite(gold, index) for index, gold in enumerate(_golds(item))]


def _loose(gold: str, index: int, item: dict) -> str:
    value, pick = number_of(gold), digest("loose", item["id"], str(index))[0]
    if value is None or gold.startswith("["):
        return gold
    factor = (1.001, 1.002, 1.0025, 1.004, 1.01, 1.03, 1.3, 0.97, 0.996)[pick % 9]
    shown = value * factor
    return (f"{shown:.3g}", f"{shown:.4g}", f"{shown:.2f}", scientific(shown))[pick % 4]


def _mathd(gold: str, index: int, item: dict) -> str:
    forms = (
        lambda g: g.replace("\\frac", "\\dfrac"),
        lambda g: "\\left(" + g + "\\right)" if not g.startswith("(") else g,
        lambda g: "v = " + g,
        lambda g: g + " \\text{ m}",
        lambda g: g.replace(" ", ""),
        lambda g: "\\text{" + g + "}",
        lambda g: g + "^{\\circ}",
        lambda g: "{" + g + "}",
    )
    return forms[digest("mathd", item["id"], str(index))[0] % len(forms)](gold)


def _units(gold: str, index: int, item: dict) -> str:
    if re.fullmatch(r"[A-E]", gold):
        return ("(" + gold + ")", gold + ")", "X = " + gold, "(" + gold + ") is right")[digest("u", item["id"])[0] % 4]
    unit = (" km", " \\, \\text{K}", " m", " s", " N", " kg", " \\text{ J}", " hours", " V")
    return gold + unit[digest("units", item["id"], str(index))[0] % len(unit)]


def _case(gold: str, index: int, item: dict) -> str:
    return gold.swapcase() if digest("case", item["id"], str(index))[0] % 2 else gold.lower()


def _split(gold: str, index: int, item: dict) -> str:
    pick = digest("split", item["id"], str(index))[0] % 5
    lhs = ("\\alpha", "E_{k}", "x", "F_{\\text{net}}", "T")[pick]
    return f"{lhs} = {gold}" if pick != 4 else f"{lhs} = 13 = {gold}"


def _range(gold: str, index: int, item: dict) -> str:
    bounds = re.fullmatch(r"\[\s*([^,]+?)\s*,\s*([^,]+?)\s*\].*", gold)
    low, high = (number_of(b) for b in bounds.groups()) if bounds else (None, None)
    if low is None or high is None:
        return gold
    pick = digest("range", item["id"], str(index))[0] % 4
    return f"{((low + high) / 2, low, high, high * 1.5)[pick]:.4g}"


def _box_syntax(item: dict) -> str:
    """Several slots: a `\\boxed {x}` or `\\fbox{x}` first, normal boxes after (dropped); else one
    odd box alone (0), a doubled brace, a trailing `\\fbox` (ignored)."""
    golds, pick = _golds(item), digest("syntax", item["id"])[0]
    if len(golds) > 1 and pick % 2 == 0:
        first = (f"\\boxed {{{golds[0]}}}", f"\\fbox{{{golds[0]}}}")[pick // 2 % 2]
        return "<answer>" + ", ".join([first] + [f"\\boxed{{{g}}}" for g in golds[1:]]) + "</answer>"
    return (
        f"<answer>\\boxed {{{golds[0]}}}</answer>",
        f"<answer>\\fbox{{{golds[0]}}}</answer>",
        f"<answer>\\boxed{{{{{golds[-1]}}}}}</answer>",
        f"<answer>\\boxed{{{golds[-1]}}} then \\fbox{{1}}</answer>",
    )[pick % 4]


# class: (what it exercises, which problems, (item -> response), at most how many problems)
CLASSES = {
    "boxes_anywhere": (
        "the last boxes of the whole response: a guess in the think block, a check after </answer>, no answer block",
        _multi,
        lambda item: (
            wrapped(_golds(item)[:1], "First guess: " + ", ".join(f"\\boxed{{{g}}}" for g in _golds(item)))
            if digest("where", item["id"])[0] % 3 == 0
            else wrapped(_golds(item), after="\nCheck: \\boxed{0}")
            if digest("where", item["id"])[0] % 3 == 1
            else "So " + " and ".join(f"\\boxed{{{g}}}" for g in _golds(item)) + "."
        ),
        24,
    ),
    "padding": (
        "fewer boxes than slots (padded in front), an empty box, no box at all (0, no judge asked)",
        _multi,
        lambda item: (wrapped(_golds(item)[-1:]), wrapped([""] + _golds(item)[1:]), "No box here.")[
            digest("pad", item["id"])[0] % 3
        ],
        24,
    ),
    "box_syntax": (
        "`\\boxed {x}` and `\\fbox{x}`: alone (0), mixed with a normal box (the problem dropped), `\\boxed{{x}}`",
        lambda item: True,
        lambda item: _box_syntax(item),
        30,
    ),
    "unclosed_gold": (
        "a gold whose box is never closed (CPhO_2025_7_6): answered, the problem is dropped; unanswered, 0",
        lambda item: item["id"] == "CPhO_2025_7_6",
        None,  # two responses, below
        2,
    ),
    "mathd": (
        "forms mathd normalises: \\dfrac, \\left(, `v = ` (short left side), \\text{..}, a trailing unit, ^{\\circ}",
        lambda item: True,
        lambda item: wrapped(_each(item, lambda g, i: _mathd(g, i, item))),
        40,
    ),
    "loose_numbers": (
        "numbers off by 0.1 % to 30 %, rounded to other decimals, in scientific notation: its loose numeric step",
        _numeric,
        lambda item: wrapped(_each(item, lambda g, i: _loose(g, i, item))),
        60,
    ),
    "ranges": (
        "accepted ranges [a, b] answered inside, at an end, outside: Math-Verify (never true), then the judge",
        _ranged,
        lambda item: wrapped(_each(item, lambda g, i: _range(g, i, item))),
        30,
    ),
    "unit_words": (
        "unit words deleted (`(A)` is not A, `(B)` is B, `21.9 km` is not 21.9): its unit list as regexes",
        lambda item: _numeric(item) or _choice(item),
        lambda item: wrapped(_each(item, lambda g, i: _units(g, i, item))),
        40,
    ),
    "lower_case": (
        "case changed (`mg` is `Mg` to its sympy step)",
        _symbolic,
        lambda item: wrapped(_each(item, lambda g, i: _case(g, i, item))),
        30,
    ),
    "split_eq": (
        "`name = value` with another name, chains `x = 13 = v`: the split on the last `=`",
        lambda item: True,
        lambda item: wrapped(_each(item, lambda g, i: _split(g, i, item))),
        40,
    ),
    "answer_judge": (
        "every slot wrong by rules: the answer judge decides, its exact `[Correct]` reply and the split ask",
        lambda item: not _marked(item),
        lambda item: wrapped([f"\\text{{about }} {g}" for g in _golds(item)]),
        40,
    ),
    "awards": (
        "criterion replies read for their last number: \\boxed{1/2}, a bare -1, 0.125, 'X of Y', \\boxed{5}",
        _marked,
        lambda item: wrapped(_golds(item)[:1], "<<odd-awards>> My work."),
        30,
    ),
    "overflow": (
        "awards above the points: asked again 3 times then rescaled (one scheme), rescaled at once (several)",
        _marked,
        lambda item: wrapped(
            [], ("<<overflow>>", "<<overflow-once>>", "<<full>>")[digest("over", item["id"])[0] % 3] + " My work."
        ),
        40,
    ),
    "best_scheme": (
        "several schemes: the first strictly best wins, all zero gives 0",
        _several_schemes,
        lambda item: wrapped(_golds(item)[:1], ("<<zero>>", "<<full>>", "")[digest("best", item["id"])[0] % 3]),
        12,
    ),
    "judge_failure": (
        "a criterion request that fails: the problem dropped; an answer request that fails: wrong",
        lambda item: True,
        lambda item: (
            wrapped(_golds(item), f"{FAIL} My work.")
            if _marked(item)
            else wrapped([f"{FAIL} {g}" for g in _golds(item)])
        ),
        24,
    ),
}


def adversarial_exams(items: list[dict]) -> dict[str, list[dict]]:
    """One exam per class: copies of the release problems it needs, renamed `<class>__<id>`, each
    with its adversarial response under `response`."""
    exams = {}
    for name, (_, wanted, respond, most) in CLASSES.items():
        chosen = sorted((item for item in items if wanted(item)), key=lambda item: digest(name, item["id"]))[:most]
        copies = []
        for item in chosen:
            if name == "unclosed_gold":
                for variant, response in (("answered", wrapped(_golds(item))), ("unanswered", "Nothing boxed.")):
                    copies.append({**item, "id": f"{name}__{item['id']}_{variant}", "response": response})
                continue
            copies.append({**item, "id": f"{name}__{item['id']}", "response": respond(item)})
        for copy in copies:
            copy["source"] = f"X_{name}"
        exams[f"X_{name}"] = copies
    return exams


def build_release(exams: list[str], folder: Path) -> tuple[Path, dict[str, str], dict[str, str], list[dict]]:
    """The release folder both tools read (the shared exams copied, the adversarial exams written),
    the response of every problem, each problem's class, and the shared exams' problems."""
    data = folder / "release" / "data"
    data.mkdir(parents=True)
    # copied, not linked: the fetch stage refuses a link that leads out of its release
    shutil.copytree(RELEASE / "data" / "image_question", data / "image_question")
    items, responses, classes = [], {}, {}
    for exam in exams:
        source = RELEASE / "data" / f"{exam}.json"
        shutil.copy2(source, data / source.name)
        for item in json.loads(source.read_text(encoding="utf-8"))[1:]:
            items.append(item)
            responses[item["id"]], classes[item["id"]] = release_response(item), "release"
    for exam, copies in adversarial_exams(items).items():
        for copy in copies:
            responses[copy["id"]], classes[copy["id"]] = copy.pop("response"), exam[2:]
        (data / f"{exam}.json").write_text(
            json.dumps([{"information": "None."}, *copies], ensure_ascii=False, indent=1), encoding="utf-8"
        )
    return folder / "release", responses, classes, items


# ---------------------------------------------------------------- the judges


def prompt_text(messages: list) -> str:
    """The text of a request as VLMEvalKit would send it: our fence taken out."""
    parts = []
    for message in unfenced(messages):
        content = message.get("content", "")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [part.get("text", "") for part in content if part.get("type") == "text"]
    return "\n".join(parts)


def _between(text: str, start: str, end: str) -> str:
    at = text.find(start)
    if at < 0:
        return ""
    at += len(start)
    stop = text.find(end, at)
    return text[at : stop if stop >= 0 else len(text)]


def stated_points(criterion: str) -> float:
    for pattern in (r"[Aa]ward\s+(?:a\s+total\s+of\s+)?([0-9]*\.?[0-9]+)\s*pt", r"得\s*([0-9]*\.?[0-9]+)\s*分"):
        found = re.search(pattern, criterion)
        if found:
            return float(found.group(1))
    return 1.0


FRACTIONS = (0, 0, 0, 0.5, 0.5, 1, 1, 1, 2, 1)  # 2: an award above the criterion's points
ANSWER_REPLIES = ("[Correct]",) * 8 + ("Correct", "[Correct].", "**[Correct]**", "  [Correct]\n") + ("[Incorrect]",) * 8
ODD_AWARDS = (
    "\\boxed{1/2}",
    "-1",
    "\\boxed{-0.5}",
    "0.125",
    "I give 0.3 of 0.5 points",
    "\\boxed{\\frac{1}{2}}",
    "\\boxed{5}",
)


def _num(value: float) -> str:
    return f"{round(value, 4):g}"


def award_reply(key: bytes, criterion: str, response: str, attempt: int, cap: float | None) -> str:
    """A criterion judge's reply: the award (a share of the criterion's stated points) in one of
    VLMEvalKit's reply forms, or our JSON where `cap` bounds it (our default's schema)."""
    most = stated_points(criterion)
    share = FRACTIONS[key[1] % 10]
    if "<<overflow>>" in response or ("<<overflow-once>>" in response and attempt == 1):
        share = 2
    elif "<<overflow-once>>" in response or "<<full>>" in response:
        share = 1
    elif "<<zero>>" in response:
        share = 0
    awarded = most * share
    if cap is not None:
        return json.dumps({"awarded": min(awarded, cap), "reasoning": "fixed"})
    if "<<odd-awards>>" in response:
        return ODD_AWARDS[key[2] % len(ODD_AWARDS)]
    style = key[2] % 8
    if style <= 4:
        return f"\\boxed{{{_num(awarded)}}}"
    return (
        _num(awarded),
        f"Award: {_num(awarded)} pt (criterion maximum {_num(most)} pt)",
        f"\\boxed{{{_num(awarded)} pt}}",
    )[style - 5]


def responder(mode: str):
    """The fake judge: `prompt` keys every reply on the prompt's whole text, `content` on what is
    asked (see the module's docstring)."""

    def reply(body: dict):
        text = prompt_text(body["messages"])
        if text.strip() == "hello":
            return "Hello!"
        if ANSWER_MARK in text:
            given = _between(text, 'Output sentence: """', '"""\nCorrect answer:')
            if FAIL in given:
                return Fault(500)
            question = _between(text, 'Question: """', '"""\nOutput sentence:')
            key = digest(text) if mode == "prompt" else digest("answer", question.strip(), given.strip())
            return ANSWER_REPLIES[key[0] % 20]
        if text.startswith(CRITERION_MARK):
            response = _between(text, "STUDENT'S SOLUTION:\n", "\n\nGRADING CRITERION:\n")
            if FAIL in response:
                return Fault(500)
            question = _between(text, "PHYSICS PROBLEM:\n", "\n\nSTUDENT'S SOLUTION:\n")
            criterion = re.split(
                r"\n⚠️|\n🔄|\n\nINSTRUCTIONS:", _between(text, "GRADING CRITERION:\n", "\n\nINSTRUCTIONS:")
            )[0]
            attempt = int((re.search(r"This is attempt #(\d+)", text) or [0, 1])[1])
            key = (
                digest(text) if mode == "prompt" else digest("award", question.strip(), criterion.strip(), str(attempt))
            )
            return award_reply(key, criterion, response, attempt, None)
        if OURS_CRITERION_MARK in text:  # our default protocol's criterion judge (content mode)
            response = _between(text, "Student's solution:\n", "\n\nAward points for this criterion")
            if FAIL in response:
                return Fault(500)
            question = _between(text, "\n\nQuestion:\n", "\n\nMarking criterion (worth at most")
            criterion = _between(text, " points):\n", "\n\nStudent's solution:\n")
            cap = float(re.search(r"worth at most ([0-9.]+) points", text).group(1))
            key = digest("award", question.strip(), criterion.strip(), "1")
            return award_reply(key, criterion, response, 1, cap)
        if OURS_ANSWER_MARK in text:  # our default protocol's answer judge (content mode)
            given = _between(text, "Student's final answer for this part: ", "\n\nStudent's full solution")
            if FAIL in given:
                return Fault(500)
            question = _between(text, "\n\nQuestion:\n", "\n\nOfficial answer for this part:")
            verdict = ANSWER_REPLIES[digest("answer", question.strip(), given.strip())[0] % 20].strip()
            return json.dumps({"equivalent": verdict in ("[Correct]", "Correct", "[Correct].", "**[Correct]**")})
        raise ValueError(f"the fake judge does not know this request: {text[:200]!r}")

    return reply


# ---------------------------------------------------------------- our side


def run_stage(script: str, overrides: list[str], log: Path) -> None:
    with log.open("w") as sink:
        done = subprocess.run(
            [sys.executable, f"stages/{script}.py", *overrides], cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT
        )
    if done.returncode:
        sys.exit(f"stages/{script}.py failed ({done.returncode}):\n{log.read_text()[-3000:]}")


def prepare_ours(folder: Path, source: Path, responses: dict, suites: list[str]) -> list[str]:
    """Fetch, render the suites and replay the responses: what every judge run shares."""
    plan = folder / "params.yaml"
    plan.write_text(
        yaml.safe_dump(
            {
                "models": ["demo"],
                "judges": ["gpt-4o"],
                "pipelines": {
                    "hipho": {"benchmarks": {"hipho": str(source)}, "suites": dict.fromkeys(suites, "hipho")}
                },
            }
        ),
        encoding="utf-8",
    )
    replay = folder / "responses.jsonl"
    replay.write_text(
        "".join(json.dumps({"id": i, "response": r}, ensure_ascii=False) + "\n" for i, r in responses.items()),
        encoding="utf-8",
    )
    common = [
        f"paths.outputs={folder / 'outputs'}",
        f"paths.request_cache={folder / 'cache.sqlite'}",
        f"paths.plan={plan}",
    ]
    run_stage("fetch", ["benchmark=hipho", f"benchmark.source.path={source}", *common], folder / "fetch.log")
    for suite in suites:
        run_stage("render", [f"suite={suite}", "cell.benchmark=hipho", *common], folder / f"render-{suite}.log")
        run_stage(
            "generate",
            ["model=demo", f"cell.suite={suite}", f"model.path={replay}", *common],
            folder / f"generate-{suite}.log",
        )
    return common


def run_judge(server: FakeOpenAI, folder: Path, suite: str, common: list[str], tag: str) -> dict[str, Judgment]:
    endpoint = [
        f"base_url={server.base_url}",
        "api_key_env=null",
        "concurrency=32",
        "max_retries=1",
        "max_consecutive_failures=100000",
        "probe=false",
    ]
    cache = folder / f"cache-{tag}.sqlite"
    outputs = folder / f"outputs-{tag}"
    if not outputs.exists():
        shutil.copytree(folder / "outputs", outputs, symlinks=True)
    overrides = [o for o in common if not o.startswith(("paths.request_cache", "paths.outputs"))]
    run_stage(
        "judge",
        [
            "judge=gpt-4o",
            f"cell.suite={suite}",
            "cell.model=demo",
            "min_coverage=0",
            "judge.check_cpu_seconds=60",  # VLMEvalKit has no limit: no check of these responses nears it
            *(f"judge.judges.gpt-4o.{o}" for o in endpoint),
            f"paths.outputs={outputs}",
            f"paths.request_cache={cache}",
            *overrides,
        ],
        folder / f"judge-{tag}.log",
    )
    return {j.id: j for j in read_jsonl(Layout(outputs).judgments("hipho", suite, "demo", "gpt-4o"), Judgment)}


# ---------------------------------------------------------------- comparing


def cutoffs() -> dict:
    config = yaml.safe_load((ROOT / "conf" / "benchmark" / "hipho.yaml").read_text(encoding="utf-8"))
    return {exam: values for exam, values in config["exams"].items()}


def cumulative(values: list[float]) -> float:
    """VLMEvalKit's exam total: rounded to 2 decimals after each addition."""
    total = 0.0
    for value in values:
        total = round(total + value, 2)
    return total


def exam_rows(theirs: dict, ours: dict[str, Judgment], classes: dict) -> dict:
    """Per exam: (ours total, ours max, VLMEvalKit total, VLMEvalKit max, problems, equal problems)."""
    rows = {}
    for exam, result in theirs["exams"].items():
        ids = [i for i, problem in theirs["problems"].items() if problem["exam"] == exam]
        scored = [ours[i] for i in ids if i in ours and ours[i].status == "scored"]
        total = cumulative([j.points for j in scored])
        most = round(sum(j.max_points for j in scored), 2)
        equal = sum(same(theirs["problems"][i], ours.get(i)) for i in ids)
        rows[exam] = (
            total,
            most,
            result["results"]["total_score"],
            result["results"]["max_possible_score"],
            len(ids),
            equal,
        )
    return rows


def same(theirs: dict, ours: Judgment | None) -> bool:
    if ours is None:
        return False
    if not theirs["scored"]:
        return ours.status == "judge_error"
    return ours.status == "scored" and abs(ours.points - theirs["final"]) <= 1e-9


def agreement(title: str, theirs: dict, ours: dict[str, Judgment], classes: dict, medals: dict) -> bool:
    print(f"\n{title}")
    print(f"{'exam':<22}{'problems':>9}{'equal':>7}  {'ours: total / max':<22}{'VLMEvalKit: total / max':<26}medals")
    agree = True
    for exam, (total, most, their_total, their_most, count, equal) in exam_rows(theirs, ours, classes).items():
        cut = medals.get(exam, {})
        ours_medal, their_medal = medal(total, cut) or "-", medal(their_total, cut) or "-"
        ok = (
            equal == count
            and abs(total - their_total) < 1e-9
            and abs(most - their_most) < 1e-9
            and ours_medal == their_medal
        )
        agree &= ok
        print(
            f"{exam:<22}{count:>9}{equal:>7}  {f'{total:g} / {most:g}':<22}{f'{their_total:g} / {their_most:g}':<26}"
            f"{ours_medal} / {their_medal}{'' if ok else '   DIFFERENT'}"
        )
    per_class: dict = defaultdict(lambda: [0, 0, 0])
    for problem_id, problem in theirs["problems"].items():
        counted = per_class[classes[problem_id]]
        counted[0] += 1
        counted[1] += same(problem, ours.get(problem_id))
        counted[2] += not problem["scored"]
    print(f"{'class':<18}{'problems':>9}{'equal':>7}{'dropped by VLMEvalKit':>23}")
    for name, (count, equal, dropped) in sorted(per_class.items(), key=lambda item: item[0] != "release"):
        print(f"{name:<18}{count:>9}{equal:>7}{dropped:>23}")
    different = [i for i, p in theirs["problems"].items() if not same(p, ours.get(i))]
    for problem_id in different[:10]:
        ours_one = ours.get(problem_id)
        print(
            f"  differs: {problem_id}: VLMEvalKit {theirs['problems'][problem_id]}, ours "
            f"{None if ours_one is None else (ours_one.status, ours_one.points, ours_one.parts, ours_one.detail[:200])}"
        )
    return agree and not different


def cause(theirs: dict, ours: Judgment, response: str) -> str:
    """Which departure changed a problem's score: VLMEvalKit dropped it; its boxes were read
    otherwise (VLMEvalKit's last boxes of the whole response against ours of `<answer>`); the same
    boxes checked otherwise (rules and answer judge); or the criterion judge's awards."""
    if not theirs["scored"]:
        return "dropped"
    if ours.status != "scored":
        return "ours unscored"
    answer, step = ours.parts.get("answer_points") or 0.0, ours.parts.get("step_points") or 0.0
    their_answer, their_step = float(theirs["answer_level"]), float(theirs["step_level"])
    if abs(answer - their_answer) > 1e-9:
        read = [a or "" for a in slot_answers(prediction(response, {}), len(ours.extracted))]
        return "boxes read" if tuple(read) != tuple(ours.extracted) else "answer check"
    return "step level" if abs(step - their_step) > 1e-9 else "max"


CAUSES = ("boxes read", "answer check", "step level", "dropped")


def measured(theirs: dict, ours: dict[str, Judgment], medals: dict, responses: dict) -> None:
    """Our default protocol against VLMEvalKit on the shared exams (the content judge): per exam,
    the problems whose score changed and the points, each change put down to its first cause."""
    print("\nour default protocol (olympiad_eval) against VLMEvalKit, shared exams, content judge")
    print(
        f"{'exam':<20}{'problems':>9}{'changed':>8}{'ours':>9}{'VLMEvalKit':>11}{'diff':>8}  "
        + "".join(f"{name:>16}" for name in CAUSES)
        + "  medals (ours / VLMEvalKit)"
    )
    every: dict = defaultdict(lambda: [0, 0.0])
    for exam, result in theirs["exams"].items():
        if exam.startswith("X_"):
            continue
        ids = [i for i, problem in theirs["problems"].items() if problem["exam"] == exam]
        by_cause: dict = defaultdict(lambda: [0, 0.0])
        for i in ids:
            problem, judgment = theirs["problems"][i], ours.get(i)
            theirs_points = float(problem["final"]) if problem["scored"] else None
            ours_points = judgment.points if judgment is not None and judgment.status == "scored" else None
            if theirs_points is not None and ours_points is not None and abs(theirs_points - ours_points) <= 1e-9:
                continue
            why = cause(problem, judgment, responses[i]) if judgment is not None else "ours unscored"
            delta = (ours_points or 0.0) - (theirs_points or 0.0)
            for counted in (by_cause[why], every[why]):
                counted[0] += 1
                counted[1] += delta
        total = float(sum((Fraction(str(ours[i].points)) for i in ids if ours[i].status == "scored"), Fraction(0)))
        their_total = result["results"]["total_score"]
        cut = medals.get(exam, {})
        cells = "".join(f"{f'{by_cause[name][0]} ({by_cause[name][1]:+.2f})':>16}" for name in CAUSES)
        print(
            f"{exam:<20}{len(ids):>9}{sum(c[0] for c in by_cause.values()):>8}{total:>9.2f}{their_total:>11.2f}"
            f"{total - their_total:>+8.2f}  {cells}  {medal(total, cut) or '-'} / {medal(their_total, cut) or '-'}"
        )
    print(
        "changed problems by cause, all shared exams: "
        + ", ".join(f"{k} {n} ({p:+.2f} points)" for k, (n, p) in every.items())
    )
    print("(dropped: the points VLMEvalKit leaves out of its total; its maximum drops too)")


def prompts_sent(bodies: list[dict], marks: tuple[str, ...]) -> set[str]:
    texts = (prompt_text(body["messages"]) for body in bodies)
    return {text for text in texts if any(mark in text for mark in marks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vlmevalkit", type=Path, required=True, help=f"a checkout of VLMEvalKit at {PINNED}")
    parser.add_argument("--python", help="an interpreter with VLMEvalKit's HiPhO dependencies (else --venv)")
    parser.add_argument("--venv", type=Path, default=VENV, help="where to make VLMEvalKit's environment")
    parser.add_argument("--exams", help="comma-separated shared exams; all of ../shared/data/hipho by default")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (outputs, logs)")
    allow_skip(parser)
    args = parser.parse_args()
    if not (RELEASE / "data").is_dir():
        skipped(f"the HiPhO release is not at {RELEASE}", args.allow_skip)
    if not args.vlmevalkit.is_dir():
        skipped(f"no VLMEvalKit checkout at {args.vlmevalkit}", args.allow_skip)
    check_checkout(args.vlmevalkit)
    python = interpreter(args)
    exams = args.exams.split(",") if args.exams else sorted(p.stem for p in (RELEASE / "data").glob("*.json"))
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="vlmevalkit-agreement-"))
    source, responses, classes, _ = build_release(exams, folder)
    responses = {i: r for i, r in responses.items() if r.strip()}  # an empty response is a failed generation
    replay = folder / "theirs-responses.jsonl"
    replay.write_text("".join(json.dumps({"id": i, "response": r}) + "\n" for i, r in responses.items()))
    common = prepare_ours(folder, source, responses, ["hipho_vlmevalkit", "hipho"])
    medals = cutoffs()
    agree = True
    timings = {}
    for mode in ("prompt", "content"):
        with FakeOpenAI(responder(mode)) as server:
            start = time.perf_counter()
            theirs = run_vlmevalkit(python, args.vlmevalkit, source, replay, server.base_url, folder / f"theirs-{mode}")
            timings[f"VLMEvalKit ({mode} judge)"] = time.perf_counter() - start
            sent_by_them = len(server.requests)
            start = time.perf_counter()
            ours = run_judge(server, folder, "hipho_vlmevalkit", common, f"vlmevalkit-{mode}")
            timings[f"ours, vlmevalkit ({mode} judge)"] = time.perf_counter() - start
            marks = (ANSWER_MARK, CRITERION_MARK)
            only_ours = prompts_sent(server.requests[sent_by_them:], marks) - prompts_sent(
                server.requests[:sent_by_them], marks
            )
            # VLMEvalKit asks a problem's criteria one after another and stops at a failed request (the
            # problem dropped); ours asks them all at once: those criteria are the one expected difference
            stopped = {text for text in only_ours if text.startswith(CRITERION_MARK) and FAIL in text}
            verbatim = not only_ours - stopped
            if only_ours:
                (folder / f"prompts-only-ours-{mode}.txt").write_text("\n\n=====\n\n".join(sorted(only_ours)))
            print(
                f"judge prompts ours sent that VLMEvalKit did not: {len(only_ours - stopped)} "
                f"(besides {len(stopped)} criteria of problems whose criterion request failed, which VLMEvalKit "
                "stops asking at the failure)"
            )
            agree &= agreement(
                f"protocol vlmevalkit against VLMEvalKit {PINNED[:7]}, {mode} judge "
                f"({len(theirs['problems'])} problems)",
                theirs,
                ours,
                classes,
                medals,
            )
            print(f"every other judge prompt ours sent is one VLMEvalKit sent: {verbatim}")
            agree &= verbatim
            if mode == "content":
                start = time.perf_counter()
                default = run_judge(server, folder, "hipho", common, "default")
                timings["ours, olympiad_eval (content judge)"] = time.perf_counter() - start
                measured(theirs, default, medals, responses)
    print("\ntime: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in timings.items()))
    print(f"whole bench {time.perf_counter() - started:.0f} s; {'AGREE' if agree else 'DISAGREE'}")
    if args.keep:
        print(f"outputs and logs: {folder}")
    else:
        shutil.rmtree(folder)
    print(f"agreement: {'every problem, exam total, medal and prompt' if agree else 'NOT every problem (above)'}")
    sys.exit(0 if agree else 1)


if __name__ == "__main__":
    main()
