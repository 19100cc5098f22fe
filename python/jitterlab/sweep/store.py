"""A sweep's storage: each run appended to its process's run log, OUT/runs/*.runlog (on an object
store: one file a run, OUT/runs/<run_id>.run), checked against its record, and the record of the
sweep in OUT/sweep.json.

Storage: each finished run is written at once, by the worker that ran it, as one entry appended
to that process's run log (LOG_SUFFIX; on an object store, which cannot append, as one object
OUT/runs/<run_id:06d>.run, RUN_FILE). An entry holds what a run file holds: its pack (an image of each table asked for in
`Sweep.tables`, including the aggregates `Sweep.reduce` computes in the worker, encoded by the
native module: Parquet for a large table, which the client splices into the combined table as
it is, Arrow IPC for a small one, which it merges with other runs' into a row group), then its
record (JSON: each table's place and row count in the pack, the pack's SHA-256, what produced
the run, the tables asked for), then a fixed trailer (the record's length and RUN_MAGIC); a log
entry has a header before it (LOG_MAGIC, the run id, the body's length), and a run file is
written under a temporary name and renamed into place. Appending costs a run ~4 µs where creating
a file cost 0.05-0.5 ms of kernel CPU (ext4's inode allocator skips recently freed inodes:
`find_get_block`, `recently_deleted`), a third of a tiny run's CPU. Workers send back a receipt, not the tables (with Dask, OUT must be storage every
worker shares with the client). A failed run leaves OUT/runs/<run_id>.error.txt and the sweep
goes on. Running the same sweep into the same OUT skips finished runs whose bytes still match
their record, redoes damaged ones (a flipped bit, a truncated file, a damaged trailer or record, a
deleted file, a log entry cut short or damaged) and ones stored without a table asked for now, with a line saying so, retries
failed ones and removes the temporary files of killed runs; the verified runs' tables are
concatenated into OUT/<table>.parquet while the runs go on (each written under a temporary name,
renamed when complete), and certified by OUT/combined.json, which lets a rerun whose runs are all
finished reuse them (`COMBINED`). Runs stored as run files (an object store's layout, and the
previous version's locally) and by older versions (a directory a run, OUT/runs/<run_id>/, holding
`tables.pack` and its `done` record, or a file a table) are read, verified and reused as they are.

OUT may be a URL for fsspec (s3://, gcs://, …; see `jitterlab._fspath`): a run file is then one
object written in place (an object store has no rename; a partial object fails its trailer).
"""
from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from jitterlab import _fspath, _io, _lazy, _native
from jitterlab.sweep.runlog import (LOG_SUFFIX, RUN_FILE, LogEntry, _append, _log_entries, _scan_log, _write_all,  # noqa: F401 (re-exported)
                                    close_logs)
from jitterlab.sweep.spec import SWEEP_FORMAT, RunSpec, Sweep, SweepError

if TYPE_CHECKING:
    import pyarrow as pa
else:  # a worker stores its runs' native tables (`_native.encode_pack`) without pyarrow
    pa = _lazy.module("pyarrow")

#: Where a sweep's results go: a local directory, or a directory on an fsspec filesystem (a URL).
Out = Path | _fspath.FsPath


def _run_dir(out: Out, run_id: int) -> Out:
    """Where an older version stored run `run_id` (a directory: its pack and `done` record)."""
    return out / "runs" / f"{run_id:06d}"


def _run_file(out: Out, run_id: int, ok: bool = True) -> Out:
    """Where run `run_id` is stored: its run file (RUN_FILE), or a failed run's error (ERROR_FILE)."""
    return out / "runs" / f"{run_id:06d}{RUN_FILE if ok else ERROR_FILE}"


def _stored_names(names: Iterable[str]) -> dict[int, list[str]]:
    """What OUT/runs/ holds of each run (`names`: the directory's listing), by run id, in the order
    a reader takes them: this version's run file, an older version's run directory, a failed run's
    error file (killed runs' temporaries are not a run's)."""
    order = {RUN_FILE: 0, "": 1, ERROR_FILE: 2}
    got: dict[int, list[tuple[int, str]]] = {}
    for n in names:
        for suffix, rank in order.items():
            rid = n[:len(n) - len(suffix)] if n.endswith(suffix) else None
            if rid is not None and rid.isdigit():
                got.setdefault(int(rid), []).append((rank, n))
                break
    return {i: [n for _, n in sorted(v)] for i, v in got.items()}


def _stored_runs(out: Out, names: Iterable[str]) -> tuple[dict[int, list[Out | LogEntry]], dict[int, list[Out]]]:
    """What OUT/runs/ holds of each run (`names`: its listing), by run id, as every reader takes it
    (the driver's resume, `collect`): the stored forms to try in turn, the first that verifies
    being the run's — its run-log entries (the newest first), its run file, an older version's
    run directory holding its `done` record — and every file or directory of the run (those, a
    failed run's error file), which a run done again or found in a log leaves stale."""
    names = list(names)
    runs = out / "runs"
    logged = _log_entries(out, names)
    files = {i: [runs / n for n in found] for i, found in _stored_names(names).items()}
    tried: dict[int, list[Out | LogEntry]] = {}
    for i in logged.keys() | files.keys():
        rid = f"{i:06d}"
        tried[i] = [*logged.get(i, []),
                    *(f for f in files.get(i, []) if f.name.endswith(RUN_FILE) or (f.name == rid and (f / "done").exists()))]
    return tried, files


def _store(out: Out, res: dict[str, Any]) -> tuple[bytes, dict[str, list[int]]] | None:
    """Stores a finished run in OUT/runs/ (its run file, or a failed run's error file); returns
    its pack's bytes and parts (None: no pack). Locally under a temporary name renamed into
    place; on an object store (no rename) as one object written in place: a partial one fails
    its trailer or its checksum."""
    if not isinstance(out, _fspath.FsPath):
        return _store_local(os.fspath(out), res)
    p = _run_file(out, res["run_id"], res["ok"])
    try:
        blob, parts, tail = _record(res)
        data = blob + tail if blob else tail
        try:
            p.write_bytes(data)
        except FileNotFoundError:  # a filesystem with directories, runs/ not made yet
            p.parent.mkdir(parents=True)
            p.write_bytes(data)
        return None if blob is None else (blob, parts)
    except OSError as e:
        raise _io._oserror(p, e, f"store run {res['run_id']}") from None


def _store_local(out: str, res: dict[str, Any]) -> tuple[bytes, dict[str, list[int]]] | None:
    """`_store` on a local disk: a finished run appended to this process's run log (`_append`;
    `res["where"]` then says where: the log's name, the body's offset and length), a failed one
    as its error file (one file created under a temporary name and renamed into place: rare)."""
    runs = os.path.join(out, "runs")
    try:
        blob, parts, tail = _record(res)
        if res["ok"]:
            res["where"] = _append(runs, int(res["run_id"]), [blob, tail] if blob else [tail])
            return None if blob is None else (blob, parts)
        p = os.path.join(runs, f"{res['run_id']:06d}{ERROR_FILE}")
    except OSError as e:
        raise _io._oserror(Path(runs), e, f"store run {res['run_id']}") from None
    tmp = p + f".tmp{os.getpid()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileNotFoundError:  # the sweep's first run: runs/ made now
            os.makedirs(runs, exist_ok=True)
            fd = os.open(tmp, flags, 0o666)
        try:
            _write_all(fd, [tail])
        finally:
            os.close(fd)
        os.rename(tmp, p)
        return None
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise _io._oserror(Path(p), e, f"store run {res['run_id']}") from None


def _record(res: dict[str, Any]) -> tuple[bytes | None, dict[str, list[int]], bytes]:
    """A run's pack (None: a failed run), its parts, and what follows the pack in its run file:
    its record and the trailer (a failed run: its error file's text)."""
    if not res["ok"]:
        return None, {}, (res["error"] + "\n\n" + res.get("traceback", "")).encode()
    # one file a run, not one file a table nor a directory a run: creating files and directories
    # is most of what storing a small run costs (ext4: ~0.2 ms a file)
    blob, parts, sha = _encode_pack(res["tables"])  # encoded, packed and hashed in the native module
    record = (json.dumps({"wall_s": res["wall_s"], "identity": res.get("identity"), "pack": {"bytes": len(blob), "sha256": sha},
                          "parts": parts, "tables": sorted(res["tables"]), "requested": sorted(res.get("requested", res["tables"]))},
                         default=str) + "\n").encode()
    res["done_sha256"] = _native.sha256_hex(record)  # rides in the receipt (`_combined_digest`)
    return blob, parts, record + len(record).to_bytes(8, "little") + RUN_MAGIC


#: A run stored by this version: one file, OUT/runs/<run_id:06d>.run, holding its pack (PACK's
#: bytes: each table's image, `parts`), then its record (JSON, UTF-8, a newline at its end:
#: wall_s, identity, pack {bytes, sha256}, parts, tables, requested), then a trailer of
#: TRAILER_BYTES: the record's length (8 bytes, little-endian) and RUN_MAGIC. A file whose last
#: bytes are not the magic (truncated, or written in part), whose record does not parse or does
#: not add up to its size, or whose pack fails its SHA-256, is damaged (the run is done again).
#: A failed run leaves OUT/runs/<run_id:06d>.error.txt (the error, a blank line, the traceback).
ERROR_FILE = ".error.txt"
RUN_MAGIC = b"JLRUN\x00v1"
TRAILER_BYTES = 8 + len(RUN_MAGIC)

#: A run's stored tables: its pack (the start of its run file; PACK, a file of its own, in an older
#: version's run directory), each table as a file image, one after another at PACK_ALIGN-byte
#: offsets; the run's record's "parts" gives each table's [offset, length, rows].
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


def _stored(d: Out | LogEntry) -> Out | LogEntry:
    """The stored run that `d` names: a run log's entry, a run file (`<id>.run`), an older
    version's run directory, or the run's directory name when it is stored as a run file
    (`runs/000007` for `runs/000007.run`)."""
    if isinstance(d, LogEntry) or d.name.endswith(RUN_FILE):
        return d
    f = d.with_name(d.name + RUN_FILE)
    return f if f.exists() else d


def read_run_tables(d: Out | LogEntry, names: Iterable[str]) -> dict[str, pa.Table]:
    """The tables of `names` stored by run `d` (its log entry, its run file, or an older version's
    directory; see `_stored`); a name the run stored no rows of is left out. The pack is read once, each part
    used in place."""
    names = list(names)
    d = _stored(d)
    got = read_run_pack(d)
    if got is not None or isinstance(d, LogEntry):
        return decode_pack(got[0], got[1], names) if got is not None else {}
    out = {}
    for n in names:
        f = d / f"{n}{RUN_EXT}"
        if f.exists():
            out[n] = pa.ipc.open_file(pa.py_buffer(f.read_bytes())).read_all()
        elif (d / f"{n}.parquet").exists():  # a run stored by an older jitterlab
            out[n] = _fspath.read_parquet(d / f"{n}.parquet")
    return out


def decode_pack(blob: bytes, parts: Mapping[str, list[int]], names: Iterable[str]) -> dict[str, pa.Table]:
    """The tables of `names` in a run's pack (`parts`: its record's), each used in place."""
    buf = pa.py_buffer(blob)
    return {n: _decode_part(buf.slice(parts[n][0], parts[n][1])) for n in names if n in parts}


def read_run_pack(d: Out | LogEntry) -> tuple[bytes, dict[str, list[int]]] | None:
    """The pack's bytes and parts of run `d` (see `_stored`; None: stored by an older version, a
    file a table, or no rows at all)."""
    d = _stored(d)
    if isinstance(d, LogEntry) or d.name.endswith(RUN_FILE):
        data = d.read_bytes()
        rec, why = _run_record(data, d.name)
        if rec is None:
            raise ValueError(f"{d}: {why}")
        n = rec["pack"]["bytes"]
        return (data[:n] if n < len(data) else data), rec.get("parts", {})
    pack = d / PACK
    if not pack.exists():
        return None
    return pack.read_bytes(), json.loads((d / "done").read_text()).get("parts", {})


def _read_stored_pack(out: Out, run_id: int, entry: LogEntry | None = None) -> tuple[bytes, dict[str, list[int]]] | None:
    """`read_run_pack` of run `run_id` of OUT: its log entry when one is given, else its run file
    read at once (no look first), else an older version's directory."""
    if entry is not None:
        return read_run_pack(entry)
    try:
        return read_run_pack(_run_file(out, run_id))
    except FileNotFoundError:
        return read_run_pack(_run_dir(out, run_id))


def read_run_record(d: Out | LogEntry) -> dict[str, Any]:
    """The record of run `d` (see `_stored`): its run file's, or an older version's `done` record
    (ValueError: a run file whose trailer or record is damaged)."""
    d = _stored(d)
    if not (isinstance(d, LogEntry) or d.name.endswith(RUN_FILE)):
        return dict(json.loads((d / "done").read_bytes()))
    rec, why = _run_record(d.read_bytes(), d.name)
    if rec is None:
        raise ValueError(f"{d}: {why}")
    return rec


def read_run_table(d: Out | LogEntry, name: str) -> pa.Table | None:
    """Table `name` stored by run `d` (see `_stored`; None: the run stored no rows of it)."""
    return read_run_tables(d, [name]).get(name)


def verify_run(d: Out | LogEntry, need: Iterable[str] = ()) -> str | None:
    """None when run `d` (see `_stored`) is finished, stored every table of `need` (a run stored
    without a table asked for now, e.g. `--keep packets` added later, is done again) and its bytes
    match its record (size and SHA-256); otherwise why not, in a few words (for the "redone" line)."""
    return _verify_run(_stored(d), need)[0]


def _run_record(data: bytes, name: str) -> tuple[dict[str, Any] | None, str]:
    """A run file's record, checked against the file's size (None and why not: damaged)."""
    if len(data) < TRAILER_BYTES or data[-len(RUN_MAGIC):] != RUN_MAGIC:
        return None, f"{name} is truncated or its trailer is damaged"
    n = int.from_bytes(data[-TRAILER_BYTES:-len(RUN_MAGIC)], "little")
    if n > len(data) - TRAILER_BYTES:
        return None, f"{name} is truncated or its trailer is damaged"
    try:
        rec = json.loads(data[len(data) - TRAILER_BYTES - n:len(data) - TRAILER_BYTES])
        pack = rec["pack"]
        if not (isinstance(pack["bytes"], int) and isinstance(pack["sha256"], str) and isinstance(rec.get("parts", {}), dict)):
            raise ValueError
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        return None, f"{name}: its record is damaged"
    if pack["bytes"] + n + TRAILER_BYTES != len(data):
        return None, f"{name}: its record does not match the file's size (damaged)"
    return rec, ""


def _verify_run(d: Out | LogEntry, need: Iterable[str] = (), identity: Mapping[str, Any] | None = None) -> tuple[str | None, str | None]:
    """`verify_run`'s answer and, for a finished run, the SHA-256 of its record (which certifies
    its tables: see `_combined_digest`). `d` is a run file (<id>.run) or an older version's run
    directory. With `identity` ({"sweep": digest, "seed": seed} of `run_identity`), a run whose
    record names another sweep or seed is not this one's (the sweep's digest hashes every run's
    parameters and seed in run order, so a record of this digest in this run's place holds this
    run's parameters)."""
    if not (isinstance(d, LogEntry) or d.name.endswith(RUN_FILE)):
        return _verify_run_dir(d, need, identity)
    try:
        data = d.read_bytes()
    except FileNotFoundError:
        return "not finished", None
    except OSError as e:
        return f"{d.name} cannot be read ({e.strerror})", None
    rec, damaged = _run_record(data, d.name)
    if rec is None:
        return damaged, None
    why = _not_wanted(rec, need, identity)
    if why is None and not _parts_fit(rec.get("parts", {}), rec["pack"]["bytes"]):
        why = f"{d.name}: its record is damaged"
    if why is None and _native.sha256_hex(memoryview(data)[:rec["pack"]["bytes"]]) != rec["pack"]["sha256"]:
        why = f"{d.name} does not match its checksum (damaged)"
    if why is not None:
        return why, None
    n = len(data) - rec["pack"]["bytes"] - TRAILER_BYTES
    return None, _native.sha256_hex(memoryview(data)[rec["pack"]["bytes"]:rec["pack"]["bytes"] + n])


def _not_wanted(rec: Mapping[str, Any], need: Iterable[str], identity: Mapping[str, Any] | None) -> str | None:
    """Why a run's record is not this sweep's run (another sweep or seed), or lacks a table of `need`."""
    if identity is not None:
        got = rec.get("identity")
        if not isinstance(got, dict):
            return "its record does not say which sweep produced it"
        if got.get("sweep") != identity["sweep"]:
            return "produced by another sweep"
        if got.get("seed") != identity["seed"]:
            return f"produced with seed {got.get('seed')}, not {identity['seed']}"
    missing = sorted(set(need) - set(rec.get("requested", need)))
    return f"stored without {', '.join(missing)}" if missing else None


def _parts_fit(parts: Mapping[str, Any], size: int) -> bool:
    """Whether every part's [offset, length, rows] lies within a pack of `size` bytes."""
    return all(isinstance(p, list) and len(p) == 3 and all(isinstance(x, int) for x in p) and 0 <= p[0] and 0 <= p[1] and p[0] + p[1] <= size
               for p in parts.values())


def _verify_run_dir(d: Out, need: Iterable[str], identity: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """`_verify_run` of a run stored by an older version: directory `d`, its files (`tables.pack`,
    or a file a table) certified by its `done` record (the record's SHA-256 for a finished run)."""
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
    why = _not_wanted(rec, need, identity)
    if why is not None:
        return why, None
    parts = rec.get("parts", {})
    if parts and (PACK not in files or not _parts_fit(parts, files[PACK].get("bytes", -1))):
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
    return None, _native.sha256_hex(raw)


def _remove(p: Out) -> None:
    """Removes a stored run's file or an older version's run directory (nothing when absent)."""
    if isinstance(p, _fspath.FsPath):
        p.rmtree()
    elif p.is_dir():
        import shutil  # not at import: it brings bz2, lzma, zlib

        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def _remove_stale_tmp(out: Out) -> int:
    """Removes runs/*.tmpPID files (and an older version's directories) whose process is gone (a
    killed run); returns how many. An object store has none (runs are written in place)."""
    n = 0
    if isinstance(out, _fspath.FsPath):
        return 0
    for t in (out / "runs").glob("*.tmp*"):
        if t.name.endswith(LOG_SUFFIX):  # a run log (never a temporary)
            continue
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
        _remove(t)
        n += 1
    return n


def _check_out(out: Out, specs: list[RunSpec], sweep: Sweep) -> str:
    """Refuses an OUT holding another sweep's results; writes sweep.json; returns the sweep's digest."""
    digest = _native.sha256_hex("\n".join(s.key() for s in specs).encode() + json.dumps(sweep.scenario, sort_keys=True).encode())
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
