"""Helpers for tests of a sweep's stored runs (python/jitterlab/sweep/store.py): a local OUT's run
logs (OUT/runs/*.runlog) turned into run files (OUT/runs/<run_id>.run: an object store's layout
and the previous version's, still read), and a run file turned into the layout an older version
wrote (a directory a run: `tables.pack` and its `done` record), to test that such an OUT is still read."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from jitterlab import sweep
from jitterlab.sweep import store


def log_entries(out: Path) -> dict[int, store.LogEntry]:
    """Each run's newest entry in OUT's run logs."""
    return {i: e[0] for i, e in store._log_entries(out, os.listdir(out / "runs")).items()}


def flip(e: store.LogEntry, at: int | None = None, bit: int = 0x10) -> None:
    """Flips a bit of log entry `e`'s body in its run log, at byte `at` of the body (the middle of
    its pack by default): the entry no longer matches its checksum, and its run is done again."""
    if at is None:
        at = sweep.read_run_record(e)["pack"]["bytes"] // 2
    with open(e.log, "r+b") as f:
        f.seek(e.offset + at)
        b = f.read(1)
        f.seek(e.offset + at)
        f.write(bytes([b[0] ^ bit]))


def split_logs(out: Path) -> list[Path]:
    """Turns OUT's run logs into run files (each run's newest entry, byte for byte a run file's
    body), removes the logs, and returns the run files made."""
    made = []
    for i, e in sorted(log_entries(out).items()):
        p = out / "runs" / f"{i:06d}{sweep.RUN_FILE}"
        p.write_bytes(e.read_bytes())
        made.append(p)
    for p in (out / "runs").glob(f"*{store.LOG_SUFFIX}"):
        p.unlink()
    return made


def run_files(out: Path) -> list[Path]:
    """The run files of OUT, in run order (its run logs turned into run files first: `split_logs`)."""
    split_logs(out)
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
