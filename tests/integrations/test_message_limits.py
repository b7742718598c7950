"""``decode_json`` decodes as ``json.loads`` does, on both sides of the C decoder's threshold."""

from __future__ import annotations

import json

import pytest

from airline_gym.integrations.message_limits import C_DECODER_BYTES, decode_json, utf8_size

PAD = " " * C_DECODER_BYTES  # makes any text take the pure-Python scanner


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "step", "data": {"message": {"content": "caf\\u00e9 \\"x"}, "n": [2.5, -3e2]}}',
        '{"a": [true, false, null, 0.5, -1e-9], "b": {"": {}}, "c": []}',
        json.dumps({"k": ["é" * 10, list(range(5000)), {"x": "y" * 20_000}]}),
        "[1, 2]",
        '"step"',
    ],
)
def test_the_same_value_as_json_loads_either_side_of_the_threshold(text):
    expected = json.loads(text)
    for padded in (text, text + PAD, PAD + text):
        value = decode_json(padded)
        assert json.dumps(value) == json.dumps(expected)
        assert type(value) is type(expected)


@pytest.mark.parametrize("text", ["{not json", '{"a": 1,}', "[1, 2", '{"a": "\x01"}', ""])
def test_bad_json_raises_what_json_loads_raises(text):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text + PAD)
    with pytest.raises(json.JSONDecodeError) as got:
        decode_json(text + PAD)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_a_decode_error_either_side_of_the_threshold(constant):
    assert json.loads(f"[{constant}]")  # what Python's json would have read
    for text in (f'{{"seed": {constant}}}', f'{{"seed": {constant}}}' + PAD):
        with pytest.raises(json.JSONDecodeError, match=f"{constant} is not a JSON number"):
            decode_json(text)


def test_deep_nesting_is_a_recursion_error_not_a_crash():
    with pytest.raises(RecursionError):
        decode_json("[" * 100_000 + "]" * 100_000)


def test_utf8_size_counts_bytes_not_characters():
    assert utf8_size("abc") == 3
    assert utf8_size("é" * 10) == 20
    assert utf8_size("\ud800") == 3  # a lone surrogate (json.loads can make one) still counts
