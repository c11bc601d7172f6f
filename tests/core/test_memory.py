"""release_freed_memory: freed heap memory goes back to the system on glibc, and it never raises."""

from __future__ import annotations

import platform

import pytest

from aisle.core.memory import release_freed_memory


def _anon_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon"))


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_heap_memory_is_given_back() -> None:
    blocks = [bytearray(64 * 1024) for _ in range(3000)]  # 64 KiB each: from the heap, not mmap
    for block in blocks[:-1]:
        block[0] = 1
    del blocks[:-1]  # the last one pins the heap's top: only a trim can give the rest back
    before = _anon_kib()
    assert release_freed_memory() is True
    assert _anon_kib() < before - 64 * 1024  # well over a third of the 190 MiB freed went back
    assert blocks[0][0] == 0


def test_a_second_call_has_nothing_to_give_and_never_raises() -> None:
    release_freed_memory()
    assert release_freed_memory() in (True, False)
