"""LLM failures: the public :class:`LLMError` and the retry/no-retry classification of errors."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from dataclasses import dataclass

from airline_gym.errors import LLMError

__all__ = [
    "BadReply",
    "Failure",
    "HTTPStatusFailure",
    "LLMError",
    "MissingCredentials",
    "ReplyTooLarge",
    "UnparseableBody",
    "classify",
    "one_line",
]

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_MAX_DETAIL = 400
#: Texts with which litellm / the OpenAI SDK report a request that had no API key to send.
_MISSING_KEY_MARKERS = (
    "api_key client option must be set",
    "Missing credentials",
    "AuthenticationError: Missing",
)


class BadReply(Exception):
    """A syntactically fine HTTP response whose content is unusable (transient)."""


class ReplyTooLarge(Exception):
    """A reply body over the direct paths' cap (not retried: the same request would repeat it)."""


class MissingCredentials(Exception):
    """No API key for a hosted provider: no request is made, nothing is retried."""


@dataclass
class Failure:
    """How one failed attempt is treated: ``retryable``, a short ``kind`` and a ``detail``."""

    retryable: bool
    kind: str
    detail: str
    status: int | None = None
    retry_after: float | None = None


def one_line(text: str) -> str:
    """``text`` on one line, at most a few hundred characters."""
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            return headers  # type: ignore[no-any-return]
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (delta or HTTP date), if present."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
        value = lowered.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (ValueError, TypeError, OverflowError):
        return None


def _is_transport_error(exc: BaseException) -> bool:
    """A connection that failed, dropped or broke mid-reply (httpx's or aiohttp's words)."""
    import http.client
    import sys

    if isinstance(exc, http.client.HTTPException):  # a malformed or cut-off HTTP response
        return True
    httpx = sys.modules.get("httpx")  # never imported just to look
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return True
    aiohttp = sys.modules.get("aiohttp")
    return (
        aiohttp is not None
        and isinstance(exc, aiohttp.ClientError)
        and not isinstance(exc, aiohttp.ClientResponseError)
    )


def _is_timeout(exc: BaseException, name: str, status: int | None) -> bool:
    if isinstance(exc, TimeoutError) or name in ("Timeout", "APITimeoutError"):
        return True
    return "timeout" in name.lower() and status in (None, 408)


def classify(exc: BaseException, timeout: float | None) -> Failure:
    """Decide whether ``exc`` is worth retrying and describe it."""
    if isinstance(exc, BadReply):
        return Failure(True, "unusable reply", str(exc))
    if isinstance(exc, ReplyTooLarge):
        return Failure(False, "reply too large", str(exc))
    detail = one_line(str(exc) or type(exc).__name__)
    if isinstance(exc, MissingCredentials) or any(m in detail for m in _MISSING_KEY_MARKERS):
        return Failure(False, "missing credentials", detail)
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if _is_timeout(exc, name, status):
        limit = "no limit set" if timeout is None else f"{timeout:g} s"
        return Failure(True, f"timeout ({limit})", detail, status)
    # litellm reports a dropped/refused connection as InternalServerError("Connection error.")
    # with status 500, and a 200 with a non-JSON body as a 500 carrying the decode error.
    if (
        "connection" in name.lower()
        or "Connection error" in detail
        or isinstance(exc, ConnectionError)
        or _is_transport_error(exc)
    ):
        return Failure(True, "connection error", detail, status)
    if isinstance(exc, UnparseableBody) or "Expecting value" in detail or "JSONDecode" in detail:
        return Failure(True, "unparseable response body", detail, status)
    if status is None:
        return Failure(False, name, detail)
    if status == 429:
        if "insufficient_quota" in detail:  # OpenAI's "out of credit" is a 429 too
            return Failure(False, "HTTP 429 (insufficient quota)", detail, status)
        return Failure(True, "HTTP 429", detail, status, retry_after(_headers_of(exc)))
    if status in _RETRYABLE_STATUS or status >= 500:
        return Failure(True, f"HTTP {status}", detail, status, retry_after(_headers_of(exc)))
    if status in (401, 403):
        detail += " (check the API key; see airline_gym.llm.check_credentials)"
    return Failure(False, f"HTTP {status}", detail, status)


class HTTPStatusFailure(Exception):
    """A non-2xx answer on the direct path (classified by ``status_code`` like litellm's)."""

    def __init__(self, status_code: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.headers = headers


class UnparseableBody(Exception):
    """A 2xx answer whose body is not a JSON object (retried)."""
