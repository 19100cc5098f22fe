"""Combining a sweep's runs: OUT/<table>.parquet built while the runs finish (`_Combiner`), the
record that certifies them (`COMBINED`), `collect` for a finished OUT, and `SweepResult`."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from jitterlab import _fspath, _io, _lazy, _native
from jitterlab.sweep.spec import TABLES, RunSpec
from jitterlab.sweep.store import (ERROR_FILE, PARQUET_MIN_ROWS, LogEntry, Out, _decode_part, _encode_run_table,
                                   _native_part, _parquet_image, _read_stored_pack, _run_dir, _stored_runs, read_run_tables, verify_run)
from jitterlab.tables import LazyTables, Tables, _arrow_table

if TYPE_CHECKING:  # pandas only where a DataFrame is asked for: workers and `jitterlab sweep` skip it
    import pandas as pd
    import pyarrow as pa
else:  # nor pyarrow, where every part is the native encoder's
    pa = _lazy.module("pyarrow")


class SweepResult(Tables):
    """The combined tables of a sweep (`jitterlab.tables.Tables`; a table no run stored reads as
    an empty DataFrame), plus the output directory, the failed runs and the counts of runs done
    now and skipped (finished before)."""

    def __init__(self, out: Out, arrow: Mapping[str, pa.Table], failures: list[dict[str, Any]], ran: int, skipped: int):
        super().__init__(arrow, "sweep")
        self.out, self.ran, self.skipped = out, ran, skipped
        #: the failed runs as [{"run_id", "error"}] (`failures` is the same as a DataFrame)
        self.failed = list(failures)
        #: where the wall time went (set by `run`): wall_s, prepare_s, runs_wall_s, client_s,
        #: collect_s, serial_s (prepare + client + collect: see `serial_fraction`), run_s and
        #: run_cpu_s (summed over the runs, in the workers), workers, worker_peak_rss_bytes (the
        #: largest peak of a worker since it began this sweep's runs: a kept pool's or a Dask
        #: worker's peak is reset, on Linux, when it starts another sweep),
        #: client_peak_rss_bytes (this process's peak so far), combine_cpu_s (the CPU time of the
        #: client's thread that builds the combined tables while the runs go on)
        self.timing: dict[str, float] = {}
        #: each run's share of the closing summary, by run id (`run(..., summary=True)`; else None)
        self.summary_parts: dict[int, dict[str, Any]] | None = None

    @property
    def failures(self) -> pd.DataFrame:
        """The failed runs: run_id, error (the first line of its error file, runs/<run_id>.error.txt)."""
        import pandas as pd

        return pd.DataFrame(self.failed, columns=["run_id", "error"])

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name in self.arrow:
            return super().__getitem__(name)
        import pandas as pd

        return pd.DataFrame()


#: OUT/COMBINED certifies the combined tables: the digest of the records of the runs they were
#: made of (a run file's record, or an older version's `done` record), and each table file's
#: SHA-256. A rerun whose runs are all finished and verified, with the same digest, reuses the
#: files (hashed again, a read at disk speed) instead of splicing every run again (`reproduce
#: pam2013` run again on its finished OUT: 3.15-3.3 s instead of 3.55-3.9 s on 2 cores). A run redone, a table file changed, no record or a damaged one: the
#: tables are combined again. Local directories only: on an object store hashing the tables would
#: download them, so a rerun there combines again.
COMBINED = "combined.json"


def _combined_digest(specs: Sequence[RunSpec], done_sha: Mapping[int, str]) -> str | None:
    """SHA-256 over each run's id and its record's SHA-256, in run order (None: a run did not
    finish). A record holds its run's pack's SHA-256, so this certifies every stored byte."""
    lines = []
    for s in specs:
        sha = done_sha.get(s.run_id)
        if sha is None:
            return None
        lines.append(f"{s.run_id} {sha}\n")
    return _native.sha256_hex("".join(lines).encode())


def _write_combined_record(out: Out, tables: tuple[str, ...], digest: str | None) -> None:
    if isinstance(out, _fspath.FsPath):
        return
    if digest is None:  # a run failed: the next run does it again and combines again
        (out / COMBINED).unlink(missing_ok=True)
        return
    files = {n: _fspath.sha256(out / f"{n}.parquet") for n in tables}
    _fspath.write_text(out / COMBINED, json.dumps({"digest": digest, "sha256": files}, sort_keys=True) + "\n")


def _current_combined(out: Out, tables: tuple[str, ...], digest: str | None) -> LazyTables | None:
    """The combined tables, read from their files when used, if OUT/COMBINED certifies them for
    exactly the runs of `digest`; None otherwise (combine again)."""
    if digest is None or isinstance(out, _fspath.FsPath):
        return None
    try:
        rec = json.loads((out / COMBINED).read_text())
        if not isinstance(rec, dict) or rec.get("digest") != digest or set(rec.get("sha256", {})) != set(tables):
            return None
        if any(_fspath.sha256(out / f"{n}.parquet") != rec["sha256"][n] for n in tables):
            return None
    except (OSError, ValueError, TypeError, KeyError):
        return None  # absent or damaged: combined again from the runs
    combined = LazyTables()
    for n in tables:
        combined.later(n, out / f"{n}.parquet")
    return combined


def _table(t: pa.Table | None, raw: bytes | None) -> pa.Table:
    """A run's table: `t` when in memory, else its part `raw` decoded by pyarrow."""
    if t is not None:
        return t
    assert raw is not None
    return _decode_part(pa.py_buffer(raw))


def _all_native(parts: list[Any]) -> bool:
    return all(isinstance(p, _native.NativeTable) for p in parts)


def _arrow(parts: list[Any]) -> list[pa.Table]:
    """Held tables as Arrow tables (those held native handed to pyarrow, their buffers shared)."""
    return [_arrow_table(p) if isinstance(p, _native.NativeTable) else p for p in parts]


def _compact(parts: list[pa.Table], unify: bool = True) -> pa.Table:
    """Tables as one, one chunk a column; `unify`: types unified where the parts disagree (half
    the speed on many small tables: only a mixed table needs it)."""
    return pa.concat_tables(parts, promote_options="default" if unify else "none").combine_chunks()


class _Combiner:
    """Builds OUT/<table>.parquet while the runs finish, in a thread beside the client's loop.

    Runs are appended in run-id order as soon as every earlier run has finished (or failed). Every
    part was written by the native encoder (`_native.encode_pack`). A run's table of
    PARQUET_MIN_ROWS rows or more is a Parquet image, spliced into the file as it is
    (`_native.ParquetConcat`: column chunks copied, the footer rewritten; no decoding, no
    encoding), its own row group(s). Smaller ones (Arrow IPC images) are decoded as they come
    (`_native.PartMerger`, in this thread while the runs go on) and encoded, by the same encoder,
    as one row group each time ROW_GROUP rows or MERGE_PARTS parts have gathered (little is left
    to do after the last run, and row groups stay large for readers). So the combined tables grow while workers still run, and after
    the last run only its own tables and the footers remain to write (the serial part of a sweep,
    Amdahl); splicing and merging release the GIL. The files depend only on the runs' tables, not
    on the order runs finish in nor on how they were stored (an older version's part is encoded
    exactly as a worker would now), so every executor writes the same
    bytes. A table whose runs disagree on its schema (a column null in one run, typed in another)
    is written at the end from all its parts with types unified instead.

    The client's memory is bounded: the runs' tables are also kept in memory, to be handed back
    without reading the files again, only while they total at most HOLD_BYTES and are in memory
    anyway (a spliced part read from storage is not decoded for it); otherwise the result reads
    the combined table from its file when first asked for (`LazyTables`)."""

    ROW_GROUP = 1 << 17
    HOLD_BYTES = 256 << 20
    COMPACT_PARTS = 256
    #: small parts written as one row group at most (a bound on what is held: a tiny run's part is ~1-2 kB)
    MERGE_PARTS = 4096

    def __init__(self, out: Out, tables: tuple[str, ...], order: list[int], ready: Iterable[int], lazy: Iterable[str] = (),
                 located: Mapping[int, LogEntry] | None = None):
        import queue
        import threading

        self.out, self.tables, self.order = out, tables, order
        #: where runs stored in a run log are (the finished ones of `ready`, then the receipts')
        self.located: dict[int, LogEntry] = dict(located or {})
        self.never_held = frozenset(lazy)  # tables read from their file when used, never kept in memory
        self.pos = 0
        # True: read from its files; (tables or None, (pack bytes, parts) or None): in hand; None: failed
        self.state: dict[int, tuple[dict[str, pa.Table] | None, tuple[bytes, dict] | None] | None | bool] = {i: True for i in ready}
        self.parts: dict[str, list[pa.Table]] = {n: [] for n in tables}
        self.schema: dict[str, pa.Schema] = {}
        self.rows = dict.fromkeys(tables, 0)
        self.held = 0
        self.spilled = False  # parts of tables with one schema no longer kept in memory
        self.lazy: set[str] = set()  # tables some of whose parts were spliced without being in memory
        self.pending: dict[str, list[bytes | pa.Table]] = {n: [] for n in tables}  # small parts (images, or tables in memory)
        self.pending_rows = dict.fromkeys(tables, 0)
        self.pending_runs = dict.fromkeys(tables, 0)
        self.concat: dict[str, Any] = {}  # name: _native.ParquetConcat
        self.merger: dict[str, Any] = {}  # name: _native.PartMerger of its pending parts
        self.in_hand: dict[str, list[pa.Table]] = {n: [] for n in tables}  # pending parts in memory, not yet handed to it
        self.files: dict[str, Any] = {}  # name: its temporary file, open for writing
        self.mixed: set[str] = set()
        self.error: BaseException | None = None
        #: CPU seconds of the combining thread (beside the runs: on many cores its share of a
        #: 1-worker sweep bounds the speed-up as the serial part does)
        self.cpu_s = 0.0
        self.q: Any = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="sweep-combine", daemon=True)
        self.thread.start()

    def add(self, run_id: int, tables: Mapping[str, pa.Table] | None, ok: bool, pack: tuple[bytes, dict] | None = None,
            where: tuple[str, int, int] | None = None) -> None:
        """A finished run: its tables when in memory and/or its pack's bytes and parts (a receipt
        carried them; else they are read from storage: its entry in run log `where` = (the log's
        name, the entry body's offset and length), or its run file), or a failed one (nothing to add)."""
        if where is not None and tables is None and pack is None:
            self.located[run_id] = LogEntry(self.out / "runs" / where[0], run_id, where[1], where[2])  # type: ignore[arg-type]
        if not ok:
            self.q.put((run_id, None))
        elif tables is None and pack is None:
            self.q.put((run_id, True))
        else:
            self.q.put((run_id, (dict(tables) if tables is not None else None, pack)))

    def _tmp(self, name: str) -> Out:
        return self.out / f".{name}.parquet.tmp{os.getpid()}"

    def _loop(self) -> None:
        t = time.thread_time()
        try:  # runs finished before (resumed sweeps) are read at once
            self._advance()
        except BaseException as e:
            self.error = e
        while True:
            self.cpu_s += time.thread_time() - t
            item = self.q.get()
            t = time.thread_time()
            if item is None:
                return
            if self.error is not None:
                continue
            try:
                self.state[item[0]] = item[1]
                self._advance()
            except BaseException as e:  # reported by finish()
                self.error = e

    def _advance(self) -> None:
        while self.pos < len(self.order) and self.order[self.pos] in self.state:
            rid = self.order[self.pos]
            got = self.state.pop(rid)
            self.pos += 1
            if got is None or got is False:
                continue
            tables: dict[str, pa.Table] = {}
            native: dict[str, Any] = {}
            pack: tuple[bytes, dict] | None = None
            if got is True:  # stored: its pack read once
                pack = _read_stored_pack(self.out, rid, self.located.pop(rid, None))
                if pack is None:  # stored a file a table by an older version
                    tables = read_run_tables(_run_dir(self.out, rid), self.tables)
            else:
                # a run done in this process: its Arrow tables in memory are used as they are;
                # those it kept native (`_native.NativeTable`) go to the merger as they are (a
                # small one) or are spliced from its pack
                tables, pack = {}, got[1]
                for n, t in (got[0] or {}).items():
                    if not isinstance(t, _native.NativeTable):
                        tables[n] = t
                    elif pack is not None:
                        native[n] = t
                    else:  # no pack to splice from (`collect` given a run's tables): as Arrow
                        tables[n] = _arrow_table(t)
            blob, parts = pack if pack is not None else (b"", {})
            for name in self.tables:
                if name in native and name in parts and pack is not None:
                    self._add_native(name, native[name], blob, parts[name])
                    continue
                t = tables.get(name)
                raw: bytes | None = None
                rows = t.num_rows if t is not None else 0
                if name in parts:
                    off, size, rows = parts[name]
                    if t is None or rows >= PARQUET_MIN_ROWS:  # a small table in memory is used as it is
                        raw = blob[off:off + size]
                        if not _native_part(raw):  # an older version's part (pyarrow's)
                            t = t if t is not None else _decode_part(pa.py_buffer(raw))
                            raw = None
                if raw is None and t is not None and t.num_rows >= PARQUET_MIN_ROWS:
                    raw = _encode_run_table(t)  # as its pack would hold it now (a run stored by an older version)
                if not rows or (raw is None and t is None):
                    continue
                self.rows[name] += rows
                self._add(name, t, raw, rows)
            if not self.spilled and self.held > self.HOLD_BYTES:
                self.spilled = True
                for name in self.tables:
                    if name not in self.mixed:
                        self.parts[name] = []

    def _add(self, name: str, t: pa.Table | None, raw: bytes | None, rows: int) -> None:
        """One run's table `name` of `rows` rows: its part (`raw`: a Parquet image from
        PARQUET_MIN_ROWS rows, else an Arrow IPC one; None for a small table in memory) and the
        table when in memory (`t`)."""
        if name in self.mixed:
            self._keep(name, _table(t, raw))
            return
        if t is not None:
            if name not in self.schema:
                self.schema[name] = t.schema
            elif t.schema != self.schema[name]:
                self._to_mixed(name)
                self._keep(name, t)
                return
        if raw is not None and rows >= PARQUET_MIN_ROWS:
            # the runs before it first (row groups in run order), then its part as it is
            if not self._flush(name) or not self._splice(name, raw):
                self._keep(name, _table(t, raw))
                return
        elif not self._pend(name, raw, rows, t):
            self._keep(name, _table(t, raw))
            return
        if not self.spilled and t is not None and name not in self.never_held:
            self._keep(name, t)
            self.held += t.get_total_buffer_size()  # Table.nbytes costs ~50 us a table (it dedups buffers)
        elif not self.spilled:
            self.lazy.add(name)  # never decoded here: read from the combined file when used
            self.parts[name] = []
        if rows < PARQUET_MIN_ROWS and (self.pending_rows[name] >= self.ROW_GROUP or self.pending_runs[name] >= self.MERGE_PARTS):
            self._flush(name)

    def _add_native(self, name: str, nt: Any, blob: bytes, part: list[int]) -> None:
        """A run's table kept native (`_native.NativeTable`, its part [offset, length, rows] in
        the pack `blob`): a large one spliced from its part, a small one handed to the merger as
        it is (no decoding of its part); held for the result as `_add` holds a run's tables, native
        (pyarrow takes it when the result is read). A table already mixed takes it as Arrow."""
        off, size, rows = part
        raw = blob[off:off + size]
        self.rows[name] += rows
        if name in self.mixed:
            self._add(name, None, raw, rows)
            return
        if rows >= PARQUET_MIN_ROWS:  # the runs before it first (row groups in run order), then its part as it is
            if not self._flush(name) or not self._splice(name, raw):
                self._keep(name, _table(None, raw))
                return
        elif not self._hand_over(name) or not self._merge(name, lambda m: m.add_table(nt)):
            self._keep(name, _table(None, raw))
            return
        else:
            self.pending[name].append(raw)  # read back by pyarrow only if the table turns mixed
            self.pending_rows[name] += rows
            self.pending_runs[name] += 1
        if not self.spilled and name not in self.never_held:
            self._keep(name, nt)  # held native: pyarrow takes it when the result is read
            self.held += nt.nbytes
        elif not self.spilled:
            self.lazy.add(name)
            self.parts[name] = []
        if rows < PARQUET_MIN_ROWS and (self.pending_rows[name] >= self.ROW_GROUP or self.pending_runs[name] >= self.MERGE_PARTS):
            self._flush(name)

    def _keep(self, name: str, t: pa.Table) -> None:
        """Holds run table `t` for the result (zero-copy), many small ones compacted into one:
        Arrow's cost per table and column, not the rows, is what grows with many tiny runs
        (10,000 of them, ~70,000 small tables, held ~0.6 GB)."""
        if name in self.lazy and name not in self.mixed:
            return
        parts = self.parts[name]
        parts.append(t)
        if len(parts) >= self.COMPACT_PARTS:
            self.parts[name] = [_native.NativeTable.concat(parts) if _all_native(parts) else _compact(_arrow(parts), unify=name in self.mixed)]

    def _to_mixed(self, name: str) -> None:
        """Table `name` met a second schema: from now on all its parts are kept and written at the
        end with types unified; what was not kept in memory is read back (its file so far and
        the parts pending)."""
        pending = self.pending[name] + self.in_hand[name]  # in run order: the tables in hand came last
        self.pending[name], self.pending_rows[name], self.pending_runs[name], self.in_hand[name] = [], 0, 0, []
        self.merger.pop(name, None)
        self._close(name)
        self.mixed.add(name)
        self.parts[name] = _arrow(self.parts[name])
        if self.spilled or name in self.lazy:
            got = ([_fspath.read_parquet(self._tmp(name))] if self._tmp(name).exists() else []) + [_table(None, p) if isinstance(p, bytes) else p
                                                                                                   for p in pending]
            self.parts[name] = [_compact(got)] if got else []
        self.lazy.discard(name)
        self._tmp(name).unlink(missing_ok=True)

    def _append(self, name: str, data: bytes) -> None:
        """Splices Parquet image `data` into table `name`'s file (ValueError: another schema)."""
        c = self.concat.get(name)
        if c is None:
            from jitterlab import _native

            c = self.concat[name] = _native.ParquetConcat()
        chunk = c.append(data)
        f = self.files.get(name)
        if f is None:
            f = self.files[name] = _fspath.open_write(self._tmp(name))
        f.write(chunk)

    def _splice(self, name: str, data: bytes) -> bool:
        """`_append`; False when `data`'s schema differs from the file's (the table is now mixed)."""
        try:
            self._append(name, data)
        except ValueError:  # a column null in this run, typed in another
            self._to_mixed(name)
            return False
        return True

    def _pend(self, name: str, raw: bytes | None, rows: int, t: pa.Table | None) -> bool:
        """A small part of table `name`, written with the next ones as one row group: decoded at
        once (`_native.PartMerger`: in this thread while the runs go on, not after the last one),
        or, when the run's table is in memory (`t`), joined with the next ones in memory and
        handed over many at once. False when its schema differs from the pending parts' (the
        table is now mixed)."""
        if t is not None:
            if len(self.in_hand[name]) >= self.COMPACT_PARTS and not self._hand_over(name):
                return False
            self.in_hand[name].append(t)
        elif not self._hand_over(name) or not self._merge(name, lambda m: m.add(raw)):
            return False
        if t is None:
            self.pending[name].append(raw)  # read back by pyarrow only if the table turns mixed
        self.pending_rows[name] += rows
        self.pending_runs[name] += 1
        return True

    def _hand_over(self, name: str) -> bool:
        """The pending tables in memory of table `name`, joined, to its merger (`_pend`)."""
        tables = self.in_hand[name]
        if not tables:
            return True
        joined = _compact(tables, unify=False)  # held joined: thousands of tiny tables cost more than their rows
        self.in_hand[name] = [joined]  # where `_to_mixed` finds it if the merger refuses it
        if not self._merge(name, lambda m: m.add_table(joined)):
            return False
        self.in_hand[name] = []
        self.pending[name].append(joined)
        return True

    def _merge(self, name: str, add: Any) -> bool:
        """`add(merger of table name)`; False (the table is now mixed) when it refuses the schema."""
        m = self.merger.get(name)
        if m is None:
            from jitterlab import _native

            m = self.merger[name] = _native.PartMerger()
        try:
            add(m)
        except ValueError:
            self._to_mixed(name)
            return False
        return True

    def _flush(self, name: str) -> bool:
        """Writes the pending runs of table `name` as one row group: their parts, decoded as they
        came, encoded once (`PartMerger.finish`). False when that fails on their schemas (the
        table is now mixed)."""
        if not self.pending_runs[name]:
            return True
        if not self._hand_over(name):
            return False
        try:
            merged = self.merger[name].finish()
        except ValueError:
            self._to_mixed(name)
            return False
        if not self._splice(name, merged):
            return False
        self.pending[name], self.pending_rows[name], self.pending_runs[name] = [], 0, 0
        return True

    def finish(self) -> LazyTables:
        """Waits for the thread, writes what is left and renames each file into place."""
        self.q.put(None)
        self.thread.join()
        if self.error is not None:
            self.abort()
            if isinstance(self.error, OSError):
                raise _io._oserror(self.out / "runs", self.error, "write the combined tables") from None
            raise self.error
        combined = LazyTables()
        for name in self.tables:
            parts = self.parts[name]
            final = self.out / f"{name}.parquet"
            try:
                if name not in self.mixed and self.rows[name]:
                    self._flush(name)  # may find the last runs' schema differs: mixed
                parts = self.parts[name]
                if name in self.mixed or not self.rows[name]:
                    self._close(name)
                    self._tmp(name).unlink(missing_ok=True)
                    # no rows: a table of no runs, built natively (its Parquet image too)
                    t = pa.concat_tables(_arrow(parts), promote_options="default") if parts else _native.NativeTable.empty()
                    _fspath.write_bytes(final, _parquet_image(t))
                else:
                    self._close(name)
                    _fspath.replace(self._tmp(name), final)
                    t = None if self.spilled or name in self.lazy else parts
            except OSError as e:
                self.abort()
                raise _io._oserror(final, e, "write") from None
            if t is None:
                combined.later(name, final, self.rows[name])
            elif isinstance(t, _native.NativeTable):
                combined.native(name, t)
            elif isinstance(t, list) and t and _all_native(t):  # held native: Arrow when read
                combined.native(name, t[0] if len(t) == 1 else _native.NativeTable.concat(t))
            else:
                combined[name] = pa.concat_tables(_arrow(t)) if isinstance(t, list) else t
        return combined

    def _close(self, name: str) -> None:
        """Ends table `name`'s file (its footer) and closes it."""
        c, f = self.concat.pop(name, None), self.files.pop(name, None)
        try:
            if c is not None and f is not None:
                f.write(c.finish())
        finally:
            if f is not None:
                f.close()

    def abort(self) -> None:
        """Stops the thread (if running) and removes the unfinished files."""
        if self.thread.is_alive():
            self.error = self.error or RuntimeError("aborted")
            self.q.put(None)
            self.thread.join()
        for name in list(self.files):
            try:
                self.files.pop(name).close()
            except OSError:
                pass
        self.concat.clear()
        self.merger.clear()
        for name in self.tables:
            self._tmp(name).unlink(missing_ok=True)


def collect(out: str | Path | _fspath.FsPath, tables: Iterable[str] = TABLES, fresh: Mapping[int, Mapping[str, pa.Table]] | None = None,
            ran: int = 0, skipped: int = 0, verified: bool = False) -> SweepResult:
    """Concatenates the finished runs' tables in run order into OUT/<table>.parquet, as a sweep
    does (`_Combiner`: the same files, the client's memory bounded). Tables of runs done in this
    process come from memory; the others are read from OUT/runs/. Only runs whose files match
    their checksums are used (`verified`: `run` has just checked them)."""
    out = _fspath.as_path(out)
    fresh = fresh or {}
    tables = tuple(tables)
    runs = out / "runs"
    # each run's stored forms as a sweep's resume tries them (`_stored_runs`: its log entries, the
    # newest first, its run file, an older version's finished run directory), the first that
    # verifies being the run's; failed runs' errors
    tried, present = _stored_runs(out, _fspath.names(runs))
    stored: dict[int, Out | LogEntry] = {}
    why: dict[int, str | None] = {}
    for i, forms in tried.items():
        if not forms:
            continue
        stored[i] = forms[0]
        if verified or i in fresh:
            continue
        for d in forms:
            w = verify_run(d)
            why.setdefault(i, w)
            if w is None:
                stored[i], why[i] = d, None
                break
    ids = sorted(stored)
    for i in ids:
        if why.get(i) is not None:
            print(f"run {i:06d}: {why[i]}; left out of the combined tables (run the sweep again to redo it)", file=sys.stderr)
    ids = [i for i in ids if why.get(i) is None]
    errors: dict[int, Out] = {}
    for i, files in present.items():
        err = [f for f in files if f.name.endswith(ERROR_FILE)] or [f / "error.txt" for f in files if f.name == f"{i:06d}"]
        if i not in stored and err and err[0].exists():  # this version's error file, else an older version's
            errors[i] = err[0]
    # the same combining as a sweep's (row groups in run order, the client's memory bounded)
    combiner = _Combiner(out, tables, ids, [i for i in ids if i not in fresh],
                         located={i: d for i, d in stored.items() if isinstance(d, LogEntry)})
    try:
        for i in ids:
            if i in fresh:
                combiner.add(i, fresh[i], True)
    except BaseException:
        combiner.abort()
        raise
    combined = combiner.finish()
    fails = [{"run_id": i, "error": errors[i].read_text().split("\n", 1)[0]} for i in sorted(errors) if i not in stored]
    _fspath.write_text(out / "failures.csv", _failures_csv(fails))
    return SweepResult(out, combined, fails, ran, skipped)


def _failures_csv(fails: list[dict[str, Any]]) -> str:
    """failures.csv as pandas' ``to_csv(index=False)`` writes it (minimal quoting, \\n lines)."""
    import csv
    import io

    f = io.StringIO()
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["run_id", "error"])
    w.writerows([r["run_id"], r["error"]] for r in fails)
    return f.getvalue()

