"""The general path: any provider through ``litellm`` (imported on first use only)."""

from __future__ import annotations

import logging
import os
import threading
from types import ModuleType
from typing import Any

__all__ = ["acomplete_litellm", "litellm_loaded", "load_litellm"]

log = logging.getLogger(__name__)
_lock = threading.Lock()
_module: ModuleType | None = None
LOCAL_KEY = "EMPTY"


def litellm_loaded() -> bool:
    """Whether :func:`load_litellm` has run."""
    return _module is not None


def load_litellm() -> ModuleType:
    """Import and configure litellm once (offline cost map, no debug banners)."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            log.debug("importing litellm")
            import litellm

            litellm.suppress_debug_info = True
            _warm_up(litellm)
            _module = litellm
    return _module


def _warm_up(litellm: ModuleType) -> None:
    """Run litellm's first-call set-up (lazy imports, SDK clients) once, outside any timeout.

    One request to a closed port on 127.0.0.1 goes through the OpenAI path and fails at once.
    It runs in a thread of its own: litellm's blocking path asks ``asyncio.get_event_loop()``
    for a loop to log on, which in a main thread without one makes a loop and leaves it set,
    never closed (its two sockets leak when the next ``asyncio.run`` replaces it); in another
    thread there is none, and litellm uses ``asyncio.run``, which closes its loop.
    """
    worker = threading.Thread(target=_warm_up_call, args=(litellm,), name="litellm-warm-up")
    worker.start()
    worker.join()


def _warm_up_call(litellm: ModuleType) -> None:
    try:
        litellm.completion(
            model="openai/warm-up",
            api_base="http://127.0.0.1:1/v1",
            api_key=LOCAL_KEY,
            messages=[{"role": "user", "content": "warm-up"}],
            num_retries=0,
            max_retries=0,
            timeout=2,
        )
    except Exception as exc:  # expected: connection refused
        log.debug("litellm warm-up ended with %s", type(exc).__name__)


async def acomplete_litellm(request: dict[str, Any]) -> Any:
    """One ``litellm.acompletion(**request)`` (litellm's and the SDK's retries are off)."""
    return await load_litellm().acompletion(**request)
