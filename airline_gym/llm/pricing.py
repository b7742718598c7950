"""Cost of a reply from its token usage, priced from litellm's bundled price list.

The direct path does not import litellm; it reads the price list litellm ships (the same file
litellm reads with ``LITELLM_LOCAL_MODEL_COST_MAP=True``), once, on the first priced reply.
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
_prices: dict[str, Any] | None = None


def _price_list() -> dict[str, Any]:
    global _prices
    with _lock:
        if _prices is None:
            _prices = {}
            spec = importlib.util.find_spec("litellm")
            if spec is not None and spec.origin is not None:
                path = Path(spec.origin).parent / "model_prices_and_context_window_backup.json"
                try:
                    _prices = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    log.warning("cannot read litellm's price list %s: %s", path, exc)
        return _prices


def usage_cost(model: str, usage: Any) -> float | None:
    """``usage``'s cost for ``model`` (``"openai/gpt-4o-mini"``), or ``None`` if unpriced."""
    if not isinstance(usage, dict):
        return None
    name = model.split("/", 1)[1] if model.startswith("openai/") else model
    prices = _price_list()
    entry = prices.get(name) or prices.get(f"openai/{name}")
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
