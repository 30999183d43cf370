"""real/fast/buffers.py: the attentions' memory is reused only once nothing holds the last array,
and a mapped weight is copied once while it lives."""

import os
import subprocess
import sys

import numpy as np
import pytest

from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model
from attention_workshop.real.catalog import MINILM_INSTALL
from attention_workshop.real.fast.buffers import LARGE_PAGE, packed, resident, reusable

SHAPE = (2, 3, 40, 40)


def address(array):
    return array.__array_interface__["data"][0]


def test_memory_comes_back_once_released():
    a = reusable(SHAPE, np.float32)
    a[...] = 1.0
    where = address(a)
    del a
    b = reusable(SHAPE, np.float32)
    assert address(b) == where and b.shape == SHAPE and b.flags.writeable


@pytest.mark.parametrize("keep", ["array", "slice", "transpose", "memoryview"])
def test_memory_held_in_any_form_is_never_handed_out_again(keep):
    a = reusable(SHAPE, np.float32)
    a[...] = 7.0
    held = {"array": a, "slice": a[1, 2], "transpose": a.T,
            "memoryview": memoryview(a)}[keep]
    del a
    b = reusable(SHAPE, np.float32)
    b[...] = -1.0
    assert (np.asarray(held) == 7.0).all()  # what the caller kept keeps its numbers


def test_each_slot_keeps_its_own_memory():
    a, b = reusable(SHAPE, np.float32, "one"), reusable(SHAPE, np.float32, "two")
    assert not np.shares_memory(a, b)
    where = address(a), address(b)
    del a, b
    a, b = reusable(SHAPE, np.float32, "one"), reusable(SHAPE, np.float32, "two")
    assert (address(a), address(b)) == where


def test_another_shape_gets_new_memory():
    a = reusable(SHAPE, np.float32)
    del a
    b = reusable((2, 3, 41, 41), np.float32)
    assert b.shape == (2, 3, 41, 41)
    c = reusable((5,), np.float64)
    assert c.dtype == np.float64 and not np.shares_memory(b, c)


def test_a_held_run_result_keeps_its_numbers():
    try:
        model = load_model("minilm")
    except WorkshopError:
        pytest.skip(f"MiniLM's weights are not installed ({MINILM_INSTALL})")
    first = model.run("the river bank by the water")
    names = ["attentions", "hidden_states", "queries", "keys", "values"]
    kept = {name: getattr(first, name).copy() for name in names}
    second = model.run("the money bank by the river")  # same length: the same shapes
    assert len(first.ids) == len(second.ids)
    for name in names:
        np.testing.assert_array_equal(getattr(first, name), kept[name])
        assert not np.shares_memory(getattr(first, name), getattr(second, name))


def mapping(array):  # -> the line of /proc/self/maps that holds array's first byte
    at = address(array)
    with open("/proc/self/maps") as maps:
        for line in maps:
            start, end = (int(part, 16) for part in line.split()[0].split("-"))
            if start <= at < end:
                return line
    raise AssertionError("no mapping holds the array")


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="Linux's /proc shows mappings")
def test_kept_memory_is_private_so_the_kernel_may_give_it_large_pages():
    # mmap's default for anonymous memory is shared ("s"), which gets no 2 MB pages
    for array in (reusable((1 << 20,), np.float32, slot="test large"), packed(np.ones(5))):
        assert mapping(array).split()[1] == "rw-p"


def test_packed_copies_lie_one_after_another_from_a_large_page():
    big = packed(np.zeros((LARGE_PAGE * 40 // 8,)))  # more than a mapping's 64 MB: its own
    assert big.nbytes > 64 << 20 and address(big) % LARGE_PAGE == 0 and not big.any()
    rng = np.random.default_rng(0)
    first = rng.integers(0, 256, size=(LARGE_PAGE // 64 + 3, 64), dtype=np.uint8)
    second = rng.normal(size=(7, 5)).astype(np.float32)
    first_copy, second_copy = packed(first), packed(second[:, 1:4])  # a strided view too
    np.testing.assert_array_equal(first_copy, first)
    np.testing.assert_array_equal(second_copy, second[:, 1:4])
    assert second_copy.flags.c_contiguous and second_copy.dtype == np.float32
    assert address(first_copy) % LARGE_PAGE == 0  # big's mapping was full: a new one began
    assert address(second_copy) - address(first_copy) == -(-first.nbytes // 64) * 64


def test_resident_is_a_copy_in_memory_made_once(tmp_path):
    mapped = tmp_path / "w.bin"
    np.arange(12, dtype=np.float32).tofile(mapped)
    w = np.memmap(mapped, np.float32, mode="r", shape=(3, 4))  # a file's pages, read-only
    copy = resident(w)
    np.testing.assert_array_equal(copy, w)
    assert not np.shares_memory(copy, w) and not isinstance(copy, np.memmap)
    assert resident(w) is copy  # once while w lives
    other = np.memmap(mapped, np.float32, mode="r", shape=(3, 4))
    assert resident(other) is not copy  # another array, its own copy
    transposed = resident(w.T)  # a view in another order: a C-ordered copy of that view
    np.testing.assert_array_equal(transposed, w.T)
    assert transposed.flags.c_contiguous


MAPPED_BY_MALLOC = """
import ctypes, sys
import numpy as np
class Info(ctypes.Structure):  # glibc's struct mallinfo2: hblkhd, bytes in mmap'ed blocks
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
if sys.argv[1] == "kept":
    from attention_workshop.real.fast.buffers import keep_freed_memory
    assert keep_freed_memory() and keep_freed_memory()  # once, then the same answer
before = libc.mallinfo2().hblkhd
a = np.empty(768 * 1024 // 4, np.float32)  # a 128-token product's output, 768 KB
print(libc.mallinfo2().hblkhd - before)
"""


def _glibc():  # -> whether this Python runs on glibc (Linux's usual C library)
    try:
        return "glibc" in (os.confstr("CS_GNU_LIBC_VERSION") or "")
    except (AttributeError, ValueError):  # no confstr (Windows), or no such name (macOS)
        return False


@pytest.mark.skipif(not _glibc(), reason="mallopt and mallinfo2 are glibc's")
@pytest.mark.parametrize(("how", "mapped"), [("default", True), ("kept", False)])
def test_kept_freed_memory_takes_a_products_array_from_the_heap(how, mapped):
    got = subprocess.run([sys.executable, "-c", MAPPED_BY_MALLOC, how], capture_output=True,
                         text=True, check=True).stdout
    assert (int(got) >= 768 * 1024) == mapped  # its own mapping by default, the heap once kept
