"""A tiny Qwen3 built locally from a config (no Hub download), to check a training pipeline on CPU.

:func:`build_tokenizer` trains a byte-level BPE on the texts the model will read (so a system
prompt of several thousand characters takes few tokens), with Qwen3's special tokens and TRL's
own copy of the Qwen3 chat template (which renders tools, and which TRL knows how to parse and to
mask for assistant-only loss). :func:`tiny_qwen3` is a randomly initialised ``Qwen3ForCausalLM``
of a few hundred thousand parameters whose generation config samples, writes a few tokens at
least and never the tool-call or thinking markers (an untrained model would write them
malformed). Together they
stand in for a real checkpoint in
``examples/train_pipeline.py``'s smoke run: every stage (SFT, GRPO, a server, eval) runs for real,
on a model that has learnt nothing. :func:`save` writes both as a checkpoint folder that
``from_pretrained`` (and ``transformers serve``) loads. Needs the ``trl`` extra.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "ADDED_TOKENS",
    "SPECIAL_TOKENS",
    "build_tokenizer",
    "qwen3_template",
    "save",
    "tiny_qwen3",
    "tool_call_text",
]

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED_TOKENS = [
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


def build_tokenizer(corpus: Iterable[str], vocab_size: int = 6000) -> Any:
    """A byte-level BPE trained on ``corpus`` with Qwen3's special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    # no word splitting: merges may span words, so the long system prompt takes few tokens
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(corpus), trainer)
    tok.add_tokens(ADDED_TOKENS)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    fast.chat_template = qwen3_template()
    return fast


def tiny_qwen3(tokenizer: Any, seed: int = 0, hidden_size: int = 32, layers: int = 1) -> Any:
    """A randomly initialised ``Qwen3ForCausalLM`` (fixed ``seed``) for ``tokenizer``."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=32768,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    model = Qwen3ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    # sampled unless a request says temperature 0: greedy, an untrained model repeats one token;
    # a few tokens at least: it has learnt that the agent's turns end, not what they say
    model.generation_config.do_sample = True
    model.generation_config.min_new_tokens = 4
    # never the tool-call or thinking markers: an untrained model writes them malformed, and
    # `transformers serve` answers a reply with a malformed tool call with HTTP 500
    model.generation_config.bad_words_ids = [
        [tokenizer.convert_tokens_to_ids(token)] for token in ADDED_TOKENS
    ]
    return model


def save(model: Any, tokenizer: Any, folder: str | os.PathLike[str]) -> Path:
    """Write the model and its tokenizer as one checkpoint folder; returns its path."""
    path = Path(folder)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
