"""Cost of a reply from its token usage, priced from litellm's bundled price list.

The direct path does not import litellm; it reads the price list litellm ships (the same file
litellm reads with ``LITELLM_LOCAL_MODEL_COST_MAP=True``). Parsing all of it (3.5 MB, ~50 ms)
to price one model would cost more than a run's requests do, so each model's entry is looked up
once: the file's top-level keys stand at the start of a line indented four spaces, so the entry
is found with ``str.find`` and only it is decoded. A file in any other layout is parsed whole.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from pathlib import Path
from typing import Any

__all__ = ["usage_cost"]

log = logging.getLogger(__name__)
_lock = threading.Lock()
_text: str | None = None
_parsed: dict[str, Any] | None = None  # only for a file in an unexpected layout
_entries: dict[str, dict[str, Any] | None] = {}
_LAYOUT = '{\n    "'


def _price_text() -> str:
    global _text
    if _text is None:
        _text = ""
        spec = importlib.util.find_spec("litellm")
        if spec is not None and spec.origin is not None:
            path = Path(spec.origin).parent / "model_prices_and_context_window_backup.json"
            try:
                _text = path.read_text(encoding="utf-8")
            except OSError as exc:
                log.warning("cannot read litellm's price list %s: %s", path, exc)
    return _text


def _lookup(name: str) -> dict[str, Any] | None:
    global _parsed
    text = _price_text()
    if not text:
        return None
    try:
        if not text.startswith(_LAYOUT):
            if _parsed is None:
                _parsed = json.loads(text)
            entry = _parsed.get(name)
        else:
            needle = f"\n    {json.dumps(name)}: "
            at = text.find(needle)
            if at < 0:
                return None
            entry = json.JSONDecoder().raw_decode(text, at + len(needle))[0]
    except ValueError as exc:
        log.warning("cannot read litellm's price list: %s", exc)
        return None
    return entry if isinstance(entry, dict) else None


def _entry(name: str) -> dict[str, Any] | None:
    """The price entry of ``name`` (looked up once per name)."""
    with _lock:
        if name not in _entries:
            _entries[name] = _lookup(name)
        return _entries[name]


def usage_cost(model: str, usage: Any) -> float | None:
    """``usage``'s cost for ``model`` (``"openai/gpt-4o-mini"``), or ``None`` if unpriced."""
    if not isinstance(usage, dict):
        return None
    name = model.split("/", 1)[1] if model.startswith("openai/") else model
    entry = _entry(name) or _entry(f"openai/{name}")
    if not isinstance(entry, dict):
        return None
    raw = [entry.get("input_cost_per_token"), entry.get("output_cost_per_token")]
    raw += [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    values = [float(v) for v in raw if isinstance(v, int | float)]
    if len(values) != 4:
        return None
    per_in, per_out, prompt, completion = values
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    per_cached = entry.get("cache_read_input_token_cost", per_in)
    if not isinstance(cached, int) or not isinstance(per_cached, int | float):
        cached, per_cached = 0, per_in
    return (prompt - cached) * per_in + cached * float(per_cached) + completion * per_out
