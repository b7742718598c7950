"""Write generated task records as a tasks.json file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from airline_gym.errors import ConfigError

__all__ = ["write_tasks"]


def write_tasks(records: list[dict[str, Any]], out: str | os.PathLike[str]) -> None:
    """Write ``records`` as tasks.json (two-space indent, a final newline), atomically."""
    path = Path(out)
    if path.is_dir():
        raise ConfigError(f"--out {path} is a directory")
    if not path.parent.is_dir():
        raise ConfigError(f"--out {path}: no such directory {path.parent}")
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:  # streamed: no second copy in memory
        json.dump(records, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
