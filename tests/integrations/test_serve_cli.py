"""``airline-gym serve``'s start: bad settings, a taken port and a keyless customer are one line and
exit code 2 before anything is printed; ``--port 0`` prints the port it got."""

from __future__ import annotations

import json
import signal
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from extras import require
from openenv_servers import server_process

require("openenv", "uvicorn")

from airline_gym.cli import serve  # noqa: E402
from airline_gym.cli.main import main as cli_main  # noqa: E402


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert out == ""  # no "serving ... on" line for a server that never ran
    assert err.count("\n") == 1 and err.startswith("airline-gym serve: error: "), err
    return err


@pytest.mark.parametrize(
    ("option", "value", "reason"),
    [
        ("--port", "70000", "port 70000 is out of range (0 to 65535)"),
        ("--port", "-5", "port -5 is out of range (0 to 65535)"),
        ("--port", "http", "not a port number: 'http'"),
        ("--idle-timeout", "0", "must be a number of seconds > 0, got 0"),
        ("--idle-timeout", "nan", "must be a number of seconds > 0, got nan"),
        ("--max-tool-calls", "0", "--max-tool-calls must be at least 1"),
        ("--max-message-bytes", "1MiB", "not a whole number of bytes: '1MiB'"),
        ("--max-message-bytes", "0", "must be 1024 to 1073741824 bytes, got 0"),
        ("--max-message-bytes", "2147483648", "must be 1024 to 1073741824 bytes, got 2147483648"),
        ("--header-timeout", "inf", "must be a number of seconds > 0, got inf"),
        ("--max-connections", "256", "--max-connections must be more than --max-sessions"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(capsys, option, value, reason):
    with pytest.raises(SystemExit) as exit_:
        code = cli_main(["serve", option, value])
        raise SystemExit(code)  # settings refused after parsing return the code instead
    assert exit_.value.code == 2
    assert reason in one_line_error(capsys)


def test_a_port_in_use_is_one_line_and_exit_2(capsys):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert cli_main(["serve", "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in one_line_error(capsys)


def test_an_llm_customer_without_credentials_is_refused_at_start(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert cli_main(["serve", "--port", "0", "--user-model", "gpt-4.1"]) == 2
    assert "needs credentials: set OPENAI_API_KEY" in one_line_error(capsys)


def test_the_cli_defaults_are_the_integrations_defaults():
    from airline_gym.integrations.connections import DEFAULT_HEADER_TIMEOUT
    from airline_gym.integrations.openenv import DEFAULT_MAX_TOOL_CALLS
    from airline_gym.integrations.openenv_server import (
        DEFAULT_IDLE_TIMEOUT,
        DEFAULT_MAX_MESSAGE_BYTES,
    )

    assert (serve.IDLE_TIMEOUT, serve.MAX_TOOL_CALLS, serve.MAX_MESSAGE_BYTES) == (
        DEFAULT_IDLE_TIMEOUT,
        DEFAULT_MAX_TOOL_CALLS,
        DEFAULT_MAX_MESSAGE_BYTES,
    )
    assert serve.HEADER_TIMEOUT == DEFAULT_HEADER_TIMEOUT


def test_port_0_prints_the_port_it_got_and_serves_there():
    with server_process() as server:
        assert server.first_line.startswith("serving airline-gym (OpenEnv) on http://127.0.0.1:")
        assert not server.url.endswith(":0")
        with urllib.request.urlopen(server.url + "/health", timeout=60) as response:
            assert json.loads(response.read())["status"] == "healthy"
    stderr = server.process.stderr_bytes  # type: ignore[attr-defined]
    assert server.process.returncode == -signal.SIGTERM and stderr == b"", stderr
