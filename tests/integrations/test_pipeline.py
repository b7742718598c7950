"""The training pipeline, end to end on CPU, as ``examples/train_pipeline.py`` runs it: generate,
warm-start under TRL's protocol, TRL's SFTTrainer, GRPOTrainer from the SFT checkpoint with the
env as its environment factory, ``transformers serve`` of the GRPO checkpoint on 127.0.0.1, then
``airline-gym eval --protocol tool-reply`` against it and ``report``; a tiny Qwen3 built locally
(no Hub). It checks the plumbing, not the score: each stage reads the last one's output, and the
system prompt and tools the model saw in SFT and in GRPO are the bytes eval sends (recorded by a
proxy between eval and the server)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from extras import require

from airline_gym.testing.recording_proxy import RecordingProxy

require("trl", "transformers", "datasets")
pytestmark = pytest.mark.long  # ~2 min: two trainers, a model server and an eval on CPU

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "train_pipeline.py"


def recipe() -> Any:
    spec = importlib.util.spec_from_file_location("train_pipeline", RECIPE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generate_to_grpo_to_eval_joins_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers import PreTrainedTokenizerBase
    from transformers.utils import get_json_schema

    pipeline = recipe()
    args = pipeline.parse_args(
        ["--out", str(tmp_path), "--tasks", "20", "--sft-steps", "2", "--grpo-steps", "1",
         "--max-completion-length", "16", "--eval-max-steps", "4", "--eval-max-tokens", "16"]
    )  # fmt: skip
    tasks, rows_path = tmp_path / "tasks.json", tmp_path / "sft.jsonl"
    sft, grpo, results = tmp_path / "sft", tmp_path / "grpo", tmp_path / "eval.json"

    # 1-2: the rows are the training split's tasks, under TRL's protocol
    pipeline.generate(tasks, args.tasks, args.seed)
    pipeline.warm_start(tasks, rows_path)
    split = {t["id"]: t["airline_gym"]["split"] for t in json.loads(tasks.read_text())}
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert rows and {split[r["task_id"]] for r in rows} == {"train"}
    assert "test" in split.values()

    # 3: SFT on the rows
    assert pipeline.train_sft(args, rows_path, sft).startswith("loss ")
    assert (sft / "config.json").is_file() and (sft / "tokenizer.json").is_file()

    # 4: GRPO from the SFT checkpoint; what TRL renders for the model is recorded
    rendered: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    original = PreTrainedTokenizerBase.apply_chat_template

    def recording(self: Any, conversation: Any, *a: Any, tools: Any = None, **k: Any) -> Any:
        if tools and conversation and isinstance(conversation[0], list):
            schemas = [t if isinstance(t, dict) else get_json_schema(t) for t in tools]
            rendered.append((conversation[0], schemas))
        return original(self, conversation, *a, tools=tools, **k)

    monkeypatch.setattr(PreTrainedTokenizerBase, "apply_chat_template", recording)
    assert pipeline.train_grpo(args, tasks, sft, grpo).startswith("mean reward per step")
    monkeypatch.undo()
    assert rendered, "GRPOTrainer rendered no prompt with tools"
    assert (grpo / "tokenizer.json").read_bytes() == (sft / "tokenizer.json").read_bytes()

    # 5-6: the GRPO checkpoint behind transformers serve, eval through a recording proxy
    with (
        pipeline.serve(grpo, "cpu", tmp_path / "server.log") as api_base,
        RecordingProxy(api_base) as proxy,
    ):
        figure = pipeline.evaluate(args, tasks, str(grpo), proxy.base_url, results)
    assert figure.startswith("pass^1 ") and results.with_suffix(".html").is_file()
    run = json.loads(results.read_text())
    assert run["info"]["protocol"] == "tool-reply" and run["info"]["task_set"] == str(tasks)
    assert run["info"]["leaderboard_comparable"] is False
    assert {split[s["task_id"]] for s in run["simulations"]} == {"test"}
    assert all(s["termination_reason"] != "agent_error" for s in run["simulations"])
    assert proxy.requests and all(r["model"] == str(grpo) for r in proxy.requests)

    # the same bytes: system prompt and tools in SFT rows, in GRPO's prompts, in eval's requests
    sent = proxy.requests[0]
    system = sent["messages"][0]["content"]
    tools = json.dumps(sent["tools"])
    for row in rows:
        assert row["messages"][0]["content"] == system and json.dumps(row["tools"]) == tools
    for conversation, schemas in rendered:
        assert conversation[0]["content"] == system and json.dumps(schemas) == tools
    # and the conversation opens as it did in training: the greeting, then the customer
    assert [m["role"] for m in sent["messages"][:3]] == [m["role"] for m in rendered[0][0][:3]]
