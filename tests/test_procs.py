"""The sweep's processes keep the memory a run frees for the next (`_procs.keep_freed_memory`):
with glibc's defaults a block past its largest mmap threshold (32 MiB on 64-bit) is a fresh
mapping each time, every page faulted in again; kept in the heap, the pages are faulted once."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

# allocates, writes and frees a 40 MiB block 20 times; prints the minor page faults that took
_CYCLES = """
import resource, sys
sys.path.insert(0, {python!r})
from jitterlab import _procs
kept = _procs.keep_freed_memory() if sys.argv[1] == "keep" else None
n = 40 << 20
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    a = bytearray(n)
    a[::4096] = b"x" * (n // 4096)  # a byte written in every page
    del a
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_blocks_are_reused_not_faulted_in_again():
    pages = (40 << 20) // 4096  # 10,240 a block
    got = {}
    for mode in ("default", "keep"):
        p = subprocess.run([sys.executable, "-c", _CYCLES.format(python=str(ROOT / "python")), mode], capture_output=True, text=True, check=True)
        kept, faults = p.stdout.split()
        got[mode] = (kept, int(faults))
    assert got["keep"][0] == "True"
    assert got["default"][1] > 15 * pages  # a fresh mapping each time
    assert got["keep"][1] < 3 * pages  # the heap's pages, faulted once
