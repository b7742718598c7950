"""SFT rows that the chat templates the docs name render right: Qwen2.5, Qwen3 and Llama 3.1, the
real templates TRL ships (``trl/chat_templates``), on ``warm-start`` rows of every protocol; and
the loss on the agent's turns only (TRL's ``assistant_only_loss``), checked token by token.

Tool-call arguments are JSON objects in the rows: Qwen2.5's and Llama 3.1's templates write
``arguments | tojson``, which double-encodes a JSON string (``"arguments": "{\\"reservation_id\\":
...}"``) as the rows once had it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from extras import require

from airline_gym.env.protocols import PROTOCOLS
from tests.cli_runner import cli
from tests.users.intent_tasks import write_tasks

require("datasets", "trl", "transformers")

TEMPLATES = ("qwen2_5", "qwen3", "llama3_1")


def template(name: str) -> str:
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text()


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    folder = tmp_path_factory.mktemp("sft")
    tasks = write_tasks(folder / "tasks.json")
    out: dict[str, list[dict]] = {}
    for protocol in PROTOCOLS:
        path = folder / f"{protocol}.jsonl"
        done = cli("warm-start", "--tasks", tasks, "--protocol", protocol, "--out", path)
        assert done.returncode == 0, done.stderr
        out[protocol] = [json.loads(line) for line in path.read_text().splitlines()]
    return out


@pytest.fixture(scope="module")
def tokenizer(rows: dict[str, list[dict]]):  # type: ignore[no-untyped-def]
    from airline_gym.testing.tiny_model import build_tokenizer

    return build_tokenizer(json.dumps(r) for by in rows.values() for r in by)


def render(tokenizer, row: dict, name: str, **kwargs) -> str:  # type: ignore[no-untyped-def]
    return tokenizer.apply_chat_template(
        row["messages"], tools=row["tools"], chat_template=template(name), tokenize=False, **kwargs
    )


@pytest.mark.parametrize("name", TEMPLATES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_tool_call_renders_its_arguments_once_encoded(
    rows: dict[str, list[dict]], tokenizer, protocol: str, name: str
) -> None:  # type: ignore[no-untyped-def]
    kwargs = {"tools_in_user_message": False} if name == "llama3_1" else {}
    assert any(m.get("tool_calls") for row in rows[protocol] for m in row["messages"])
    for row in rows[protocol]:
        text = render(tokenizer, row, name, **kwargs)
        for call in [c for m in row["messages"] for c in m.get("tool_calls") or []]:
            arguments = call["function"]["arguments"]
            assert isinstance(arguments, dict)
            assert json.dumps(arguments, ensure_ascii=False) in text  # an object, once
        assert '"arguments": "{' not in text and '"parameters": "{' not in text  # never a string
        for tool in row["tools"]:  # the schemas reach the model
            assert f'"name": "{tool["function"]["name"]}"' in text


def test_a_string_argument_would_reach_the_model_double_encoded(rows, tokenizer) -> None:  # type: ignore[no-untyped-def]
    """What the rows once held, on Qwen2.5's template: the failure the object form avoids."""
    row = json.loads(json.dumps(rows["leaderboard"][0]))
    for message in row["messages"]:
        for call in message.get("tool_calls") or []:
            call["function"]["arguments"] = json.dumps(call["function"]["arguments"])
    assert '"arguments": "{\\"' in render(tokenizer, row, "qwen2_5")


def test_llama_3_1_needs_its_tools_in_the_system_prompt_for_these_rows(rows, tokenizer) -> None:  # type: ignore[no-untyped-def]
    """Llama 3.1's template puts the tools into the first message after the system prompt, and
    these rows (as tau2's conversations) start with the agent's greeting: by default it is
    rendered as a user turn. ``tools_in_user_message=False`` keeps it the agent's."""
    row = rows["leaderboard"][0]
    greeting = row["messages"][1]["content"]
    agent = "<|start_header_id|>assistant<|end_header_id|>\n\n"
    assert f"{agent}{greeting}" in render(tokenizer, row, "llama3_1", tools_in_user_message=False)
    assert f"{agent}{greeting}" not in render(tokenizer, row, "llama3_1")


@pytest.mark.parametrize("protocol", ["leaderboard", "tool-reply"])
def test_assistant_only_loss_masks_everything_but_the_agents_turns(
    rows: dict[str, list[dict]], tokenizer, protocol: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """TRL's ``SFTConfig(assistant_only_loss=True)`` (the docs' recipe) on the rows: the tokens
    trained on are the agent's turns (its text and tool calls), none of the system prompt, the
    customer's turns or the tool results."""
    from trl import SFTConfig, SFTTrainer

    from airline_gym.harness.export import load_jsonl
    from airline_gym.testing.tiny_model import tiny_qwen3

    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[protocol]))
    data = load_jsonl(path)  # as the docs load it: each row's arguments its own object
    assert [json.dumps(m) for m in data[0]["messages"]] == [
        json.dumps(m) for m in rows[protocol][0]["messages"]
    ]
    args = SFTConfig(
        output_dir=str(tmp_path), assistant_only_loss=True, max_length=None, report_to=[],
        use_cpu=True, save_strategy="no", max_steps=1, per_device_train_batch_size=1,
    )  # fmt: skip
    trainer = SFTTrainer(
        model=tiny_qwen3(tokenizer), args=args, train_dataset=data, processing_class=tokenizer
    )
    for example, row in zip(trainer.train_dataset, rows[protocol], strict=True):
        ids = example["input_ids"]
        mask = [label != -100 for label in example["labels"]]  # TRL folds the mask into labels
        trained = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
        other = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if not m])
        for message in row["messages"]:
            if message["role"] == "assistant":
                for call in message.get("tool_calls") or []:
                    assert json.dumps(call["function"]["arguments"]) in trained
                if message["content"]:
                    assert message["content"] in trained
            elif message["content"]:  # system prompt, customer turns, tool results
                assert message["content"] not in trained
                assert message["content"] in other
        assert 0 < sum(mask) < len(mask) / 4  # the agent's share of a row is small


def test_a_dataset_that_infers_its_types_gives_calls_each_others_keys(rows) -> None:  # type: ignore[no-untyped-def]
    """Why ``load_jsonl`` types messages as ``Json``: inferred, the calls of these rows share one
    struct and each gets the others' arguments as nulls, which a template renders as passed."""
    from datasets import Dataset

    inferred = Dataset.from_list([{"messages": r["messages"]} for r in rows["leaderboard"]])
    arguments = [
        c["function"]["arguments"]
        for row in inferred
        for m in row["messages"]
        for c in m.get("tool_calls") or []
    ]
    assert any(None in a.values() for a in arguments)
