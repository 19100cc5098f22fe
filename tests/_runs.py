"""Helpers for tests of a sweep's stored runs (python/jitterlab/sweep/store.py): this version's
run files (OUT/runs/<run_id>.run), and a run file turned into the layout an older version wrote
(a directory a run: `tables.pack` and its `done` record), to test that such an OUT is still read."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from jitterlab import sweep


def run_files(out: Path) -> list[Path]:
    """The run files of OUT, in run order."""
    return sorted((out / "runs").glob(f"*{sweep.RUN_FILE}"))


def record(p: Path) -> dict[str, Any]:
    return sweep.read_run_record(p)


def pack(p: Path) -> bytes:
    """A run file's pack: its first bytes, as many as its record says."""
    return p.read_bytes()[:record(p)["pack"]["bytes"]]


def to_dir_layout(p: Path) -> Path:
    """Turns run file `p` into the directory the previous version stored (runs/<run_id>/ holding
    `tables.pack`, when the run has rows, and the `done` record certifying it, as that version
    wrote it); returns the directory."""
    rec, blob = record(p), pack(p)
    d = p.with_name(p.name[:-len(sweep.RUN_FILE)])
    d.mkdir()
    files = {}
    if rec["parts"]:
        (d / sweep.PACK).write_bytes(blob)
        files[sweep.PACK] = {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}
    done = {"wall_s": rec["wall_s"], "identity": rec["identity"], "files": files, "parts": rec["parts"], "tables": rec["tables"],
            "requested": rec["requested"]}
    (d / "done").write_text(json.dumps(done) + "\n")
    p.unlink()
    return d
