"""Warm-start SFT data: ``airline-gym warm-start`` writes the gold agent's dialogues with the
scripted customer as JSONL that ``datasets`` loads and TRL's SFT data path renders and trains on
(a tiny Qwen3 with a tokenizer built here, TRL's own Qwen3 chat template)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from extras import require

from tests.cli_runner import cli, one_line_error
from tests.users.intent_tasks import TASKS, write_tasks

require("datasets", "trl", "transformers")


@pytest.fixture(scope="module")
def sft_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("warm")
    tasks = write_tasks(folder / "tasks.json")
    out = folder / "sft.jsonl"
    done = cli("warm-start", "--tasks", tasks, "--out", out)
    assert done.returncode == 0, done.stderr
    assert f"wrote {len(TASKS)} of {len(TASKS)} conversations" in done.stdout
    return out


def load(path: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    import datasets

    return datasets.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache")
    )


def test_rows_are_policy_following_conversations(sft_file: Path, tmp_path: Path) -> None:
    ds = load(sft_file, tmp_path)
    assert ds.num_rows == len(TASKS) and set(ds["reward"]) == {1.0}
    for row in ds:
        roles = [m["role"] for m in row["messages"]]
        assert (roles[0] == "system" and set(roles) == {"system", "assistant", "user", "tool"}) or (
            row["task_id"] == "insurance" and set(roles) == {"system", "assistant", "user"}
        )
        names = {t["function"]["name"] for t in row["tools"]}
        assert len(names) == 14 and "done" not in names  # the leaderboard's tools
        for i, message in enumerate(row["messages"]):
            for call in message.get("tool_calls") or []:
                assert isinstance(call["function"]["arguments"], dict)  # as templates expect
                if call["function"]["name"] in (
                    "cancel_reservation",
                    "update_reservation_baggages",
                ):
                    assert "Shall I proceed?" in row["messages"][i - 2]["content"]
                    assert row["messages"][i - 1]["content"].startswith("Yes")
                    assert row["messages"][i + 1]["role"] == "tool"
        assert "###STOP###" in row["messages"][-1]["content"]


@pytest.fixture(scope="module")
def tokenizer(sft_file: Path):  # type: ignore[no-untyped-def]
    """A byte-level BPE trained on the file, with TRL's Qwen3 chat template."""
    from tiny_policy import build_tokenizer

    return build_tokenizer([line for line in sft_file.read_text().splitlines()])


def test_trl_renders_every_row_with_its_tools(sft_file: Path, tmp_path: Path, tokenizer) -> None:  # type: ignore[no-untyped-def]
    from trl.data_utils import apply_chat_template, is_conversational

    ds = load(sft_file, tmp_path)
    for row in ds:
        assert is_conversational(row)
        text = apply_chat_template({"messages": row["messages"]}, tokenizer, tools=row["tools"])
        rendered = text["text"]
        assert '"name": "cancel_reservation"' in rendered  # the tool schemas
        assert rendered.count('<tool_call>\n{"name": "') == sum(
            len(m.get("tool_calls") or []) for m in row["messages"]
        )
        assert "Shall I proceed?" in rendered or row["task_id"] == "insurance"


@pytest.mark.long  # ~20 s: a real SFTTrainer step on CPU
def test_sft_trainer_trains_a_step_on_the_file(sft_file: Path, tmp_path: Path, tokenizer) -> None:  # type: ignore[no-untyped-def]
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from trl import SFTConfig, SFTTrainer

    ds = load(sft_file, tmp_path)
    config = Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, head_dim=16,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    args = SFTConfig(
        output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=2,
        max_length=None, report_to=[], use_cpu=True, save_strategy="no", logging_steps=1,
    )  # fmt: skip
    trainer = SFTTrainer(
        model=Qwen3ForCausalLM(config), args=args, train_dataset=ds, processing_class=tokenizer
    )
    first = trainer.train_dataset[0]
    assert "<tool_call>" in tokenizer.decode(first["input_ids"])
    trainer.train()
    losses = [log["loss"] for log in trainer.state.log_history if "loss" in log]
    assert losses and all(math.isfinite(x) and x > 0 for x in losses)


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    assert "min-reward" in one_line_error(cli("warm-start", "--out", out, "--min-reward", "nan"))
    assert "999" in one_line_error(cli("warm-start", "--out", out, "--task-ids", "999"))
    assert not out.exists()
