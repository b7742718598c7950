"""From generated tasks to a trained agent's eval, with one agent interface throughout.

The stages, each reading the last one's output, all under one protocol (``tool-reply``: the
customer through ``respond_to_user``, the one TRL's GRPOTrainer needs):

1. ``airline-gym generate``: training tasks (and a held-out tenth) -> ``tasks.json``;
2. ``airline-gym warm-start --protocol tool-reply``: policy-following dialogues -> ``sft.jsonl``;
3. TRL's ``SFTTrainer`` on those rows, loss on the agent's turns only -> ``sft/``;
4. TRL's ``GRPOTrainer`` from ``sft/``, the env as its ``environment_factory`` -> ``grpo/``;
5. ``transformers serve grpo/``: the checkpoint behind an OpenAI-compatible server on 127.0.0.1
   (or ``--api-base URL``: a server of yours, e.g. vLLM serving ``grpo/``);
6. ``airline-gym eval --protocol tool-reply`` on the held-out tasks, then ``airline-gym report``.

By default it is a smoke run on CPU with a tiny Qwen3 built here from a config (no download):
every stage runs for real on a model that learns nothing, in a few minutes, to check the pipeline
before renting a GPU. Every model, GPU and batch setting is a flag::

    python examples/train_pipeline.py --out run                      # the CPU smoke run
    python examples/train_pipeline.py --out run --model Qwen/Qwen3-1.7B --device cuda \\
        --tasks 2000 --sft-steps 300 --sft-max-length 16384 --grpo-steps 200 --batch 8 \\
        --num-generations 8 --max-completion-length 4096 --learning-rate 1e-6 \\
        --eval-max-steps 200 --eval-max-tokens 4096 --eval-temperature 0 \\
        --user llm --user-model gpt-4.1

Each stage prints its figure, and a summary at the end (``OUT/pipeline.json`` keeps them). Needs
the ``trl`` extra (and torch); the server stage needs FastAPI and uvicorn (the ``openenv`` extra).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from airline_gym.cli.options import OneLineParser
from airline_gym.numbers import whole_number

PROTOCOL = "tool-reply"  # TRL's: the stages below all use it
TINY = "tiny"


def whole(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, checked before any stage runs
    (a bad one would otherwise stop the run minutes in, at the stage that reads it)."""

    def parse(text: str) -> int:
        value = whole_number(text.strip(), 12)
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from {low:,} to {high:,}")
        return value

    return parse


def real(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number from ``low`` to ``high`` (NaN and infinities refused)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text[:40]!r}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"must be a finite number from {low:g} to {high:g}")
        return value

    return parse


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring); each number is bounded and checked."""
    steps, tokens = whole(1, 1_000_000), whole(1, 1_048_576)
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for every stage's output")
    p.add_argument("--model", default=TINY, help="a model id or path (default: a tiny local Qwen3)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="(cpu; cuda: bf16)")
    p.add_argument("--tasks", type=whole(10, 32_768), default=40, help="tasks to generate (40)")
    p.add_argument(
        "--seed", type=whole(0, 2**32 - 1), default=0, help="generation and training seed (0)"
    )
    p.add_argument("--sft-steps", type=steps, default=10, help="SFT optimiser steps (10)")
    p.add_argument("--grpo-steps", type=steps, default=2, help="GRPO optimiser steps (2)")
    p.add_argument("--batch", type=whole(1, 65_536), default=2, help="per-device batch size (2)")
    p.add_argument(
        "--num-generations", type=whole(2, 65_536), default=2, help="GRPO group size (2)"
    )
    p.add_argument("--max-completion-length", type=tokens, default=48, help="GRPO tokens/turn (48)")
    p.add_argument(
        "--learning-rate", type=real(1e-12, 1.0), default=1e-3, help="both trainers (1e-3)"
    )
    p.add_argument(
        "--sft-max-length", type=whole(0, 1_048_576), default=1024,
        help="SFT rows are cut at this many tokens (1024; 0: never cut)",
    )  # fmt: skip
    p.add_argument("--user", choices=("scripted", "llm"), default="scripted", help="the customer")
    p.add_argument("--user-model", help="litellm model of the LLM customer (--user llm)")
    p.add_argument("--api-base", help="eval against this server instead of starting one")
    p.add_argument("--eval-max-steps", type=steps, default=12, help="step budget in eval (12)")
    p.add_argument("--eval-max-tokens", type=tokens, default=48, help="reply cap in eval (48)")
    p.add_argument(
        "--eval-temperature", type=real(0.0, 2.0), default=1.0,
        help="the agent's sampling temperature in eval (1: the untrained smoke model then says "
        "something; 0 is the reference's)",
    )  # fmt: skip
    return p.parse_args(argv)


def cli(*args: Any) -> str:
    """Run ``airline-gym ARGS`` as a user would; its output, or SystemExit with its error."""
    done = subprocess.run(
        [sys.executable, "-m", "airline_gym.cli", *map(str, args)], capture_output=True, text=True
    )
    if done.returncode not in (0, 1):  # 1: eval's failed simulations, still a results file
        raise SystemExit(f"airline-gym {args[0]} failed: {done.stderr.strip()}")
    return done.stdout + done.stderr


# --- 1-2: tasks and warm-start rows ---------------------------------------------------------------
def generate(out: Path, n: int, seed: int) -> str:
    """``airline-gym generate`` with a held-out tenth (split ``test``)."""
    text = cli("generate", "--n", n, "--seed", seed, "--test-share", 0.1, "--out", out)
    tasks = json.loads(out.read_text())
    held = sum(t["airline_gym"]["split"] == "test" for t in tasks)
    return f"{len(tasks)} tasks, {held} held out ({text.splitlines()[0]})"


def warm_start(tasks: Path, out: Path) -> str:
    """``airline-gym warm-start`` on the training split, under the protocol."""
    text = cli("warm-start", "--tasks", tasks, "--split", "train", "--protocol", PROTOCOL,
               "--out", out)  # fmt: skip
    return text.splitlines()[0]


# --- 3-4: the trainers ----------------------------------------------------------------------------
def tokenizer_and_model(name: str, rows: Path, seed: int) -> tuple[Any, Any]:
    """The tokenizer and model to start from: ``name``'s, or the tiny local Qwen3."""
    if name != TINY:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        return AutoTokenizer.from_pretrained(name), AutoModelForCausalLM.from_pretrained(name)
    from airline_gym.integrations.trl import AirlineToolEnv, dataset_rows, trl_schema
    from airline_gym.testing.tiny_model import build_tokenizer, tiny_qwen3

    env = AirlineToolEnv(user="scripted")  # its tools, as TRL renders them, for the vocabulary
    corpus = rows.read_text().splitlines()
    corpus += [json.dumps([trl_schema(getattr(env, n)) for n in env._tool_names])]
    corpus += [dataset_rows(task_ids=["0"])[0]["prompt"][0]["content"]]
    tokenizer = build_tokenizer(corpus)
    return tokenizer, tiny_qwen3(tokenizer, seed=seed)


def train_sft(args: argparse.Namespace, rows: Path, out: Path) -> str:
    """TRL's SFTTrainer on the warm-start rows, the loss on the agent's turns only."""
    from trl import SFTConfig, SFTTrainer

    from airline_gym.harness.export import load_jsonl

    tokenizer, model = tokenizer_and_model(args.model, rows, args.seed)
    config = SFTConfig(
        output_dir=str(out), max_steps=args.sft_steps, per_device_train_batch_size=args.batch,
        learning_rate=args.learning_rate, assistant_only_loss=True,
        max_length=args.sft_max_length or None,
        use_cpu=args.device == "cpu", bf16=args.device == "cuda", logging_steps=1,
        save_strategy="no", report_to="none", seed=args.seed,
    )  # fmt: skip
    trainer = SFTTrainer(
        model=model, args=config, train_dataset=load_jsonl(rows), processing_class=tokenizer
    )
    trainer.train()
    trainer.save_model(str(out))
    tokenizer.save_pretrained(str(out))
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return f"loss {losses[0]:.3f} -> {losses[-1]:.3f} over {len(losses)} steps, saved to {out}"


def train_grpo(args: argparse.Namespace, tasks: Path, start: Path, out: Path) -> str:
    """TRL's GRPOTrainer from the SFT checkpoint, the env as its environment_factory."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from airline_gym.integrations.trl import dataset_rows, make_environment_factory

    customer: dict[str, Any] = {"user": args.user}
    if args.user_model:
        customer["user_model"] = args.user_model
    rows = dataset_rows(tasks=str(tasks), split="train", seed=args.seed)
    config = GRPOConfig(
        output_dir=str(out), max_steps=args.grpo_steps, per_device_train_batch_size=args.batch,
        num_generations=args.num_generations, max_completion_length=args.max_completion_length,
        learning_rate=args.learning_rate, use_cpu=args.device == "cpu",
        bf16=args.device == "cuda", gradient_checkpointing=False, logging_steps=1,
        save_strategy="no", report_to="none", seed=args.seed, data_seed=args.seed,
    )  # fmt: skip
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    trainer = GRPOTrainer(
        model=str(start),
        train_dataset=Dataset.from_list(rows),
        environment_factory=make_environment_factory(tasks=str(tasks), **customer),
        args=config,
    )
    trainer.train()
    trainer.save_model(str(out))
    trainer.processing_class.save_pretrained(str(out))
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    shown = ", ".join(f"{r:.2f}" for r in rewards)
    return f"mean reward per step [{shown}] over {len(rows)} training tasks, saved to {out}"


# --- 5-6: the server and the eval -----------------------------------------------------------------
@contextlib.contextmanager
def serve(checkpoint: Path, device: str, log: Path, timeout: float = 300) -> Iterator[str]:
    """``transformers serve CHECKPOINT`` on a free 127.0.0.1 port; yields its API base."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # a local checkpoint: nothing to fetch
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "transformers.cli.transformers", "serve", str(checkpoint),
             "--host", "127.0.0.1", "--port", str(port), "--device", device],
            stdout=sink, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        try:
            _wait_healthy(f"http://127.0.0.1:{port}", server, timeout, log)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_healthy(url: str, server: subprocess.Popen[bytes], timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"transformers serve exited: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/health", timeout=5) as r:
            if r.status == 200:
                return
        time.sleep(0.5)
    raise SystemExit(f"transformers serve did not answer within {timeout:.0f} s (log: {log})")


def evaluate(args: argparse.Namespace, tasks: Path, model: str, api_base: str, out: Path) -> str:
    """``airline-gym eval`` on the held-out tasks under the protocol, then its report."""
    customer = ["--user", args.user] + (
        ["--user-model", args.user_model] if args.user_model else []
    )
    cli("eval", "--agent-model", f"openai/{model}", "--agent-api-base", api_base,
        "--protocol", PROTOCOL, "--tasks", tasks, "--split", "test", "--max-steps",
        args.eval_max_steps, "--max-tokens", args.eval_max_tokens, "--max-retries", 1,
        "--temperature", args.eval_temperature,
        *customer, "--out", out)  # fmt: skip
    from airline_gym.harness.results import Results, summarize

    summary = summarize(Results.load(out))
    page = out.with_suffix(".html")
    cli("report", out, "-o", page)
    ends = ", ".join(f"{k} {v}" for k, v in sorted(summary["terminations"].items()))
    rate = summary["pass_hat_k"].get(1, 0.0)
    return f"pass^1 {rate:.3f} on {summary['tasks']} held-out tasks ({ends}); report {page}"


# --- the run --------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> dict[str, str]:
    """Run every stage; returns (and prints) each stage's figure."""
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {n: out / n for n in ("tasks.json", "sft.jsonl", "sft", "grpo", "eval.json")}
    figures: dict[str, str] = {}
    started = time.monotonic()

    def stage(name: str, figure: str) -> None:
        figures[name] = figure
        print(f"[{time.monotonic() - started:6.1f} s] {name}: {figure}", flush=True)

    stage("generate", generate(paths["tasks.json"], args.tasks, args.seed))
    stage("warm-start", warm_start(paths["tasks.json"], paths["sft.jsonl"]))
    stage("sft", train_sft(args, paths["sft.jsonl"], paths["sft"]))
    stage("grpo", train_grpo(args, paths["tasks.json"], paths["sft"], paths["grpo"]))
    model = args.model if args.api_base and args.model != TINY else str(paths["grpo"])
    with contextlib.ExitStack() as stack:
        api_base = args.api_base or stack.enter_context(
            serve(paths["grpo"], args.device, out / "server.log")
        )
        stage("serve", f"{model} at {api_base}")
        stage("eval", evaluate(args, paths["tasks.json"], model, api_base, paths["eval.json"]))
    figures["wall time"] = f"{time.monotonic() - started:.0f} s"
    (out / "pipeline.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"done in {figures['wall time']}; figures in {out / 'pipeline.json'}")
    return figures


if __name__ == "__main__":
    main()
