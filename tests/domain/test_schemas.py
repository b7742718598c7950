"""The tools array: the reference's schemas, byte for byte, with texts read at run time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from optional_libs import import_optional

from airline_gym.data import DATA_FILE_NAMES, TOOLS_SOURCE_NAME, data_files
from airline_gym.domain.reference_texts import parse_docstring
from airline_gym.domain.schemas import done_schema, tool_schemas
from airline_gym.domain.tools import TOOLS

PACKAGE = Path(__file__).resolve().parents[2] / "airline_gym"


@pytest.mark.reference
def test_each_schema_equals_the_reference_byte_for_byte() -> None:
    environment = import_optional("tau2.domains.airline.environment")
    theirs = [json.dumps(t.openai_schema) for t in environment.get_environment().get_tools()]
    ours = [json.dumps(s) for s in tool_schemas()]
    assert len(ours) == len(theirs) == 14
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine == reference


@pytest.mark.reference
@pytest.mark.long  # ~10 s: imports the reference's gym package
def test_done_schema_equals_the_reference_gym_tool() -> None:
    tool = import_optional("tau2.environment.tool")
    gym_agent = import_optional("tau2.gym.gym_agent")
    assert json.dumps(done_schema()) == json.dumps(tool.as_tool(gym_agent.done).openai_schema)


def test_order_and_names_are_our_tools() -> None:
    assert [s["function"]["name"] for s in tool_schemas()] == list(TOOLS)


def test_returned_schemas_are_fresh_copies() -> None:
    first = tool_schemas()
    first[0]["function"]["name"] = "renamed"
    first[0]["function"]["parameters"]["properties"].clear()
    first.pop()
    again = tool_schemas()
    assert len(again) == 14 and again[0]["function"]["name"] == "book_reservation"
    assert again[0]["function"]["parameters"]["properties"]


def test_no_reference_text_is_committed() -> None:
    """The descriptions exist only in the fetched data, never in our sources."""
    texts = set()
    for schema in [*tool_schemas(), done_schema()]:
        texts.add(schema["function"]["description"])
        params = schema["function"]["parameters"]
        for prop in params["properties"].values():
            texts.add(prop["description"])
        for model in params.get("$defs", {}).values():
            texts.update(p["description"] for p in model["properties"].values())
    texts = {t for t in texts if len(t) > 25}  # skip very short generic phrases
    assert len(texts) > 30
    for path in PACKAGE.rglob("*"):
        if path.suffix in (".py", ".md", ".json", ".txt") and path.is_file():
            source = path.read_text(encoding="utf-8")
            leaked = [t for t in texts if t in source]
            assert not leaked, f"{path} contains reference text: {leaked[:2]}"


def test_texts_are_read_from_the_data_in_use(tmp_path: Path) -> None:
    cache = data_files()
    folder = tmp_path / "flat"
    folder.mkdir()
    for name in DATA_FILE_NAMES:
        shutil.copy(cache.db.parent / name, folder / name)
    source = (folder / TOOLS_SOURCE_NAME).read_text(encoding="utf-8")
    original = tool_schemas()[2]["function"]["description"]  # cancel_reservation
    assert original in source
    (folder / TOOLS_SOURCE_NAME).write_text(
        source.replace(original, "Cancel it, edited."), encoding="utf-8"
    )
    edited = tool_schemas(folder)
    assert edited[2]["function"]["description"] == "Cancel it, edited."
    assert tool_schemas()[2]["function"]["description"] == original


def test_parse_docstring_google_style() -> None:
    doc = """
        Summary line.
        More text
         - indented item

        Args:
            first: One line.
            second (int): Spans
                two lines.
            third: Last.

        Returns:
            Something.
        Not a section line
        """
    text = parse_docstring(doc, "f")
    assert text.description == "Summary line.\n\nMore text\n - indented item"
    assert text.arguments == {"first": "One line.", "second": "Spans\ntwo lines.", "third": "Last."}
    short = parse_docstring("\n    Only a summary.\n\n\n    Args:\n        x: y\n", "g")
    assert short.description == "Only a summary." and short.arguments == {"x": "y"}
    assert parse_docstring("", "empty").description == "empty"


def test_list_arguments_use_defs_and_any_of() -> None:
    params = tool_schemas()[0]["function"]["parameters"]  # book_reservation
    assert list(params) == ["$defs", "properties", "required", "title", "type"]
    assert list(params["$defs"]) == ["FlightInfo", "Passenger", "Payment"]
    assert params["properties"]["flights"]["items"] == {
        "anyOf": [{"$ref": "#/$defs/FlightInfo"}, {"additionalProperties": True, "type": "object"}]
    }
    assert params["$defs"]["Payment"]["properties"]["amount"]["type"] == "integer"
    airports = tool_schemas()[5]["function"]["parameters"]  # list_all_airports
    assert airports == {"properties": {}, "title": "parameters", "type": "object"}
