#!/usr/bin/env python3
"""Writes the tables of every `_native.encode_pack` call of a sweep (default bench/chodorek-126.toml,
run once in this process as bench/sharepack.py runs it) to DIR as NNN-TABLE.parquet, and DIR/index.txt
(NNN, the pack's SHA-256, its tables in order): the input of the native crate's timing harness
`parquet_write::tests::bench_packs` (not a test), which encodes those packs again without Python:

    .venv/bin/python bench/dump_packs.py /tmp/packs
    PACKS_DIR=/tmp/packs PACKS_REPS=10 [PACKS_WARM=1] cargo test --release -p jitterlab-py --lib bench_packs -- --ignored --nocapture

The harness's first run records its packs' SHA-256s (DIR/sha-rust.txt; tables read back from Parquet
may have other null bitmaps than the sweep's) and later runs must match them: byte-for-byte checks of
an encoder change in seconds, beside bench/sharepack.py's check on the sweep's own tables.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--sweep", default="bench/chodorek-126.toml")
    a = ap.parse_args()
    import pyarrow as pa
    import pyarrow.parquet as pq
    import sharepack
    from jitterlab import _native

    os.makedirs(a.dir, exist_ok=True)
    calls = sharepack.capture(a.sweep)["encode_pack"]
    with open(os.path.join(a.dir, "index.txt"), "w") as idx:
        for i, (tables, align, min_rows) in enumerate(calls):
            _, _, sha = _native.encode_pack(tables, align, min_rows)
            for name, t in tables:
                pq.write_table(pa.table(t), os.path.join(a.dir, f"{i:03d}-{name}.parquet"))
            idx.write(f"{i:03d} {sha} {' '.join(n for n, _ in tables)}\n")
    print(f"{len(calls)} packs in {a.dir}")


if __name__ == "__main__":
    main()
