"""render_mode="human": each message printed once, from reset on; colour only on a terminal
without NO_COLOR (issue 17.14)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import textwrap

import pytest

from airline_gym.agents import GoldAgent
from airline_gym.env import AirlineEnv
from airline_gym.env.render import transcript

ANSI = "\033["

# plays task 17's gold episode with render_mode="human"; prints the final transcript as a marker
SCRIPT = textwrap.dedent(
    """
    from airline_gym.agents import GoldAgent
    from airline_gym.env import AirlineEnv
    env = AirlineEnv(task=17, user="scripted", render_mode="human")
    obs, info = env.reset(seed=0)
    agent = GoldAgent()
    agent.reset(info)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    """
)


def play_gold(capsys: pytest.CaptureFixture[str]) -> tuple[list[str], AirlineEnv]:
    env = AirlineEnv(task=17, user="scripted", render_mode="human")
    obs, info = env.reset(seed=0)
    after_reset = capsys.readouterr().out
    agent = GoldAgent()
    agent.reset(info)
    outputs = [after_reset]
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        outputs.append(capsys.readouterr().out)
        done = terminated or truncated
    return outputs, env


def test_human_prints_each_message_once_starting_at_reset(
    capsys: pytest.CaptureFixture[str],
) -> None:
    outputs, env = play_gold(capsys)
    assert env.episode is not None
    assert outputs[0].startswith("--- task 17 ---")
    assert "Hi! How can I help you today?" in outputs[0] and "omar_rossi_1241" in outputs[0]
    everything = "".join(outputs)
    # the whole output is the transcript once (plus a header and the ending), not a reprint
    assert everything.count("Hi! How can I help you today?") == 1
    assert len(everything) < len(transcript(env.episode.messages)) + 200
    assert outputs[-1].rstrip().endswith("--- ended: agent_stop ---")
    assert all(ANSI not in out for out in outputs)  # captured output is not a terminal
    env.render()  # nothing new: prints nothing
    assert capsys.readouterr().out == ""


def run_script(env: dict[str, str], terminal: bool) -> str:
    """Run SCRIPT with stdout on a pipe or on a real pseudo-terminal; returns what it printed."""
    if not terminal:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=child, stderr=child)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert proc.wait(timeout=120) == 0, b"".join(chunks)[-2000:]
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("terminal", "no_color", "coloured"),
    [(True, "", True), (True, "1", False), (False, "", False)],
)
def test_colour_only_on_a_terminal_without_no_color(
    terminal: bool, no_color: str, coloured: bool
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    if no_color:
        env["NO_COLOR"] = no_color
    out = run_script(env, terminal)
    assert "omar_rossi_1241" in out and "ended: agent_stop" in out
    assert (ANSI in out) is coloured
