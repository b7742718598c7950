"""The verl agent loop with the real verl, in verl's agent-loop CPU test pattern: the loop is built
as verl's worker builds it, its server manager is a scripted async server that returns token ids
(and logprobs), and the tokenizer is a small byte-level BPE trained here (no hub download) with a
ChatML template that renders tools, tool calls and tool results.

Run by test_verl.py with the Python of the verl venv (verl 0.9 pins transformers < 5.11, the
``trl`` extra needs >= 5.24): ``python -m pytest tests/integrations/verl_cases.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Collected for doctests by the main suite too (--doctest-modules), where verl is absent: the real
# run is test_verl.py's, in verl's venv, which counts these cases passed.
pytest.importorskip("verl", reason="verl lives in a venv of its own (see test_verl.py)")

from omegaconf import OmegaConf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

sys.path.insert(0, str(Path(__file__).parent))
from readme_examples import run_example

from airline_gym.agents import ScriptedAgent
from airline_gym.domain.tasks import load_task_set
from airline_gym.env import AirlineEnv
from airline_gym.harness.runner import run_episode
from airline_gym.integrations import verl as adapter
from airline_gym.integrations.tool_text import parse_reply
from airline_gym.testing.llama_server import TOOLS_CHAT_TEMPLATE

ROOT = Path(__file__).resolve().parents[2]
END = "<|im_end|>"
RESPONSE_LENGTH = 60_000


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level BPE (any text round-trips) trained on the env's prompt and tools."""
    _, info = AirlineEnv(user="scripted").reset(options={"task": "17"})
    corpus = [info["system_prompt"], json.dumps(info["tools"]), TOOLS_CHAT_TEMPLATE]
    model = Tokenizer(models.BPE())
    model.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2000,
        special_tokens=["<|im_start|>", END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    model.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=model, eos_token=END, pad_token=END)
    tokenizer.add_tokens(["<tool_call>", "</tool_call>"])  # not special: decoding keeps them
    tokenizer.chat_template = TOOLS_CHAT_TEMPLATE
    return tokenizer


class ScriptedServer:
    """verl's server manager, scripted: each request's next reply, as token ids and logprobs."""

    def __init__(self, tokenizer: Any, replies: dict[str, list[str]]) -> None:
        self.tokenizer = tokenizer
        self.replies = replies  # per task id, found from the prompt's customer opening
        self.openers = {opening(t): t for t in replies}
        self.sent: dict[str, list[tuple[list[int], list[float]]]] = {t: [] for t in replies}

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **_: Any
    ) -> TokenOutput:
        await asyncio.sleep(0)  # let concurrent rollouts interleave
        prompt = self.tokenizer.decode(prompt_ids)
        (task_id,) = [t for opener, t in self.openers.items() if opener in prompt]
        turn = len(self.sent[task_id])
        ids = self.tokenizer.encode(self.replies[task_id][turn] + END, add_special_tokens=False)
        logprobs = [-0.01 * (turn + 1) - 0.001 * i for i in range(len(ids))]
        self.sent[task_id].append((ids, logprobs))
        return TokenOutput(token_ids=ids, log_probs=logprobs)


def opening(task_id: str) -> str:
    _, info = AirlineEnv(user="scripted").reset(options={"task": task_id})
    return str(info["messages"][2]["content"])


def block(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def replies() -> dict[str, list[str]]:
    gold = [block(a.name, a.arguments) for a in load_task_set("tau2")["17"].actions]
    done = block("done", {})
    wrong = [
        block("get_reservation_details", {"reservation_id": "NOPE00"}),
        block("cancel_reservation", {"reservation_id": "JMO1MG"}),
    ]
    return {
        "17": ["Sure, let me look into that.", gold[0] + "\n" + gold[1], *gold[2:], done],
        "3": [*wrong, done],
    }


_made: list[Any] = []


@pytest.fixture(autouse=True)
def _verl_event_loops_closed() -> Iterator[None]:
    """Close the event loop verl's ``AgentLoopBase.__init__`` makes outside a running loop
    (``verl.utils.ray_utils.get_event_loop``: a new one, set and never closed), which the
    suite's ResourceWarning rule would otherwise fail as an unclosed event loop."""
    yield
    while _made:
        event_loop = getattr(_made.pop(), "loop", None)
        if event_loop is not None and not event_loop.is_running() and not event_loop.is_closed():
            event_loop.close()


def make_loop(tokenizer: Any, server: ScriptedServer, entry: Any = None) -> Any:
    """The loop as verl's AgentLoopWorker instantiates it (hydra, from the registry entry)."""
    import hydra

    entry = _agent_loop_registry[adapter.AGENT_NAME] if entry is None else entry
    config = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {"prompt_length": 60_000, "response_length": RESPONSE_LENGTH}
            }
        }
    )
    loop = hydra.utils.instantiate(
        config=entry,
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=tokenizer,
        processor=None,
        hf_model_type=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(OmegaConf.create({})),
    )
    _made.append(loop)
    return loop


def run_rows(tokenizer: Any, server: ScriptedServer, rows: list[dict]) -> list[Any]:
    async def main() -> list[Any]:
        jobs = [make_loop(tokenizer, server).run({"temperature": 1.0}, **row) for row in rows]
        return await asyncio.gather(*jobs)  # concurrent rollouts, each with its own env

    return asyncio.run(main())


def test_gold_and_wrong_rollouts_score_the_env_grades_with_exact_masks(tokenizer):
    plays = replies()
    server = ScriptedServer(tokenizer, plays)
    rows = adapter.dataset_rows(task_ids=["17", "3"], seed=4)
    gold, wrong = run_rows(tokenizer, server, rows)

    for output, task_id, seed in ((gold, "17", 4), (wrong, "3", 5)):
        actions = [parse_reply(text) for text in plays[task_id]]
        expected = run_episode(AirlineEnv(user="scripted"), ScriptedAgent(actions), task_id, seed)
        assert output.reward_score == expected.reward == {"17": 1.0, "3": 0.0}[task_id]
        summary = output.extra_fields["airline"]
        assert summary["termination_reason"] == expected.termination_reason == "agent_stop"
        assert (summary["steps"], summary["tool_errors"]) == (expected.steps, expected.num_errors)
        assert output.num_turns == len(expected.messages) - 1

        # the prompt: the env's system prompt and history with the env's tools, templated
        _, info = AirlineEnv(user="scripted").reset(seed=seed, options={"task": task_id})
        prompt = tokenizer.apply_chat_template(
            info["messages"], tools=info["tools"], add_generation_prompt=True, tokenize=False
        )
        assert tokenizer.decode(output.prompt_ids) == prompt

        # token by token: the generated ids, unchanged and in order, are exactly the mask-1
        # tokens, with their logprobs; everything between them (tool results, the customer)
        # is mask 0
        generations = server.sent[task_id]
        assert len(generations) == len(plays[task_id])
        response, mask = output.response_ids, output.response_mask
        assert len(response) == len(mask) == len(output.response_logprobs)
        expected_mask, expected_logprobs, at = [0] * len(response), {}, 0
        for ids, logprobs in generations:
            start = next(i for i in range(at, len(response)) if response[i : i + len(ids)] == ids)
            for offset, logprob in enumerate(logprobs):
                expected_mask[start + offset] = 1
                expected_logprobs[start + offset] = logprob
            at = start + len(ids)
        assert mask == expected_mask
        for index, logprob in expected_logprobs.items():
            assert output.response_logprobs[index] == pytest.approx(logprob)
        assert response[: len(generations[0][0])] == generations[0][0]  # the model speaks first
        context = tokenizer.decode([t for t, m in zip(response, mask, strict=True) if m == 0])
        tool_results = [m["content"] for m in expected.messages if m["role"] == "tool"]
        assert tool_results[-1] == "Conversation ended by the agent."  # done's: never sent back
        assert all(result in context for result in tool_results[:-1])
    # the customer's reply to the model's words came back as a mask-0 user turn
    customer = [m["content"] for m in expected_gold_messages(plays)]
    assert customer[1] in tokenizer.decode(gold.response_ids)


def expected_gold_messages(plays: dict[str, list[str]]) -> list[dict]:
    actions = [parse_reply(text) for text in plays["17"]]
    result = run_episode(AirlineEnv(user="scripted"), ScriptedAgent(actions), "17", 4)
    return [m for m in result.messages if m["role"] == "user"]


def test_response_budget_ends_the_episode_as_an_agent_error(tokenizer, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "RESPONSE_LENGTH", 1)
    plays = {"17": ["Sure, let me look into that.", block("done", {})]}
    server = ScriptedServer(tokenizer, plays)
    (output,) = run_rows(tokenizer, server, adapter.dataset_rows(task_ids=["17"]))
    assert output.reward_score == 0.0
    assert output.extra_fields["termination_reason"] == "agent_error"
    assert "response budget" in output.extra_fields["airline"]["error"]
    assert len(server.sent["17"]) == 1  # no second generation once the budget was spent


def test_readme_example_and_the_agent_loop_config(tokenizer, tmp_path, monkeypatch, tau3):
    monkeypatch.chdir(tmp_path)
    namespace = run_example("verl")
    rows = namespace["frame"].to_dict("records")
    assert [r["extra_info"]["task_id"] for r in rows] == [
        t.id for t in load_task_set("tau3").split("train")
    ]
    assert {r["extra_info"]["benchmark"] for r in rows} == {"tau3"}  # the README's rows
    assert all(r["agent_name"] == "airline_gym" for r in rows)
    config = OmegaConf.load(ROOT / "examples" / "verl_agent_loop.yaml")
    (entry,) = config
    assert entry.name == "airline_gym"
    loop = make_loop(tokenizer, ScriptedServer(tokenizer, {}), entry)  # as the worker loads it
    assert isinstance(loop, adapter.AirlineAgentLoop)
    assert loop.env_kwargs["user"] == "scripted" and loop.env_kwargs["max_steps"] == 200
    assert loop.env_kwargs["benchmark"] == "tau2"  # the YAML's: say tau3 for tau3's rows


# --- benchmark versions ---------------------------------------------------------------------------
class SequenceServer(ScriptedServer):
    """verl's server manager for one rollout: the replies in order, whatever the prompt."""

    def __init__(self, tokenizer: Any, replies: list[str]) -> None:
        super().__init__(tokenizer, {})
        self.sequence = replies
        self.sent = {"all": []}

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **_: Any
    ) -> TokenOutput:
        text = self.sequence[len(self.sent["all"])] + END
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        self.sent["all"].append((ids, [0.0] * len(ids)))
        return TokenOutput(token_ids=ids, log_probs=None)


def as_text(message: dict[str, Any]) -> str:
    calls = message.get("tool_calls") or []
    blocks = [block(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]
    return "\n".join(blocks) or str(message["content"])


def test_tau3_rows_play_tau3_tasks_with_tau3_s_customer(tokenizer, tau3):
    import tau3_case as case

    (row,) = adapter.dataset_rows(task_ids=[case.TASK], seed=8, benchmark="tau3")
    assert row["extra_info"] == {"task_id": case.TASK, "seed": 8, "benchmark": "tau3"}
    server = SequenceServer(tokenizer, [as_text(m) for m in case.gold_messages()])
    with case.customer_server() as customer:
        entry = OmegaConf.create(
            {**_agent_loop_registry[adapter.AGENT_NAME], "benchmark": "tau3"}
            | case.customer_kwargs(customer)
        )

        async def play() -> Any:  # the loop is built on the running loop, as verl's worker does
            return await make_loop(tokenizer, server, entry).run({}, **row)

        output = asyncio.run(play())
    assert output.reward_score == case.check_grades_differ() == 1.0  # tau2 would grade it 0.0
    summary = output.extra_fields["airline"]
    assert (summary["task_id"], summary["seed"], summary["benchmark"]) == (case.TASK, 8, "tau3")
    assert summary["termination_reason"] == "agent_stop"
    case.assert_tau3_customer(customer.requests)


def test_a_row_of_another_benchmark_or_a_bad_one_is_refused(tokenizer, tau3):
    from hydra.errors import InstantiationException

    from airline_gym.errors import ConfigError

    (row,) = adapter.dataset_rows(task_ids=["7"], benchmark="tau3")
    server = SequenceServer(tokenizer, [])

    async def play() -> Any:
        return await make_loop(tokenizer, server).run({}, **row)  # the default loop: tau2

    with pytest.raises(ConfigError, match="listed for benchmark 'tau3' but the env plays 'tau2'"):
        asyncio.run(play())
    assert server.sent["all"] == []  # nothing generated
    said = "benchmark must be one of tau2, tau3; got 'tau4'"
    entry = OmegaConf.create({**_agent_loop_registry[adapter.AGENT_NAME], "benchmark": "tau4"})
    with pytest.raises(InstantiationException) as wrapped:  # hydra wraps the loop's error
        make_loop(tokenizer, server, entry)
    assert isinstance(wrapped.value.__cause__, ConfigError) and str(wrapped.value.__cause__) == said
    with pytest.raises(ConfigError) as refused:
        adapter.dataset_rows(benchmark="tau4")
    assert str(refused.value) == said
