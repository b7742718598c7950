"""A tiny, randomly initialised Qwen3 policy built locally (no hub download), for TRL tests.

The tokenizer and the model's config are the package's (:mod:`airline_gym.testing.tiny_model`:
a byte-level BPE trained on the texts the policy will read, with Qwen3's special tokens and TRL's
own Qwen3 chat template). Here the model's ``generate`` adds a logits processor that forces a
*script*: the k-th assistant turn of a rollout playing ``script``
(k = tool results seen so far) emits ``script[k]`` then ``<|im_end|>``. That makes the random
model call real tools deterministically, while TRL's own generation, parsing, tool loop, loss
and optimiser step run unchanged.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import (
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedTokenizerFast,
    Qwen3ForCausalLM,
)

from airline_gym.testing.tiny_model import build_tokenizer, tiny_qwen3, tool_call_text

__all__ = ["ScriptedQwen3", "build_policy", "build_tokenizer", "tool_call_text"]


def _contains(row: list[int], part: list[int]) -> bool:
    n = len(part)
    return any(row[i : i + n] == part for i in range(len(row) - n + 1))


class ScriptProcessor(LogitsProcessor):
    """Forces turn k of every row to ``script[k]`` + EOS (k = ``<tool_response>`` blocks seen).

    With several scripts, a row plays the one whose first turn it already contains; a row
    still in its first turn plays script ``row % len(scripts)`` (so the generations of one
    prompt, adjacent rows in TRL's batch, play different scripts).
    """

    def __init__(
        self, scripts: list[list[list[int]]], prompt_len: int, marker: int, eos: int
    ) -> None:
        self.scripts, self.prompt_len, self.marker, self.eos = scripts, prompt_len, marker, eos

    def _script(self, row: int, ids: list[int]) -> list[list[int]]:
        for script in self.scripts:
            if _contains(ids, script[0]):
                return script
        return self.scripts[row % len(self.scripts)]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        forced = torch.full_like(scores, float("-inf"))
        for row in range(input_ids.shape[0]):
            prompt = input_ids[row, : self.prompt_len]
            turn = int((prompt == self.marker).sum())
            script = self._script(row, prompt.tolist())
            target = (script[turn] if turn < len(script) else []) + [self.eos]
            done = input_ids.shape[1] - self.prompt_len
            forced[row, target[min(done, len(target) - 1)]] = 0.0
        return forced


class ScriptedQwen3(Qwen3ForCausalLM):
    """Qwen3 whose sampling follows fixed scripts (see the module docstring)."""

    scripts: list[list[list[int]]] = []  # noqa: RUF012 - set per instance by build_policy
    marker: int = -1
    eos: int = -1

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        prompt_len = kwargs["input_ids"].shape[1]
        processor = ScriptProcessor(self.scripts, prompt_len, self.marker, self.eos)
        kwargs["logits_processor"] = LogitsProcessorList([processor])
        return super().generate(*args, **kwargs)


def build_policy(
    tokenizer: PreTrainedTokenizerFast, scripts: list[list[str]], seed: int = 0
) -> ScriptedQwen3:
    """A 1-layer Qwen3 (random weights, fixed ``seed``) that plays ``scripts`` turn by turn.

    The first turns of the scripts must differ (they tell a rollout's script apart).
    """
    weights = tiny_qwen3(tokenizer, seed=seed)
    model = ScriptedQwen3(weights.config)
    model.load_state_dict(weights.state_dict())
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.scripts = [
        [tokenizer.encode(text, add_special_tokens=False) for text in script] for script in scripts
    ]
    model.marker = tokenizer.convert_tokens_to_ids("<tool_response>")
    model.eos = tokenizer.eos_token_id
    return model
