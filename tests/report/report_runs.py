"""What the report's tests read: the shared real runs, a hostile string, loading helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).resolve()
SHARED = next((p / "shared" for p in _HERE.parents if (p / "shared").is_dir()), _HERE / "absent")
TRAJECTORIES = SHARED / "trajectories"
AIDE = TRAJECTORIES / "t2old__lb-aide__claude-sonnet-4-5__user-gpt-4.1.json"
IRONSHELL_GPT = TRAJECTORIES / "t2old__lb-ironshell__llm_agent-gpt-5.4__user-gpt-4.1.json"
OPENAI = "t2old__lb-openai__gpt-oss-120b-langchain__user-gpt-oss-120b.json"
TOOLORCHESTRA = "t2old__lb-nvidia-toolorchestra__orchestrator__user-gpt-5.json"
TASK_ID_FIX = "t2old__lb-nvidia-toolorchestra__task_id_fix.json"
TAU3 = TRAJECTORIES / "t3new__sierra-pr448__whissle__user-gpt-4o.json"

#: A task id that is awkward in a link: a bad percent-escape, a quote, markup.
ODD_TASK_ID = 'x%zz "<i>7'

#: What a hostile model writes: neither may ever run in the report.
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def shared_run(path: Path) -> Path:
    """A recorded run of ../shared/trajectories, or a skip when ../shared is absent."""
    if not path.is_file():
        pytest.skip(f"{path.name} is absent (../shared/trajectories)")
    return path


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
