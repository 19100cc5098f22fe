"""A sweep's storage: each run's tables under OUT/runs/<run_id>/, checked against their record,
and the record of the sweep in OUT/sweep.json.

Storage: each finished run is written at once, by the worker that ran it, under OUT/runs/<run_id>/
(one file, `tables.pack`, holding an image of each table asked for in `Sweep.tables`, including
the aggregates `Sweep.reduce` computes in the worker, encoded by the native module: Parquet for a
large table, which the client splices into the combined table as it is, Arrow IPC for a small
one, which it merges with other runs' into a row group; then a `done` marker giving each
table's place and row count in the pack, the pack's SHA-256 and the tables asked for, written
into a temporary directory renamed into place); workers send back a
receipt, not the tables (with Dask, OUT must be storage every worker shares with the client). A
failed run leaves `error.txt` there and the sweep goes on. Running
the same sweep into the same OUT skips finished runs whose files still match their `done` record,
redoes damaged ones (a flipped bit, a truncated or deleted file) and ones stored without a table
asked for now, with a line saying so, retries
failed ones and removes the temporary directories of killed runs; the verified runs' tables are
concatenated into OUT/<table>.parquet while the runs go on (each written under a temporary name,
renamed when complete), and certified by OUT/combined.json, which lets a rerun whose runs are all
finished reuse them (`COMBINED`).

OUT may be a URL for fsspec (s3://, gcs://, …; see `jitterlab._fspath`): runs are then written in
place and certified by their `done` record, written last.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from jitterlab import _fspath, _io, _lazy
from jitterlab.sweep.spec import SWEEP_FORMAT, RunSpec, Sweep, SweepError

if TYPE_CHECKING:
    import pyarrow as pa
else:  # a worker stores its runs' native tables (`_native.encode_pack`) without pyarrow
    pa = _lazy.module("pyarrow")

#: Where a sweep's results go: a local directory, or a directory on an fsspec filesystem (a URL).
Out = Path | _fspath.FsPath


def _run_dir(out: Out, run_id: int) -> Out:
    return out / "runs" / f"{run_id:06d}"


def _store(out: Out, res: dict[str, Any]) -> tuple[bytes, dict[str, list[int]]] | None:
    """Stores a finished run under OUT/runs/; returns its pack's bytes and parts (None: no pack).
    Locally in a temporary directory renamed into place; on an object store (no rename) in place,
    its `done` record written last."""
    if not isinstance(out, _fspath.FsPath):
        return _store_local(os.fspath(out), res)
    d = _run_dir(out, res["run_id"])
    try:
        _fspath.rmtree(d)
        d.mkdir(parents=True)
        blob, parts, files = _record(res)
        for name, data in files.items():  # the pack (when it has parts), then the record certifying it
            (d / name).write_bytes(data)
        return None if blob is None else (blob, parts)
    except OSError as e:
        raise _io._oserror(d, e, f"store run {res['run_id']}") from None


def _store_local(out: str, res: dict[str, Any]) -> tuple[bytes, dict[str, list[int]]] | None:
    """`_store` on a local disk with as few system calls as the layout allows (a run's storing is
    a fixed cost of every run): the temporary directory made without looking first (a killed
    run's is removed only when it is there), each file written unbuffered, the directory renamed
    onto the run's place (an earlier attempt's removed only when the rename finds one)."""
    d = os.path.join(out, "runs", f"{res['run_id']:06d}")
    tmp = d + f".tmp{os.getpid()}"
    try:
        try:
            os.mkdir(tmp)
        except FileExistsError:
            shutil.rmtree(tmp, ignore_errors=True)
            os.mkdir(tmp)
        except FileNotFoundError:
            os.makedirs(tmp)
        blob, parts, files = _record(res)
        for name, data in files.items():
            with open(os.path.join(tmp, name), "wb", buffering=0) as f:
                f.write(data)
        try:
            os.rename(tmp, d)  # atomic: a run directory is either complete or absent
        except OSError:  # the run's place is taken (a failed or damaged earlier attempt)
            shutil.rmtree(d, ignore_errors=True)
            os.replace(tmp, d)
        return None if blob is None else (blob, parts)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _io._oserror(Path(d), e, f"store run {res['run_id']}") from None


def _record(res: dict[str, Any]) -> tuple[bytes | None, dict[str, list[int]], dict[str, bytes]]:
    """A run's pack (None: a failed run), its parts, and its files in the order written: the pack
    (when it has parts), then the `done` record that certifies it (or a failed run's error.txt)."""
    if not res["ok"]:
        return None, {}, {"error.txt": (res["error"] + "\n\n" + res.get("traceback", "")).encode()}
    # one pack file a run, not one file a table: creating files is most of what storing a
    # small run costs (ext4: ~0.2 ms a file), and a 10,000-run sweep keeps 2 inodes a run
    blob, parts, sha = _encode_pack(res["tables"])  # encoded, packed and hashed in the native module
    files: dict[str, bytes] = {}
    record: dict[str, Any] = {}
    if parts:
        files[PACK] = blob
        record[PACK] = {"bytes": len(blob), "sha256": sha}
    # written last: the record that certifies the run's files
    done = (json.dumps({"wall_s": res["wall_s"], "identity": res.get("identity"), "files": record, "parts": parts, "tables": sorted(res["tables"]),
                        "requested": sorted(res.get("requested", res["tables"]))}, sort_keys=False, default=str) + "\n").encode()
    files["done"] = done
    res["done_sha256"] = hashlib.sha256(done).hexdigest()  # rides in the receipt (`_combined_digest`)
    return blob, parts, files


#: A run's stored tables: one file, PACK, holding each table as a file image, one after another at
#: PACK_ALIGN-byte offsets; the `done` record's "parts" gives each table's [offset, length, rows].
#: The images are encoded, packed and hashed by the native module (`_native.encode_pack`), the one
#: encoder of the combined tables too: a table of at least PARQUET_MIN_ROWS rows is a Parquet image
#: the client splices into OUT/<table>.parquet as it is (`_native.ParquetConcat`), so per-packet
#: rows are encoded once, by the worker, and never decoded by the client; a smaller one is an
#: Arrow IPC image (Parquet's fixed cost a column would dominate a tiny run), which the client
#: merges, many runs' at once, into a Parquet row group (`_native.merge_parts`). Parts are told
#: apart by their magic bytes (PAR1, ARROW1). Runs stored by older versions (pyarrow's images, or
#: a file a table: `<table>.arrow`, `<table>.parquet`) are still read, and their parts encoded
#: again as a worker would now (`_native_part`).
PACK = "tables.pack"
PACK_ALIGN = 64  # Arrow's buffer alignment: a part read from the file is used in place
RUN_EXT = ".arrow"
#: A run's table of at least this many rows is stored as Parquet and spliced into the combined
#: table as its own row group(s); smaller ones are merged with the next runs' (`_Combiner`).
PARQUET_MIN_ROWS = 4096
#: Rows a row group at most (pyarrow's default), in a run's Parquet part and in the combined tables
#: (the native encoder's MAX_GROUP_ROWS).
MAX_GROUP_ROWS = 1 << 20


def _encode_pack(tables: Mapping[str, pa.Table]) -> tuple[bytes, dict[str, list[int]], str]:
    """A run's tables with rows as its pack: the bytes, each part's [offset, length, rows] and the
    pack's SHA-256 (an absent part is an empty table: its absence is recorded in `done`)."""
    from jitterlab import _native

    blob, parts, sha = _native.encode_pack([(n, t) for n, t in tables.items() if t.num_rows], PACK_ALIGN, PARQUET_MIN_ROWS)
    return blob, {n: [off, size, rows] for n, off, size, rows in parts}, sha


def _encode_run_table(t: pa.Table) -> bytes:
    """`t` as a run's part (Parquet from PARQUET_MIN_ROWS rows, else Arrow IPC), as `_encode_pack` encodes it."""
    from jitterlab import _native

    return _native.encode_table(t, PARQUET_MIN_ROWS)


def _parquet_image(t: pa.Table) -> bytes:
    """`t` as a Parquet image, encoded as the combined tables are."""
    from jitterlab import _native

    return _native.encode_table(t, 0)


def _is_parquet(buf: pa.Buffer | bytes) -> bool:
    return len(buf) >= 4 and bytes(memoryview(buf)[:4]) == b"PAR1"


def _native_part(buf: bytes) -> bool:
    """Whether part `buf` was written by the native encoder (the writer's name in a Parquet
    footer, the key `jitterlab` in an Arrow IPC one): a part of an older version's (pyarrow's
    images; IPC ones may hold LZ4 frames) is decoded by pyarrow and encoded again before it is
    combined, so the combined files depend only on the runs' tables."""
    if _is_parquet(buf):
        n = int.from_bytes(buf[-8:-4], "little") if len(buf) >= 12 else 0
        return b"parquet-rs version" in buf[max(0, len(buf) - 8 - n):-8]
    n = int.from_bytes(buf[-10:-6], "little") if len(buf) >= 16 else 0
    return b"jitterlab" in buf[max(0, len(buf) - 10 - n):-10]


def _decode_part(buf: pa.Buffer) -> pa.Table:
    """A pack part (a table's Parquet or Arrow IPC file image), used in place where it can be."""
    if _is_parquet(buf):
        import pyarrow.parquet as pq  # not at import: a worker that only stores runs reads no Parquet

        return pq.read_table(pa.BufferReader(buf))
    return pa.ipc.open_file(buf).read_all()


def read_run_tables(d: Out, names: Iterable[str]) -> dict[str, pa.Table]:
    """The tables of `names` stored by the run in directory `d` (a name the run stored no rows of
    is left out): its pack read once, each part used in place."""
    names = list(names)
    got = read_run_pack(d)
    if got is not None:
        return decode_pack(got[0], got[1], names)
    out = {}
    for n in names:
        f = d / f"{n}{RUN_EXT}"
        if f.exists():
            out[n] = pa.ipc.open_file(pa.py_buffer(f.read_bytes())).read_all()
        elif (d / f"{n}.parquet").exists():  # a run stored by an older jitterlab
            out[n] = _fspath.read_parquet(d / f"{n}.parquet")
    return out


def decode_pack(blob: bytes, parts: Mapping[str, list[int]], names: Iterable[str]) -> dict[str, pa.Table]:
    """The tables of `names` in a run's pack (`parts`: its done record's), each used in place."""
    buf = pa.py_buffer(blob)
    return {n: _decode_part(buf.slice(parts[n][0], parts[n][1])) for n in names if n in parts}


def read_run_pack(d: Out) -> tuple[bytes, dict[str, list[int]]] | None:
    """The pack's bytes and parts of the run stored in directory `d` (None: stored by an older
    version, a file a table, or no rows at all)."""
    pack = d / PACK
    if not pack.exists():
        return None
    return pack.read_bytes(), json.loads((d / "done").read_text()).get("parts", {})


def read_run_table(d: Out, name: str) -> pa.Table | None:
    """Table `name` stored by the run in directory `d` (None: the run stored no rows of it)."""
    return read_run_tables(d, [name]).get(name)


def verify_run(d: Out, need: Iterable[str] = ()) -> str | None:
    """None when run directory `d` is finished, stored every table of `need` (a run stored without
    a table asked for now, e.g. `--keep packets` added later, is done again) and every file
    matches its `done` record (rows and SHA-256); otherwise why not, in a few words (for the
    "redone" line)."""
    return _verify_run(d, need)[0]


def _verify_run(d: Out, need: Iterable[str] = (), identity: Mapping[str, Any] | None = None) -> tuple[str | None, str | None]:
    """`verify_run`'s answer and, for a finished run, the SHA-256 of its done record (which
    certifies its files: see `_combined_digest`). With `identity` ({"sweep": digest, "seed": seed}
    of `run_identity`), a run whose record names another sweep or seed is not this one's (the
    sweep's digest hashes every run's parameters and seed in run order, so a record of this
    digest in this run's directory holds this run's parameters)."""
    done = d / "done"
    if not done.is_file():
        return "not finished", None
    try:
        raw = done.read_bytes()
        rec = json.loads(raw)
    except (OSError, ValueError):
        return "its done record is damaged", None
    files = rec.get("files") if isinstance(rec, dict) else None
    if not isinstance(files, dict):
        return "written by an older jitterlab without checksums", None
    if identity is not None:
        got = rec.get("identity")
        if not isinstance(got, dict):
            return "its done record does not say which sweep produced it", None
        if got.get("sweep") != identity["sweep"]:
            return "produced by another sweep", None
        if got.get("seed") != identity["seed"]:
            return f"produced with seed {got.get('seed')}, not {identity['seed']}", None
    missing = sorted(set(need) - set(rec.get("requested", need)))
    if missing:
        return f"stored without {', '.join(missing)}", None
    parts = rec.get("parts", {})
    if parts and (PACK not in files or not all(isinstance(p, list) and len(p) == 3 and 0 <= p[0] and p[0] + p[1] <= files[PACK].get("bytes", -1)
                                                for p in parts.values())):
        return "its done record is damaged", None
    for name, meta in files.items():
        f = d / name
        if not f.is_file():
            return f"{name} is missing", None
        try:
            if _fspath.sha256(f) != meta.get("sha256"):
                return f"{name} does not match its checksum (damaged)", None
        except OSError as e:
            return f"{name} cannot be read ({e.strerror})", None
    stored: Iterable[Out] = itertools.chain(d.glob(f"*{RUN_EXT}"), d.glob("*.parquet"), d.glob("*.pack"))
    extra = {p.name for p in stored} - set(files)
    if extra:
        return f"{sorted(extra)[0]} is not in its done record", None
    return None, hashlib.sha256(raw).hexdigest()


def _remove_stale_tmp(out: Out) -> int:
    """Removes runs/*.tmpPID directories whose process is gone (a killed run); returns how many.
    An object store has none (runs are written in place)."""
    n = 0
    if isinstance(out, _fspath.FsPath):
        return 0
    for t in (out / "runs").glob("*.tmp*"):
        m = re.search(r"\.tmp(\d+)$", t.name)
        pid = int(m.group(1)) if m else None
        if pid is not None and pid != os.getpid():
            try:
                os.kill(pid, 0)
                continue  # alive: another sweep is writing it
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
        shutil.rmtree(t, ignore_errors=True)
        n += 1
    return n


def _check_out(out: Out, specs: list[RunSpec], sweep: Sweep) -> str:
    """Refuses an OUT holding another sweep's results; writes sweep.json; returns the sweep's digest."""
    digest = hashlib.sha256("\n".join(s.key() for s in specs).encode() + json.dumps(sweep.scenario, sort_keys=True).encode()).hexdigest()
    man = out / "sweep.json"
    if man.exists():
        try:
            old = json.loads(man.read_text())
        except (OSError, ValueError):
            old = {}
        if old.get("digest") != digest:
            raise SweepError(f"{out}: holds results of a different sweep (its parameters, seeds or scenario differ); use another --out or delete it")
        return digest
    out.mkdir(parents=True, exist_ok=True)
    from jitterlab import provenance

    prov = provenance.collect(sorted({s.seed for s in specs}), sweep.scenario, sweep_seed=sweep.seed)
    _fspath.write_text(man, json.dumps({"format_version": SWEEP_FORMAT, "schema_version": provenance.SCHEMA_VERSION,
                               "provenance": prov, "source": sweep.backend, "name": sweep.name, "digest": digest, "runs": len(specs),
                               "seed": sweep.seed, "replications": sweep.replications, "scenario": sweep.scenario,
                               "params": [p.name for p in sweep.params] + [p.name for p in sweep.zipped],
                               "random": sweep.random, "tables": list(sweep.tables)}, indent=2, sort_keys=True, default=str) + "\n")
    return digest


def run_identity(sweep_digest: str, spec: RunSpec) -> dict[str, Any]:
    """What produced a run, kept in its `done` record: the sweep's digest (its scenario, every
    run's parameters and seeds), the run's parameters and its seed. A resumed sweep redoes a run
    whose record names another identity (another sweep wrote it into this OUT)."""
    return json.loads(json.dumps({"sweep": sweep_digest, "params": spec.params, "seed": spec.seed}, sort_keys=True, default=str))
