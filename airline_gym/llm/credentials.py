"""API keys: the placeholder a keyless local server needs, and the up-front check for providers."""

from __future__ import annotations

import os
from functools import lru_cache

from airline_gym.llm.litellm_backend import LOCAL_KEY, load_litellm

__all__ = [
    "LOCAL_API_KEY",
    "check_credentials",
    "effective_api_key",
    "is_openai_compatible",
    "surely_missing_key",
]

#: Sent to a local OpenAI-compatible server (``api_base`` given) when no key is configured;
#: litellm and the OpenAI SDK refuse to send a request without one, local servers ignore it.
LOCAL_API_KEY = LOCAL_KEY

_OPENAI_COMPATIBLE = ("openai/", "hosted_vllm/", "custom_openai/")


def is_openai_compatible(model: str) -> bool:
    """Whether litellm speaks the OpenAI chat API for ``model`` (prefixed, or a bare name)."""
    return model.startswith(_OPENAI_COMPATIBLE) or "/" not in model


def effective_api_key(model: str, api_base: str | None, api_key: str | None) -> str | None:
    """``api_key``, or the local placeholder when ``api_base`` is given and nothing else is set.

    Only for models litellm sends as OpenAI requests, and only when ``OPENAI_API_KEY`` is unset
    (litellm would send that one, as before).
    """
    if api_key or not api_base or not is_openai_compatible(model):
        return api_key
    if model.startswith("hosted_vllm/"):
        return os.environ.get("HOSTED_VLLM_API_KEY") or LOCAL_API_KEY
    return os.environ.get("OPENAI_API_KEY") or LOCAL_API_KEY


def check_credentials(
    model: str,
    api_base: str | None = None,
    api_key: str | None = None,
    alternative: str | None = None,
) -> str | None:
    """``None`` if ``model`` looks callable, else a one-line hint naming what to set.

    A custom ``api_base`` counts as usable (local servers need no key). ``alternative`` ends
    the hint with the caller's own way out (default: the Python options of the customer).
    """
    if api_base:
        return None
    alternative = alternative or (
        "or pass api_base=... for a local OpenAI-compatible server, or run offline with "
        'user="scripted"'
    )
    variable = surely_missing_key(model, api_key)
    if variable:  # told without importing litellm (seconds on a small machine)
        return _needs_credentials(model, [variable], alternative)
    litellm = load_litellm()
    try:
        litellm.get_llm_provider(model=model)
    except Exception:
        return (
            f"cannot tell which provider serves model {model!r}: use a litellm model name such "
            f"as 'openai/gpt-4.1' or 'anthropic/claude-sonnet-4-20250514', {alternative}"
        )
    try:
        info = litellm.validate_environment(model=model, api_key=api_key)
    except Exception as exc:
        return f"cannot check credentials for model {model!r} ({exc}); {alternative}"
    missing = [str(k) for k in info.get("missing_keys") or []]
    if info.get("keys_in_environment") and not missing:
        return None
    return _needs_credentials(model, missing, alternative)


def _needs_credentials(model: str, missing: list[str], alternative: str) -> str:
    needed = ", ".join(missing) if missing else "its provider's API key"
    return (
        f"model {model!r} needs credentials: set {needed} in the environment "
        f"(e.g. export {missing[0] if missing else 'PROVIDER_API_KEY'}=...), {alternative}"
    )


#: Model names whose provider's key variable is known without litellm (a test checks each
#: against litellm's own answer): a provider prefix, or the reference's default models.
_KEY_OF_PREFIX = {"openai/": "OPENAI_API_KEY", "anthropic/": "ANTHROPIC_API_KEY"}
_KEY_OF_MODEL = {name: "OPENAI_API_KEY" for name in ("gpt-4.1", "gpt-4.1-mini", "gpt-4o-mini")}


def surely_missing_key(model: str, api_key: str | None) -> str | None:
    """The variable litellm would ask for, when ``model``'s provider is known from its name
    alone and neither ``api_key`` nor that variable is set; else None (litellm decides)."""
    if api_key:
        return None
    variable = _KEY_OF_MODEL.get(model)
    for prefix, name in _KEY_OF_PREFIX.items():
        if model.startswith(prefix):
            variable = name
    if variable is None or os.environ.get(variable):
        return None
    return variable


#: The variables that route a request through an HTTP proxy (as urllib and httpx read them).
PROXY_VARIABLES = tuple(
    name
    for scheme in ("http", "https", "all", "no")
    for name in (f"{scheme}_proxy", f"{scheme}_proxy".upper())
)


def goes_through_a_proxy(api_base: str) -> bool:
    """Whether the proxy settings in the environment apply to ``api_base``.

    The direct path speaks to the server itself; a proxied endpoint is left to litellm, whose
    HTTP client honours the proxy.
    """
    return _proxied(api_base, tuple(os.environ.get(name) for name in PROXY_VARIABLES))


@lru_cache(maxsize=64)
def _proxied(api_base: str, settings: tuple[str | None, ...]) -> bool:
    import urllib.parse
    import urllib.request

    if not any(settings):
        return False
    url = urllib.parse.urlsplit(api_base)
    proxies = urllib.request.getproxies_environment()
    if url.scheme not in proxies and "all" not in proxies:
        return False
    return not urllib.request.proxy_bypass(url.hostname or "")
