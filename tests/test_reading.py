"""reading, the one door for users' files: what it reads (worked here by hand), and each
limit exactly at its edge. tests/test_hostile_files.py runs the same through the commands."""

import json

import pytest

from attention_workshop.errors import WorkshopError
from attention_workshop.reading import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_DIGITS,
    printable,
    read_data,
    read_json,
    read_text,
    refuse,
)


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def refused(call, *args):  # -> the message
    with pytest.raises(WorkshopError) as info:
        call(*args)
    return str(info.value)


def test_the_one_wording():
    err = refuse("answers file", "a.txt", "line 3: expected 'Q: A'", "see docs/quiz.md")
    assert str(err) == "cannot read answers file 'a.txt': line 3: expected 'Q: A'; see docs/quiz.md"


@pytest.mark.parametrize(("name", "text"), [
    ("t.toml", 'axes = ["x", "y"]\n[words]\nup = [1, 0.5]\n"big bank" = [-2, 1e3]\n'),
    ("t.json", '{"axes": ["x", "y"], "words": {"up": [1, 0.5], "big bank": [-2, 1e3]}}'),
    ("T.JSON", '\ufeff{"axes": ["x", "y"], "words": {"up": [1, 0.5], "big bank": [-2, 1e3]}}'),
])
def test_reads_toml_and_json_alike(tmp_path, name, text):
    doc = read_data(write(tmp_path, name, text), "table file", "see docs")
    assert doc == {"axes": ["x", "y"], "words": {"up": [1, 0.5], "big bank": [-2, 1000.0]}}


def test_text_keeps_every_character_but_a_leading_bom(tmp_path):
    path = write(tmp_path, "lesson.md", "\ufeffcaf\u00e9\r\n  line 2\n")
    assert read_text(path, "lesson") == "caf\u00e9\r\n  line 2\n"


def nested(levels, fmt):  # a document `levels` deep: the top table, then lists
    inner = "[" * (levels - 1) + "]" * (levels - 1)
    return f'{{"a": {inner}}}' if fmt == "json" else f"a = {inner}\n"


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_depth_limit_is_exact(tmp_path, fmt):
    ok = write(tmp_path, f"ok.{fmt}", nested(MAX_DEPTH, fmt))
    assert read_data(ok, "table file", "see docs")["a"] is not None
    deep = write(tmp_path, f"deep.{fmt}", nested(MAX_DEPTH + 1, fmt))
    assert refused(read_data, deep, "table file", "see docs") == (
        f"cannot read table file '{deep}': it nests more than {MAX_DEPTH} levels deep; see docs")


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_digit_limit_is_exact(tmp_path, fmt):
    def doc(digits):
        return f'{{"n": {digits}}}' if fmt == "json" else f"n = {digits}\n"

    biggest = "9" * MAX_DIGITS
    assert read_data(write(tmp_path, f"ok.{fmt}", doc(biggest)), "x", "y") == {"n": int(biggest)}
    path = write(tmp_path, f"long.{fmt}", doc("1" + "0" * MAX_DIGITS))
    assert f"it holds {MAX_DIGITS + 1} digits in a row" in refused(read_data, path, "x", "y")


def test_size_cap_is_exact(tmp_path):
    text = "#" * (MAX_BYTES - 1) + "\n"
    assert read_text(write(tmp_path, "ok.txt", text), "lesson") == text
    path = write(tmp_path, "big.txt", text + "\n")
    assert refused(read_text, path, "lesson") == (
        f"cannot read lesson '{path}': it is 4.0 MB, over the 4 MB cap; give a smaller file")


def test_json_duplicate_keys_refused_at_any_depth(tmp_path):
    path = write(tmp_path, "c.json", '{"a": {"b": [{"c": 1, "c": 2}]}}')
    assert 'key "c" appears twice in one object' in refused(read_data, path, "x", "y")


@pytest.mark.parametrize(("text", "where"), [
    ('{"a": [1, 2, NaN]}', "a[2] is nan"),
    ('{"a": {"b c": Infinity}}', 'a."b c" is inf'),
    ('{"a": [[1e400]]}', "a[0][0] is inf"),
])
def test_non_finite_numbers_are_located(tmp_path, text, where):
    path = write(tmp_path, "d.json", text)
    assert refused(read_data, path, "x", "y").endswith(
        f": {where}; every number must be finite (no NaN or inf); y")


def test_read_json_reads_a_model_config_whatever_its_name(tmp_path):
    """The door real/ can use for config.json: same checks, any JSON value back."""
    config = {"model_type": "bert", "num_hidden_layers": 6, "layer_norm_eps": 1e-12}
    path = write(tmp_path, "config.json", json.dumps(config))
    assert read_json(path, "config file", "is the model folder complete?") == config
    bad = write(tmp_path, "config", '{"num_hidden_layers": 1' + "0" * 300 + "}")
    message = refused(read_json, bad, "config file", "is the model folder complete?")
    assert message.startswith(f"cannot read config file '{bad}': it holds 301 digits in a row")


def test_printable_keeps_messages_on_one_line():
    assert printable("a\nb") == "a\\nb"
    assert printable("caf\u00e9") == "caf\u00e9"
    assert printable("x" * 50, 10) == "x" * 9 + "\u2026"
