"""A tiny, randomly initialised Qwen3 policy built locally (no hub download), for TRL tests.

The tokenizer is a byte-level BPE trained here on the texts the policy will read, with Qwen3's
special tokens, and TRL's own copy of the Qwen3 chat template (so TRL recognises it and parses
tool calls). The model is ``Qwen3ForCausalLM`` from a small config; its ``generate`` adds a
logits processor that forces a *script*: the k-th assistant turn of a rollout playing ``script``
(k = tool results seen so far) emits ``script[k]`` then ``<|im_end|>``. That makes the random
model call real tools deterministically, while TRL's own generation, parsing, tool loop, loss
and optimiser step run unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedTokenizerFast,
    Qwen3Config,
    Qwen3ForCausalLM,
)

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED = [
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
]


def qwen3_template() -> str:
    """TRL's packaged Qwen3 chat template (renders tools; TRL knows how to parse its replies)."""
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    """One tool call exactly as the Qwen3 template renders it."""
    payload = json.dumps(arguments)
    return f'<tool_call>\n{{"name": "{name}", "arguments": {payload}}}\n</tool_call>'


def build_tokenizer(corpus: list[str], vocab_size: int = 6000) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on ``corpus`` with Qwen3's special tokens and chat template."""
    tok = Tokenizer(models.BPE())
    # no word splitting: merges may span words, so the long system prompt takes few tokens
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    tok.add_tokens(ADDED)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    fast.chat_template = qwen3_template()
    return fast


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
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=32768,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    model = ScriptedQwen3(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.scripts = [
        [tokenizer.encode(text, add_special_tokens=False) for text in script] for script in scripts
    ]
    model.marker = tokenizer.convert_tokens_to_ids("<tool_response>")
    model.eos = tokenizer.eos_token_id
    return model
