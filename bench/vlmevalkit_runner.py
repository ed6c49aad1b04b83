"""VLMEvalKit's own HiPhO scoring on given responses, run by `bench/vlmevalkit_agreement.py` inside
VLMEvalKit's environment (never imported by the project: it needs VLMEvalKit's own dependencies).

    <python> bench/vlmevalkit_runner.py '<json args>'

args: `vlmevalkit` (a checkout of open-compass/VLMEvalKit), `release` (a HiPhO release folder,
data/<EXAM>.json), `responses` (JSONL of {"id", "response"}), `judge_url` (an OpenAI-compatible
base URL), `out` (the JSON this writes), `work` (a folder for VLMEvalKit's files), `nproc`.

For each exam file it does what VLMEvalKit's `run.py` does with HiPhO after inference: the rows as
the Hub release holds them (list fields as JSON text, the exam's constants sheet on every row) with
the response as `prediction`, written by VLMEvalKit's own `dump` to the .xlsx its inference writes
(so the same round trip applies), then `HiPhODataset.evaluate(file, **judge_kwargs)` with the judge
arguments `run.py` passes (nproc, retry 6, timeout 600, the judge model at `judge_url`). It writes
VLMEvalKit's result dict per exam and its per-problem checkpoint (the `.pkl` `evaluate` keeps).

What it does not run: the package `__init__` files of `vlmeval`, `vlmeval.dataset` and `vlmeval.api`,
which import every dataset and API wrapper (torch among them). Each is replaced by an empty package
whose path is the real folder, so every module HiPhO's scoring imports is VLMEvalKit's own file;
`build_judge` then builds VLMEvalKit's own `OpenAIWrapper`. `HiPhODataset.__init__`, which downloads
the Hub release, is skipped (`__new__` and the three attributes `evaluate` reads). `evaluate` raises
after a dropped problem (its `_save_results`), after writing its score file: the score file is read.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
import types
from pathlib import Path


def _empty_package(name: str, folder: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = [str(folder)]
    module.__package__ = name
    sys.modules[name] = module
    return module


class _NotLoaded:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} is not loaded by this runner (it needs torch)")


def load(root: Path):
    """VLMEvalKit's hipho module and helpers, from the checkout at `root`."""
    sys.path.insert(0, str(root))
    vlmeval = _empty_package("vlmeval", root / "vlmeval")
    vlmeval.dataset = _empty_package("vlmeval.dataset", root / "vlmeval" / "dataset")
    vlmeval.api = api = _empty_package("vlmeval.api", root / "vlmeval" / "api")
    gpt = importlib.import_module("vlmeval.api.gpt")
    api.OpenAIWrapper, api.GPT4V = gpt.OpenAIWrapper, gpt.GPT4V
    # the other names build_judge imports: only built for judge names this runner never passes
    api.HFChatModel = type("HFChatModel", (_NotLoaded,), {})
    api.SiliconFlowAPI = type("SiliconFlowAPI", (_NotLoaded,), {})
    hipho = importlib.import_module("vlmeval.dataset.hipho")
    smp = importlib.import_module("vlmeval.smp")
    return hipho, smp


def as_cell(value):
    """A list field as the Hub release stores it: JSON text."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def main() -> None:
    args = json.loads(sys.argv[1])
    hipho, smp = load(Path(args["vlmevalkit"]))
    responses = {}
    for line in Path(args["responses"]).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            responses[row["id"]] = row["response"]
    import pandas as pd

    work = Path(args["work"])
    out = {"exams": {}, "problems": {}}
    for path in sorted((Path(args["release"]) / "data").glob("*.json")):
        items = json.loads(path.read_text(encoding="utf-8"))
        sheet, problems = items[0].get("information", ""), [item for item in items[1:] if "id" in item]
        if not any(problem["id"] in responses for problem in problems):
            continue
        name = path.stem.replace("=", "_")  # VLMEvalKit's split names: F_MA_2024
        rows = [
            {
                "index": index,
                "id": problem["id"],
                "context": problem.get("context", ""),
                "question": problem.get("question", ""),
                "marking": as_cell(problem.get("marking")),
                "answer": as_cell(problem.get("answer")),
                "answer_type": as_cell(problem.get("answer_type")),
                "unit": as_cell(problem.get("unit")),
                "points": as_cell(problem.get("points")),
                "modality": problem.get("modality", ""),
                "field": problem.get("field", ""),
                "source": problem.get("source", path.stem),
                "image_question": as_cell(problem.get("image_question")),
                "information": sheet,
                "prediction": responses.get(problem["id"], ""),
            }
            for index, problem in enumerate(problems)
        ]
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        predictions = str(folder / f"MODEL_{name}.xlsx")
        smp.dump(pd.DataFrame(rows), predictions)  # as VLMEvalKit's inference writes it
        dataset = hipho.HiPhODataset.__new__(hipho.HiPhODataset)
        dataset.dataset_name = name
        dataset.language = hipho.HiPhODataset.DATASET_LANGUAGES.get(name, "en")
        dataset.is_all_mode = False
        judge = {
            "nproc": args.get("nproc", 32),
            "verbose": False,
            "retry": 6,
            "timeout": 600,
            "model": "fake-judge",
            "api_base": args["judge_url"].rstrip("/") + "/chat/completions",
            "key": "sk-none",
        }
        raised = None
        try:
            results = dataset.evaluate(predictions, **judge)
        except Exception as error:  # `_save_results` after a dropped problem: the score file is written
            raised = f"{type(error).__name__}: {error}"
            results = smp.load(smp.get_intermediate_file_path(predictions, "_fake-judge_score", "json"))
        checkpoint = smp.load(smp.get_intermediate_file_path(predictions, "_fake-judge", "pkl"))
        out["exams"][path.stem] = {"results": results, "evaluate_raised": raised}
        for index, problem in enumerate(problems):
            kept = checkpoint.get(index)
            scored = isinstance(kept, dict) and kept.get("success", False)
            out["problems"][problem["id"]] = {
                "exam": path.stem,
                "scored": bool(scored),
                "final": kept["final_score"] if scored else None,
                "answer_level": kept["coarse_grained_score"] if scored else None,
                "step_level": kept["fine_grained_score"] if scored else None,
                "max": kept["item_total_points"] if scored else None,
            }
    Path(args["out"]).write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
