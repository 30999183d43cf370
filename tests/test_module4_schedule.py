"""Module 4's two workers (modules/module4.py run): a failure in any task ends the module
with that error, the tasks not begun are dropped, and no worker is left running."""

import threading

import numpy as np
import pytest
from smollm2_reference import smollm2_path

import attention_workshop.real as real
from attention_workshop.modules import module4
from attention_workshop.real import checked_generation
from attention_workshop.report import Log


def workers():
    return [t for t in threading.enumerate() if t.name.startswith("module4")]


def test_the_float64_load_failing_ends_the_module_with_its_error(monkeypatch):
    smollm2_path()
    load, calls = real.load_model, []

    def float64_fails(name, *args, dtype="float32", **kwargs):
        calls.append(np.dtype(dtype).name)
        if np.dtype(dtype) == np.float64:
            raise MemoryError("no room for float64")
        return load(name, *args, dtype=dtype, **kwargs)

    ran = []
    monkeypatch.setattr(real, "load_model", float64_fails)
    monkeypatch.setattr(checked_generation, "checked", lambda *a: ran.append(a))
    with pytest.raises(MemoryError, match="no room for float64"):
        module4.run(Log(), {})
    assert calls == ["float32", "float64"] and ran == [] and workers() == []


def test_a_draft_failing_ends_the_module_with_its_error(monkeypatch):
    smollm2_path()

    def fails(*args, **kwargs):
        raise RuntimeError("the draft broke")

    monkeypatch.setattr(checked_generation, "draft", fails)
    with pytest.raises(RuntimeError, match="the draft broke"):
        module4.run(Log(), {})
    assert workers() == []
