"""Each tool's type (read / write / generic), as tau3's results record it on action checks."""

from __future__ import annotations

import pytest
from optional_libs import import_optional

from airline_gym.domain.tools import TOOL_TYPES, TOOLS, WRITE_TOOLS


@pytest.mark.reference
def test_tool_types_are_the_ones_the_reference_tools_declare() -> None:
    tools_module = import_optional("tau2.domains.airline.tools")
    from tau2.domains.airline.data_model import FlightDB
    from tau2.domains.airline.utils import AIRLINE_DB_PATH
    from tau2.environment.toolkit import get_tool_types

    reference = tools_module.AirlineTools(FlightDB.load(str(AIRLINE_DB_PATH)))
    declared = {name: kind.value for name, kind in get_tool_types(reference).items()}
    assert declared == TOOL_TYPES


def test_every_tool_has_a_type_and_the_writes_are_the_write_tools() -> None:
    assert set(TOOL_TYPES) == set(TOOLS)
    assert {name for name, kind in TOOL_TYPES.items() if kind == "write"} == WRITE_TOOLS
