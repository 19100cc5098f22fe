"""Sweeps: a base scenario, parameters to vary, replications, random variables per replication.

A sweep file (TOML):

    [sweep]
    name = "web-iw"
    scenario = "base.toml"          # or an inline [scenario] table in this file
    seed = 1                        # the sweep seed; every run's seed derives from it
    replications = 50

    [sweep.vary]                    # cross product
    "traffic[1].flows" = [1, 2, 6]
    iw = { key = "traffic[1].iw", values = [3, 10] }      # named column "iw"
    workload = { values = [ { label = "bulk", set = { "traffic[1].kind" = "bulk" } }, ... ] }

    [sweep.zip]                     # lists of equal length, walked together, crossed with vary
    "access.down_rate" = ["3Mbit", "4Mbit"]
    "access.down_queue.limit" = ["500pkt", "700pkt"]

    [sweep.random]                  # drawn per replication
    "traffic[1].start" = { dist = "uniform", min = "10s", max = "12s" }

Seeds: replication r of every parameter point gets the same simulator seed and the same random
draws (common random numbers), so points are compared on paired runs. Both derive from
(sweep seed, r) through numpy's SeedSequence; nothing depends on execution order or executor.

Storage: each finished run is written at once, by the worker that ran it, under OUT/runs/<run_id>/
(one file, `tables.pack`, holding an image of each table asked for in `Sweep.tables`, including
the aggregates `Sweep.reduce` computes in the worker: Parquet for a large table, which the client
splices into the combined table as it is, Arrow IPC for a small one; then a `done` marker giving each
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
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from jitterlab import _fspath, _io, _progress, _storelock
from jitterlab import scenario as _scn
from jitterlab._native import ScenarioError
from jitterlab.tables import LazyTables, Tables

if TYPE_CHECKING:  # pandas only where a DataFrame is asked for: workers and `jitterlab sweep` skip it
    import pandas as pd

#: Where a sweep's results go: a local directory, or a directory on an fsspec filesystem (a URL).
Out = Path | _fspath.FsPath

TABLES = ("media_packets", "tcp_flows", "queue_samples", "runs", "channels", "flows", "tcp_series")
SWEEP_FORMAT = 1
#: A receipt carries the run's pack (its stored file's bytes) when it is at most this many bytes
#: (a tiny run's few kB cost less to send than to read back from its file); larger ones stay on
#: storage and the client reads them.
INLINE_BYTES = 64 * 1024
#: Runs in flight a local worker (queued or running): enough that a worker never waits for the
#: client to hand it the next run, few enough that waiting on them stays cheap.
WINDOW_PER_WORKER = 4


class SweepError(ScenarioError):
    """A malformed sweep file or an output directory holding a different sweep."""


@dataclass
class Param:
    """One varied parameter: a column name and, per value, the scenario keys it sets."""

    name: str
    labels: list[Any]
    sets: list[dict[str, Any]]


@dataclass
class RunSpec:
    run_id: int
    point: int
    rep: int
    seed: int
    params: dict[str, Any]
    overrides: dict[str, Any]

    def key(self) -> str:
        return json.dumps({"params": self.params, "overrides": self.overrides, "seed": self.seed}, sort_keys=True, default=str)


@dataclass
class Sweep:
    name: str
    scenario: dict[str, Any]
    seed: int = 1
    replications: int = 1
    params: list[Param] = field(default_factory=list)
    zipped: list[Param] = field(default_factory=list)
    random: dict[str, dict[str, Any]] = field(default_factory=dict)
    backend: str = "sim"
    #: tables stored per run (presets keep only what their figures read)
    tables: tuple[str, ...] = TABLES
    #: computed in the worker from each run's full tables (a top-level function, so it pickles):
    #: returns aggregate tables {name: pyarrow.Table}, stored with the run when their names are in
    #: `tables`, so the per-packet tables they summarise need not be stored at all
    reduce: Callable[[Tables], Mapping[str, pa.Table]] | None = None

    def points(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(column values, scenario overrides) of every parameter point, in a fixed order."""
        axes: list[list[tuple[dict, dict]]] = []
        for p in self.params:
            axes.append([({p.name: lab}, s) for lab, s in zip(p.labels, p.sets)])
        if self.zipped:
            n = len(self.zipped[0].labels)
            z = []
            for i in range(n):
                zcols: dict[str, Any] = {}
                zsets: dict[str, Any] = {}
                for p in self.zipped:
                    zcols[p.name] = p.labels[i]
                    zsets.update(p.sets[i])
                z.append((zcols, zsets))
            axes.append(z)
        out = []
        for combo in itertools.product(*axes) if axes else [()]:
            cols: dict[str, Any] = {}
            sets: dict[str, Any] = {}
            for c, s in combo:
                cols.update(c)
                sets.update(s)
            out.append((cols, sets))
        return out

    def runs(self) -> list[RunSpec]:
        specs = []
        pts = self.points()
        # replication r's seed and draws are the same at every point (common random numbers)
        per_rep = [derive(self.seed, r, self.random) for r in range(self.replications)]
        for pi, (cols, sets) in enumerate(pts):
            for r in range(self.replications):
                seed, draws = per_rep[r]
                params = {**cols, **{k: v for k, v in draws.items()}}
                specs.append(RunSpec(pi * self.replications + r, pi, r, seed, params, {**sets, **draws}))
        return specs


_NUM_UNIT = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]*)\s*$")


def _num_unit(v: Any, where: str) -> tuple[float, str]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v), ""
    if isinstance(v, str):
        m = _NUM_UNIT.match(v)
        if m:
            return float(m.group(1)), m.group(2)
    raise SweepError(f"{where}: expected a number or a number with a unit like \"10s\", got {v!r}")


def derive(sweep_seed: int, rep: int, random: Mapping[str, Mapping[str, Any]]) -> tuple[int, dict[str, Any]]:
    """Simulator seed and random draws of replication `rep` (independent of the parameter point)."""
    ss = np.random.SeedSequence([int(sweep_seed), int(rep)])
    sim_seed = int(ss.generate_state(1, dtype=np.uint64)[0] & 0x7FFF_FFFF_FFFF_FFFF)
    draws: dict[str, Any] = {}
    for i, key in enumerate(sorted(random)):
        spec = random[key]
        g = np.random.default_rng(np.random.SeedSequence([int(sweep_seed), int(rep), 1 + i]))
        where = f"sweep.random.{key}"
        dist = spec.get("dist")
        if dist == "uniform":
            lo, u1 = _num_unit(spec.get("min"), where + ".min")
            hi, u2 = _num_unit(spec.get("max"), where + ".max")
            if u1 != u2:
                raise SweepError(f"{where}: min and max need the same unit, got {u1!r} and {u2!r}")
            x, unit = lo + (hi - lo) * g.random(), u1
        elif dist == "normal":
            mu, unit = _num_unit(spec.get("mean"), where + ".mean")
            sd, _ = _num_unit(spec.get("sd"), where + ".sd")
            x = g.normal(mu, sd)
        elif dist == "exponential":
            mu, unit = _num_unit(spec.get("mean"), where + ".mean")
            x = g.exponential(mu)
        elif dist == "choice":
            vals = spec.get("values")
            if not isinstance(vals, list) or not vals:
                raise SweepError(f"{where}.values: expected a non-empty list")
            draws[key] = vals[int(g.integers(len(vals)))]
            continue
        else:
            raise SweepError(f"{where}.dist: must be one of uniform, normal, exponential, choice, got {dist!r}")
        # repr() keeps every bit of the float, so the scenario sees exactly the drawn value
        draws[key] = f"{x!r}{unit}" if unit else x
    return sim_seed, draws


def _param(name: str, v: Any, where: str) -> Param:
    if isinstance(v, list):
        return Param(name, list(v), [{name: x} for x in v])
    if isinstance(v, dict):
        unknown = set(v) - {"key", "values"}
        if unknown:
            raise SweepError(f"{where}.{sorted(unknown)[0]}: unknown key (use key, values)")
        vals = v.get("values")
        if not isinstance(vals, list) or not vals:
            raise SweepError(f"{where}.values: expected a non-empty list")
        if "key" in v:
            return Param(name, list(vals), [{v["key"]: x} for x in vals])
        labels, sets = [], []
        for i, it in enumerate(vals):
            if not (isinstance(it, dict) and "label" in it and isinstance(it.get("set"), dict)):
                raise SweepError(f"{where}.values[{i}]: expected {{ label = ..., set = {{ ... }} }}")
            labels.append(it["label"])
            sets.append(dict(it["set"]))
        return Param(name, labels, sets)
    raise SweepError(f"{where}: expected a list of values or a table with values")


def load(path: str | Path) -> Sweep:
    path = Path(path)
    try:
        text = _io.read_text(path, "sweep file", _io.MAX_SCENARIO_BYTES)
        doc = _scn.parse_toml(text, str(path))
    except (_io.InputError, ScenarioError) as e:
        raise SweepError(str(e)) from None
    return from_dict(doc, base=path.parent)


def from_dict(doc: Mapping[str, Any], base: Path | None = None) -> Sweep:
    base = base or Path.cwd()
    unknown = set(doc) - {"sweep", "scenario"}
    if unknown:
        raise SweepError(f"{sorted(unknown)[0]}: unknown top-level table (use [sweep] and optionally [scenario])")
    sw = doc.get("sweep")
    if not isinstance(sw, dict):
        raise SweepError("sweep: missing [sweep] table")
    allowed = {"name", "scenario", "seed", "replications", "vary", "zip", "random", "backend"}
    for k in sw:
        if k not in allowed:
            raise SweepError(f"sweep.{k}: unknown key (known: {', '.join(sorted(allowed))})")
    if "scenario" in sw and "scenario" in doc:
        raise SweepError("sweep.scenario: give either a scenario file or an inline [scenario] table, not both")
    if "scenario" in sw:
        f = Path(sw["scenario"])
        sc = _scn.load(f if f.is_absolute() else base / f)
    elif "scenario" in doc:
        sc = _scn.load(doc["scenario"])
    else:
        raise SweepError("sweep.scenario: missing (a scenario file, or an inline [scenario] table)")
    seed = sw.get("seed", 1)
    if not isinstance(seed, int) or seed < 0:
        raise SweepError(f"sweep.seed: expected a whole number >= 0, got {seed!r}")
    reps = sw.get("replications", 1)
    if not isinstance(reps, int) or reps < 1:
        raise SweepError(f"sweep.replications: expected a whole number >= 1, got {reps!r}")
    params = [_param(k, v, f"sweep.vary.{k}") for k, v in (sw.get("vary") or {}).items()]
    zipped = [_param(k, v, f"sweep.zip.{k}") for k, v in (sw.get("zip") or {}).items()]
    if zipped and len({len(p.labels) for p in zipped}) != 1:
        raise SweepError("sweep.zip: all lists must have the same length, got " + ", ".join(f"{p.name}={len(p.labels)}" for p in zipped))
    random = sw.get("random") or {}
    for k, v in random.items():
        if not isinstance(v, dict):
            raise SweepError(f"sweep.random.{k}: expected a table like {{ dist = \"uniform\", min = \"10s\", max = \"12s\" }}")
    backend = sw.get("backend", "sim")
    if backend not in ("sim", "testbed"):
        raise SweepError(f"sweep.backend: must be \"sim\" or \"testbed\", got {backend!r}")
    s = Sweep(str(sw.get("name", sc.get("name", "sweep"))), sc, seed, reps, params, zipped, dict(random), backend)
    derive(seed, 0, s.random)  # validates the random specs now rather than in a worker
    return s


# ---------------------------------------------------------------------------------------------
# execution


def execute(payload: dict[str, Any]) -> dict[str, Any]:
    """Runs one run (in a worker). When `payload["out"]` is set (a filesystem shared with the
    client) the worker stores the run itself; with `payload["receipt"]` it then returns only a
    receipt (run id, rows per table, times, peak memory), otherwise also the Arrow tables (for a
    run done in the client's own process). Top-level so it pickles."""
    from jitterlab import sim

    global _PEAK_SWEEP
    if payload.get("receipt") and payload.get("sweep_id") != _PEAK_SWEEP:
        # a worker of a kept pool (or a Dask worker) starts another sweep: its peak memory counts
        # from here, not from the sweeps it ran before (the client's own process is left alone)
        _PEAK_SWEEP = payload.get("sweep_id")
        _reset_peak_rss()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        params = {**payload["params"], "replication": payload["rep"], "point": payload["point"]}
        if payload.get("backend", "sim") == "testbed":
            # real time, root, the whole machine: the testbed runs one run at a time (see run())
            from jitterlab import testbed

            res = testbed.run(payload["scenario"], seed=payload["seed"], run_id=payload["run_id"], overrides=payload["overrides"],
                              params=params, out=payload.get("testbed_out"))
        else:
            res = sim.simulate_run(payload["scenario"], payload["overrides"], payload["seed"], payload["run_id"], params,
                                   payload.get("scenario_key"))
        tables = {n: res.arrow[n] for n in payload["tables"] if n in res.arrow}
        if payload.get("reduce") is not None:
            tables.update(payload["reduce"](res))
        out = {"run_id": payload["run_id"], "ok": True, "identity": payload.get("identity"),
               "tables": {n: t for n, t in tables.items() if n in payload["tables"]},
               "requested": list(payload["tables"]), "wall_s": time.perf_counter() - t0, "stored": False}
    except Exception as e:  # recorded with the run; the sweep goes on
        out = {"run_id": payload["run_id"], "ok": False, "error": f"{type(e).__name__}: {e}",
               "traceback": traceback.format_exc(), "wall_s": time.perf_counter() - t0, "stored": False}
    if payload.get("out"):
        pack = _store(_fspath.as_path(payload["out"]), out)
        out["stored"] = True
        out["wall_s"] = time.perf_counter() - t0  # storing is the worker's work too
        if payload.get("receipt"):
            # the tables are on the shared storage: only a receipt travels back to the client,
            # carrying the run's pack too when it is small (a tiny run's few kB cost the client
            # less as bytes than as a file to read back). Bytes, not the Arrow tables: pickling
            # Arrow tables cost client and worker ~0.1 ms a table, 10x the pack's decoding.
            tables = out.pop("tables", {})
            out["rows"] = {n: t.num_rows for n, t in tables.items()}
            if pack is not None and len(pack[0]) <= payload.get("inline_bytes", 0):
                out["pack"] = pack
        elif pack is not None:
            out["pack"] = pack  # a run done in the client's own process: its Parquet parts are spliced as they are
    out["cpu_s"] = time.process_time() - c0
    out["rss_bytes"] = _peak_rss()
    return out


#: The sweep whose runs this worker process's peak memory counts from (`execute`).
_PEAK_SWEEP: str | None = None


def _reset_peak_rss() -> None:
    """Restarts this process's VmHWM at its current resident size (Linux >= 4.0: writing 5 to
    /proc/self/clear_refs); where refused, the peak keeps counting from the process's start."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _peak_rss() -> int:
    """Peak resident memory of this process in bytes (a worker's bound, reported by the benchmark):
    Linux's VmHWM, which starts afresh at exec (getrusage's ru_maxrss would carry the parent's
    peak into a spawned worker); 0 where unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class Progress:
    """A one-line progress bar with ETA on stderr (a line every 10 % when not a terminal)."""

    def __init__(self, total: int, skipped: int, label: str, enabled: bool = True):
        self.total, self.done, self.failed, self.label = total, 0, 0, label
        self.skipped = skipped
        self.t0 = time.monotonic()
        self.enabled = enabled and total > 0
        self.tty = sys.stderr.isatty()
        self.last_decile = -1

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if not self.enabled:
            return
        el = time.monotonic() - self.t0
        eta = el / self.done * (self.total - self.done)
        frac = self.done / self.total
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        msg = (f"{self.label} [{bar}] {self.done}/{self.total} runs"
               + (f" ({self.skipped} already done)" if self.skipped else "")
               + (f", {self.failed} failed" if self.failed else "")
               + f", {el:.0f} s elapsed, ETA {eta:.0f} s")
        if self.tty:
            print("\r" + msg, end="" if self.done < self.total else "\n", file=sys.stderr, flush=True)
        elif int(frac * 10) != self.last_decile or self.done == self.total:
            self.last_decile = int(frac * 10)
            print(msg, file=sys.stderr, flush=True)


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

    @property
    def failures(self) -> pd.DataFrame:
        """The failed runs: run_id, error (the first line of its error.txt)."""
        import pandas as pd

        return pd.DataFrame(self.failed, columns=["run_id", "error"])

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name in self.arrow:
            return super().__getitem__(name)
        import pandas as pd

        return pd.DataFrame()


def _run_dir(out: Out, run_id: int) -> Out:
    return out / "runs" / f"{run_id:06d}"


def _store(out: Out, res: dict[str, Any]) -> tuple[bytes, dict[str, list[int]]] | None:
    """Stores a finished run under OUT/runs/; returns its pack's bytes and parts (None: no pack).
    Locally in a temporary directory renamed into place; on an object store (no rename) in place,
    its `done` record written last."""
    d = _run_dir(out, res["run_id"])
    tmp = d if isinstance(d, _fspath.FsPath) else d.with_name(d.name + f".tmp{os.getpid()}")
    try:
        _fspath.rmtree(tmp)
        return _write_run(tmp, d, res)
    except OSError as e:
        if tmp != d:
            _fspath.rmtree(tmp)
        raise _io._oserror(d, e, f"store run {res['run_id']}") from None


def _write_run(tmp: Out, d: Out, res: dict[str, Any]) -> tuple[bytes, dict[str, list[int]]] | None:
    tmp.mkdir(parents=True)
    blob = None
    parts: dict[str, list[int]] = {}
    if res["ok"]:
        # one pack file a run, not one file a table: creating files is most of what storing a
        # small run costs (ext4: ~0.2 ms a file), and a 10,000-run sweep keeps 2 inodes a run
        chunks: list[Any] = []
        pos = 0
        for name, t in res["tables"].items():
            if t.num_rows:  # an absent part is an empty table (its absence is recorded below)
                buf = _encode_run_table(t)
                parts[name] = [pos, buf.size, t.num_rows]
                pad = -buf.size % PACK_ALIGN
                chunks += [buf, b"\0" * pad] if pad else [buf]
                pos += buf.size + pad
        files = {}
        if parts:
            blob = b"".join(chunks)  # one copy, hashed and written as it is (not read back)
            (tmp / PACK).write_bytes(blob)
            files[PACK] = {"bytes": pos, "sha256": hashlib.sha256(blob).hexdigest()}
        # written last: the record that certifies the run's files
        done = (json.dumps({"wall_s": res["wall_s"], "identity": res.get("identity"), "files": files, "parts": parts, "tables": sorted(res["tables"]),
                            "requested": sorted(res.get("requested", res["tables"]))}, sort_keys=False, default=str) + "\n").encode()
        (tmp / "done").write_bytes(done)
        res["done_sha256"] = hashlib.sha256(done).hexdigest()  # rides in the receipt (`_combined_digest`)
    else:
        (tmp / "error.txt").write_text(res["error"] + "\n\n" + res.get("traceback", ""))
    if tmp != d:
        _fspath.rmtree(d)
        os.replace(tmp, d)  # type: ignore[arg-type]  # atomic: a run directory is either complete or absent
    return None if blob is None else (blob, parts)


#: A run's stored tables: one file, PACK, holding each table as a file image, one after another at
#: PACK_ALIGN-byte offsets; the `done` record's "parts" gives each table's [offset, length, rows].
#: A table of at least PARQUET_MIN_ROWS rows is a Parquet image encoded as the combined tables are
#: (`_combined_options`): the client splices it into OUT/<table>.parquet as it is
#: (`_native.ParquetConcat`), so per-packet rows are encoded once, by the worker, and never decoded
#: by the client. A smaller table is an Arrow IPC image (LZ4 frames from LZ4_MIN_BYTES): Parquet's
#: fixed cost a file (~0.3 ms) would dominate a tiny run; the client gathers those and encodes
#: them in batches. Parts are told apart by their magic bytes (PAR1, ARROW1). Runs stored by older
#: versions (IPC parts only, or a file a table: `<table>.arrow`, `<table>.parquet`) are still read.
PACK = "tables.pack"
PACK_ALIGN = 64  # Arrow's buffer alignment: a part read from the file is used in place
RUN_EXT = ".arrow"
_IPC_LZ4 = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)  # a worker is one core
_IPC_PLAIN = pa.ipc.IpcWriteOptions(use_threads=False)
#: Tables smaller than this are stored uncompressed: LZ4 frames cost ~0.15 ms a table, more than
#: they save on a few kB (a run's runs, channels, flows rows).
LZ4_MIN_BYTES = 64 * 1024
#: A run's table of at least this many rows is stored as Parquet and spliced as it is (above).
PARQUET_MIN_ROWS = 4096
#: Rows a row group at most (pyarrow's default), in a run's Parquet part and in the combined tables.
MAX_GROUP_ROWS = 1 << 20


def _parquet_image(t: pa.Table) -> pa.Buffer:
    """`t` as a Parquet file in memory, encoded as the combined tables are (`_combined_options`)."""
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, row_group_size=MAX_GROUP_ROWS, **_combined_options(t))
    return sink.getvalue()


def _encode_run_table(t: pa.Table) -> pa.Buffer:
    if t.num_rows >= PARQUET_MIN_ROWS:
        return _parquet_image(t)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema, options=_IPC_LZ4 if t.get_total_buffer_size() >= LZ4_MIN_BYTES else _IPC_PLAIN) as w:
        w.write_table(t)
    return sink.getvalue()


def _is_parquet(buf: pa.Buffer | bytes) -> bool:
    return len(buf) >= 4 and bytes(memoryview(buf)[:4]) == b"PAR1"


def _decode_part(buf: pa.Buffer) -> pa.Table:
    """A pack part (a table's Parquet or Arrow IPC file image), used in place where it can be."""
    if _is_parquet(buf):
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


def _prepare(out: str | Path | _fspath.FsPath) -> Out:
    """The output place, checked and created: a local directory, or a URL (`_fspath`)."""
    p = _fspath.as_path(out)
    if isinstance(p, _fspath.FsPath):
        return _fspath.prepare(p, "sweep")
    return _io.prepare_out(p, "sweep", force=True)


def run(sweep: Sweep, out: str | Path | _fspath.FsPath, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True,
        on_result: Callable[[dict[str, Any]], None] | None = None,
        max_memory: float | None = None, max_events: float | None = None, inline_bytes: int = INLINE_BYTES) -> SweepResult:
    """Runs every run of the sweep not yet finished in `out`, then collects the tables.

    Workers store each run under `out` (storage they share with the client) and send back a
    receipt, with the run's tables only when they total at most `inline_bytes` (0: never).

    Before anything runs: `out` must not hold another kind of result, and every parameter point's estimated cost must fit the limits (sim.check_cost, memory shared among the
    parallel jobs). Runs whose files no longer match their checksums are redone."""
    try:
        if _fspath.is_url(out) or isinstance(out, _fspath.FsPath):
            with _storelock.hold(_fspath.as_path(out)):  # type: ignore[arg-type]  # one writer: a lock object in the store
                return _run(sweep, out, jobs, executor, scheduler, progress, on_result, max_memory, max_events, inline_bytes)
        # one writer: a second sweep into this directory is refused until this one ends
        with _io.out_lock(_io.prepare_out(_fspath.as_path(out), "sweep", force=True)):  # type: ignore[arg-type]
            return _run(sweep, out, jobs, executor, scheduler, progress, on_result, max_memory, max_events, inline_bytes)
    except Exception as e:
        # an object store's client fails with its own exceptions (a botocore ClientError, not an
        # OSError): one line naming the URL; every run stored before it is kept for the next try
        try:
            msg = _fspath.storage_error(e, _fspath.as_path(out)) if _fspath.is_url(out) or isinstance(out, _fspath.FsPath) else None
        except Exception:
            msg = None
        if msg is None:
            raise
        raise _io.OutputError(f"{msg} (the runs stored before it are kept: run the sweep again to go on)") from None


def _run(sweep: Sweep, out: str | Path | _fspath.FsPath, jobs: int | None, executor: str, scheduler: str | None, progress: bool,
         on_result: Callable[[dict[str, Any]], None] | None, max_memory: float | None, max_events: float | None,
         inline_bytes: int) -> SweepResult:
    # the command line refuses a foreign non-empty --out (without --force) before this; here only a
    # file, an unwritable place or another kind of result is refused
    t_start = time.perf_counter()
    out = _prepare(out)
    if isinstance(out, _fspath.FsPath) and sweep.backend == "testbed":
        raise SweepError(f"{out}: the testbed's runs are stored on this machine; --out must be a local directory")
    specs = sweep.runs()
    key = _scenario_key(sweep.scenario)
    est_events: dict[int, float] = {}  # a parameter point's estimated events (sizes the batches of runs)
    if sweep.backend == "sim":
        from jitterlab import _native, sim

        share = 1 if executor != "local" else min(jobs or os.cpu_count() or 1, max(len(specs), 1))
        # one estimate per parameter point (its first replication): random draws such as start
        # times move the cost little, and a point's keys are all checked this way
        avail = sim.available_memory()
        for sp in specs:
            if sp.point in est_events:
                continue
            try:
                est = dict(_native.estimate_json(sim.run_json(sweep.scenario, sp.overrides, key)[1]))
                est_events[sp.point] = float(est["events"])
                sim.check_cost(est, max_memory, max_events, share, avail)
            except ScenarioError as e:
                raise SweepError(f"run {sp.run_id} ({', '.join(f'{k}={v}' for k, v in sp.params.items()) or 'base'}): {e}") from None
    sweep_digest = _check_out(out, specs, sweep)
    _remove_stale_tmp(out)
    todo = []
    done_sha: dict[int, str] = {}  # run id: SHA-256 of its done record (finished runs)
    # one directory listing, not a stat per run (sweeps of 10,000 tiny runs)
    present = _fspath.names(out / "runs")
    for s in specs:
        if f"{s.run_id:06d}" not in present:
            todo.append(s)
            continue
        d = _run_dir(out, s.run_id)
        if (d / "done").exists():
            why, sha = _verify_run(d, sweep.tables, {"sweep": sweep_digest, "seed": s.seed})
            if why is None and sha is not None:
                done_sha[s.run_id] = sha
                continue
            print(f"{sweep.name}: run {s.run_id:06d}: {why}; running it again", file=sys.stderr)
        todo.append(s)
    skipped = len(specs) - len(todo)
    local = executor == "local"
    n_workers = 1 if sweep.backend == "testbed" else (jobs or os.cpu_count() or 1) if local else 0
    inline = local and (n_workers == 1 or len(todo) <= 1)
    # Workers store their runs themselves (on storage shared with the client: this machine's disk,
    # or for Dask a directory every worker mounts) and send back a receipt; only a run done in
    # this process hands its tables over in memory.
    # absolute: a kept worker pool keeps the working directory it was started in
    out_s = str(out) if isinstance(out, _fspath.FsPath) else os.path.abspath(out)
    names, testbed = list(sweep.tables), sweep.backend == "testbed"
    sweep_id = f"{os.getpid()}-{time.time_ns()}"  # this invocation (workers' peak memory counts from its first run)
    payloads = [{"sweep_id": sweep_id, "scenario": sweep.scenario, "scenario_key": key, "seed": s.seed, "run_id": s.run_id, "rep": s.rep, "point": s.point,
                 "overrides": s.overrides, "params": s.params, "tables": names, "reduce": sweep.reduce,
                 "identity": {"sweep": sweep_digest, "params": s.params, "seed": s.seed},  # `run_identity`, as JSON writes it
                 "out": out_s, "receipt": not inline, "inline_bytes": inline_bytes, "backend": sweep.backend,
                 "testbed_out": os.path.join(out_s, "testbed", f"{s.run_id:06d}") if testbed else None} for s in todo]
    if sweep.backend == "testbed":
        if not local:
            raise SweepError("sweep.backend = \"testbed\": runs need this machine's namespaces; use --executor local")
        jobs = 1  # one real-time run at a time, never in parallel
    bar = _progress.make(len(todo), skipped, sweep.name, progress, Progress)  # in place in a notebook
    todo_ids = {s.run_id for s in todo}
    digest = None if todo else _combined_digest(specs, done_sha)
    current = None if digest is None else _current_combined(out, tuple(sweep.tables), digest)
    combiner = None if current is not None else \
        _Combiner(out, tuple(sweep.tables), [s.run_id for s in specs], [s.run_id for s in specs if s.run_id not in todo_ids])
    t_runs = time.perf_counter()
    client_s = run_s = cpu_s = 0.0
    peak_rss = 0
    acc: dict[str, Any] = {"client_s": 0.0, "run_s": 0.0, "cpu_s": 0.0, "peak_rss": 0, "fails": [], "done_sha": done_sha}
    if combiner is not None:
        it = iter(_executor(executor, jobs, scheduler)(payloads, [est_events.get(s.point, 0.0) for s in todo]))
        try:
            _loop_results(it, out, local, inline, combiner, bar, on_result, acc)
        except BaseException:
            combiner.abort()
            getattr(it, "close", lambda: None)()  # the executor stops its runs now, not when collected
            raise
    client_s, run_s, cpu_s, peak_rss = acc["client_s"], acc["run_s"], acc["cpu_s"], acc["peak_rss"]
    t_collect = time.perf_counter()
    # from the receipts (a failed run's error.txt starts with the same line): no scan of OUT/runs/
    fails = sorted(acc["fails"], key=lambda r: r["run_id"])
    if current is not None:  # every run verified and the combined tables made of exactly them
        combined = current
    else:
        assert combiner is not None
        combined = combiner.finish()
        # certifies the combined tables (after they are in place): a rerun reuses them
        _write_combined_record(out, tuple(sweep.tables), None if fails else _combined_digest(specs, acc["done_sha"]))
    _fspath.write_text(out / "failures.csv", _failures_csv(fails))
    result = SweepResult(out, combined, fails, len(todo), skipped)
    t_end = time.perf_counter()
    result.timing = {"wall_s": t_end - t_start, "prepare_s": t_runs - t_start, "runs_wall_s": t_collect - t_runs,
                     "client_s": client_s, "collect_s": t_end - t_collect, "run_s": run_s, "run_cpu_s": cpu_s,
                     "serial_s": (t_runs - t_start) + client_s + (t_end - t_collect), "workers": n_workers,
                     "worker_peak_rss_bytes": peak_rss, "client_peak_rss_bytes": _peak_rss(), "runs": len(todo),
                     "combine_cpu_s": combiner.cpu_s if combiner is not None else 0.0}
    return result


def _loop_results(it: Iterable[dict[str, Any]], out: Out, local: bool, inline: bool, combiner: _Combiner, bar: Progress,
                  on_result: Callable[[dict[str, Any]], None] | None, acc: dict[str, Any]) -> None:
    """The client's loop over the runs' receipts: hands each run to the combiner, keeps the
    counts and the progress bar. `acc` gathers client_s (the client's own time, serial), run_s,
    cpu_s (the workers'), the workers' peak_rss and fails (the failed runs' first error lines)."""
    it = iter(it)
    client_s = run_s = cpu_s = 0.0
    peak_rss = 0
    while True:
        t0 = time.perf_counter()
        res = next(it, None)
        t1 = time.perf_counter()
        if res is None:
            break
        if inline:  # the run itself was done in next(): its wall time is the worker's, the rest is ours
            client_s += max(t1 - t0 - res["wall_s"], 0.0)
        if not local and res.get("stored") and run_s == 0.0 and not (_run_dir(out, res["run_id"]) / ("done" if res["ok"] else "error.txt")).exists():
            # checked on the first receipt: a worker wrote somewhere this client does not see
            raise SweepError(f"{out}: a Dask worker stored run {res['run_id']} where this client cannot see it; "
                             "--out must be a directory every worker shares with the client (same path)")
        combiner.add(res["run_id"], res.get("tables") if res["ok"] else None, res["ok"], res.get("pack"))
        if res.get("done_sha256"):
            acc["done_sha"][int(res["run_id"])] = res["done_sha256"]
        if not res["ok"]:
            acc["fails"].append({"run_id": int(res["run_id"]), "error": str(res.get("error", "")).split("\n", 1)[0]})
        run_s += res["wall_s"]
        cpu_s += res.get("cpu_s", 0.0)
        peak_rss = max(peak_rss, res.get("rss_bytes", 0))
        bar.update(res["ok"])
        if on_result:
            on_result(res)
        client_s += time.perf_counter() - t1
        acc.update(client_s=client_s, run_s=run_s, cpu_s=cpu_s, peak_rss=peak_rss)


#: OUT/COMBINED certifies the combined tables: the digest of the done records of the runs they
#: were made of, and each table file's SHA-256. A rerun whose runs are all finished and verified,
#: with the same digest, reuses the files (hashed again, a read at disk speed) instead of splicing
#: every run again (`reproduce pam2013` run again on its finished OUT: 3.15-3.3 s instead of
#: 3.55-3.9 s on 2 cores). A run redone, a table file changed, no record or a damaged one: the
#: tables are combined again. Local directories only: on an object store hashing the tables would
#: download them, so a rerun there combines again.
COMBINED = "combined.json"


def _combined_digest(specs: Sequence[RunSpec], done_sha: Mapping[int, str]) -> str | None:
    """SHA-256 over each run's id and done record's SHA-256, in run order (None: a run did not
    finish). A done record holds its run's files' SHA-256, so this certifies every stored byte."""
    h = hashlib.sha256()
    for s in specs:
        sha = done_sha.get(s.run_id)
        if sha is None:
            return None
        h.update(f"{s.run_id} {sha}\n".encode())
    return h.hexdigest()


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


def serial_fraction(timing: Mapping[str, float]) -> float:
    """The share of a sweep's wall time spent outside the workers (`SweepResult.timing`): planning
    and checks before the first run, the client's handling of each result, collecting the tables.
    With one worker the rest is the runs themselves, so this is the serial part of Amdahl's law."""
    return timing["serial_s"] / timing["wall_s"] if timing["wall_s"] > 0 else 0.0


def _scenario_key(sc: Mapping[str, Any]) -> str:
    """A digest of the base scenario (workers cache its prepared JSON under it)."""
    return hashlib.sha256(json.dumps(sc, sort_keys=True, default=str).encode()).hexdigest()[:32]


#: Runs shorter than a worker's cost per task (pickling and a pipe: ~2 ms; Dask's scheduler:
#: ~8 ms) travel in batches, each about BATCH_EVENTS of estimated simulation (~0.1 s), counting a
#: run's fixed cost (its tables, storing them: ~1.6 ms) as RUN_FIXED_EVENTS; never so large that
#: a worker gets fewer than TASKS_PER_WORKER tasks (the last tasks keep every worker busy).
BATCH_EVENTS = 2_000_000
RUN_FIXED_EVENTS = 50_000
TASKS_PER_WORKER = 8


def _batches(payloads: list[dict], est_events: list[float], workers: int) -> list[list[dict]]:
    """The payloads, in order, cut into tasks of about BATCH_EVENTS (see above)."""
    cap = max(1, len(payloads) // (TASKS_PER_WORKER * max(workers, 1)))
    out: list[list[dict]] = []
    cur: list[dict] = []
    acc = 0.0
    for p, e in zip(payloads, est_events):
        cur.append(p)
        acc += e + RUN_FIXED_EVENTS
        if acc >= BATCH_EVENTS or len(cur) >= cap:
            out.append(cur)
            cur, acc = [], 0.0
    if cur:
        out.append(cur)
    return out


def execute_batch(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`execute` for each payload of a task (a worker's batch of short runs), in order."""
    return [execute(p) for p in payloads]


_POOL: tuple[int, Any, bool] | None = None  # (workers, the pool, keep_main)


def _pool(n: int, keep_main: bool = False) -> Any:
    """The local executor's pool of `n` worker processes, kept for the next sweep of this process
    (a preset runs 3-4 sweeps: starting 2 spawned workers, each importing jitterlab, costs ~0.25 s
    of wall a sweep on 2 cores). Spawned: workers inherit no threads (pyarrow's pools, the
    combiner) or locks of the client, and do not re-run the caller's script (`jitterlab._spawn`:
    a script without a `__main__` guard works) unless `keep_main` (a reduce defined there)."""
    global _POOL
    if _POOL is not None and (_POOL[0], _POOL[2]) == (n, keep_main) and not getattr(_POOL[1], "_broken", False):
        return _POOL[1]
    _drop_pool()
    from concurrent.futures import ProcessPoolExecutor

    from jitterlab import _procs, _spawn

    _POOL = (n, ProcessPoolExecutor(max_workers=n, mp_context=_spawn.context(keep_main),
                                    initializer=_procs.die_with_parent, initargs=(os.getpid(),)), keep_main)
    return _POOL[1]


def _drop_pool(cancel: bool = False) -> None:
    """Shuts the kept pool down (`cancel`: its queued tasks dropped, running ones waited for)."""
    global _POOL
    if _POOL is not None:
        pool, _POOL = _POOL[1], None
        pool.shutdown(wait=True, cancel_futures=cancel)


def _executor(kind: str, jobs: int | None, scheduler: str | None) -> Callable[[list[dict], list[float]], Iterable[dict]]:
    """The executor `kind` as a function of the payloads and their runs' estimated events,
    yielding the receipts as runs finish."""
    if kind == "local":
        n = jobs or os.cpu_count() or 1

        def local(payloads: list[dict], est_events: list[float]) -> Iterable[dict]:
            if n == 1 or len(payloads) <= 1:
                for p in payloads:
                    yield execute(p)
                return
            from concurrent.futures import FIRST_COMPLETED, wait
            from concurrent.futures.process import BrokenProcessPool

            from jitterlab import _spawn

            keep_main = _spawn.defined_in_main(payloads[0].get("reduce"))
            ex = _pool(n, keep_main)
            finished = False
            try:
                # A window of WINDOW_PER_WORKER tasks a worker in flight, topped up as each
                # finishes: wait() installs a waiter on every future it is given, so waiting on
                # all of a sweep's futures at once cost O(runs) a result, O(runs^2) a sweep
                # (10,000 tiny runs: 3/4 of the client's time). Finished futures are dropped
                # as they are handed on: the client holds no more receipts than it keeps.
                todo = iter(_batches(payloads, est_events, n))
                pending = {ex.submit(execute_batch, b) for b in itertools.islice(todo, WINDOW_PER_WORKER * n)}
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        pending.update(ex.submit(execute_batch, b) for b in itertools.islice(todo, 1))
                        try:
                            got = f.result()
                        except BrokenProcessPool as e:
                            if keep_main:
                                raise SweepError(_spawn.HINT) from e
                            raise
                        yield from got
                finished = True
            finally:
                if not finished:  # an error, an interrupt or an abandoned sweep: no run may outlive it
                    _drop_pool(cancel=True)

        return local
    if kind == "dask":
        def dask(payloads: list[dict], est_events: list[float]) -> Iterable[dict]:
            try:
                from dask.distributed import Client, as_completed
            except ImportError as e:  # pragma: no cover - dask is a declared dependency
                raise SweepError(f"--executor dask needs dask.distributed: {e}") from None
            if not scheduler:
                raise SweepError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
            with _dask_client(Client, scheduler) as client:
                workers = sum(client.nthreads().values()) or 1
                batches = _batches(payloads, est_events, workers)
                for f in as_completed(client.map(execute_batch, batches, pure=False)):
                    res = f.result()
                    f.release()  # the cluster forgets each receipt once the client has it
                    yield from res

        return dask
    raise SweepError(f"executor: must be local or dask, got {kind!r}")


def _dask_client(client_cls: Any, scheduler: str) -> Any:
    """A Dask client of `scheduler`, or one SweepError line: a place that does not answer, and one
    that answers with something other than Dask's protocol (its bytes read as a frame length can
    ask for gigabytes: a MemoryError that is no shortage of memory here)."""
    try:
        return client_cls(scheduler, timeout=30)
    except (OSError, TimeoutError) as e:
        raise SweepError(f"--scheduler {scheduler}: no Dask scheduler answers there ({type(e).__name__}: {e})") from None
    except (Exception, MemoryError) as e:
        raise SweepError(f"--scheduler {scheduler}: not a Dask scheduler (its answer is not Dask's protocol: {type(e).__name__})") from None


def _compact(parts: list[pa.Table], unify: bool = True) -> pa.Table:
    """Tables as one, one chunk a column; `unify`: types unified where the parts disagree (half
    the speed on many small tables: only a mixed table needs it)."""
    return pa.concat_tables(parts, promote_options="default" if unify else "none").combine_chunks()


class _Combiner:
    """Builds OUT/<table>.parquet while the runs finish, in a thread beside the client's loop.

    Runs are appended in run-id order as soon as every earlier run has finished (or failed). A
    run's table of PARQUET_MIN_ROWS rows or more is its pack's Parquet image, spliced into the file
    as it is (`_native.ParquetConcat`: column chunks copied, the footer rewritten; no decoding, no
    encoding), its own row group(s). Smaller ones are gathered and encoded as one row group each
    time ROW_GROUP rows have gathered (128 Ki rows: little is left to write after the last run,
    and row groups stay large for readers). So the combined tables grow while workers still run,
    and after the last run only its own tables and the footers remain to write (the serial part
    of a sweep, Amdahl); splicing and encoding release the GIL. The files depend only on the runs'
    tables, not on the order runs finish in nor on how they were stored (a part that is not
    already Parquet is encoded exactly as a worker would have), so every executor writes the same
    bytes. A table whose runs disagree on its schema (a column null in one run, typed in another)
    is written at the end from all its parts with types unified instead.

    The client's memory is bounded: the runs' tables are also kept in memory, to be handed back
    without reading the files again, only while they total at most HOLD_BYTES and are in memory
    anyway (a spliced part read from storage is not decoded for it); otherwise the result reads
    the combined table from its file when first asked for (`LazyTables`)."""

    ROW_GROUP = 1 << 17
    HOLD_BYTES = 256 << 20
    COMPACT_PARTS = 256
    #: runs averaging fewer rows than this are joined into one chunk before a row group is written
    CHUNK_ROWS = 4096

    def __init__(self, out: Out, tables: tuple[str, ...], order: list[int], ready: Iterable[int]):
        import queue
        import threading

        self.out, self.tables, self.order = out, tables, order
        self.pos = 0
        # True: read from its files; (tables or None, (pack bytes, parts) or None): in hand; None: failed
        self.state: dict[int, tuple[dict[str, pa.Table] | None, tuple[bytes, dict] | None] | None | bool] = {i: True for i in ready}
        self.parts: dict[str, list[pa.Table]] = {n: [] for n in tables}
        self.schema: dict[str, pa.Schema] = {}
        self.rows = dict.fromkeys(tables, 0)
        self.held = 0
        self.spilled = False  # parts of tables with one schema no longer kept in memory
        self.lazy: set[str] = set()  # tables some of whose parts were spliced without being in memory
        self.pending: dict[str, list[pa.Table]] = {n: [] for n in tables}
        self.pending_rows = dict.fromkeys(tables, 0)
        self.concat: dict[str, Any] = {}  # name: _native.ParquetConcat
        self.files: dict[str, Any] = {}  # name: its temporary file, open for writing
        self.mixed: set[str] = set()
        self.error: BaseException | None = None
        #: CPU seconds of the combining thread (beside the runs: on many cores its share of a
        #: 1-worker sweep bounds the speed-up as the serial part does)
        self.cpu_s = 0.0
        self.q: Any = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="sweep-combine", daemon=True)
        self.thread.start()

    def add(self, run_id: int, tables: Mapping[str, pa.Table] | None, ok: bool, pack: tuple[bytes, dict] | None = None) -> None:
        """A finished run: its tables when in memory and/or its pack's bytes and parts (a receipt
        carried them; else they are read from its files), or a failed one (nothing to add)."""
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
            pack: tuple[bytes, dict] | None = None
            if got is True:  # stored: its pack read once
                pack = read_run_pack(_run_dir(self.out, rid))
                if pack is None:  # stored a file a table by an older version
                    tables = read_run_tables(_run_dir(self.out, rid), self.tables)
            else:
                tables, pack = got[0] or {}, got[1]
            buf = pa.py_buffer(pack[0]) if pack is not None else None
            for name in self.tables:
                t = tables.get(name)
                raw = None
                if buf is not None and pack is not None and name in pack[1]:
                    off, size, _ = pack[1][name]
                    part = buf.slice(off, size)
                    if _is_parquet(part):
                        raw = part
                    elif t is None:
                        t = _decode_part(part)
                if raw is None and t is not None and t.num_rows >= PARQUET_MIN_ROWS:
                    raw = _encode_run_table(t)  # as its pack would hold it (a run stored by an older version)
                rows = t.num_rows if t is not None else pack[1][name][2] if raw is not None and pack is not None else 0
                if not rows:
                    continue
                self.rows[name] += rows
                self._add(name, t, raw)
            if not self.spilled and self.held > self.HOLD_BYTES:
                self.spilled = True
                for name in self.tables:
                    if name not in self.mixed:
                        self.parts[name] = []

    def _add(self, name: str, t: pa.Table | None, raw: pa.Buffer | None) -> None:
        """One run's table `name`: in memory (`t`) and/or as its Parquet image (`raw`)."""
        if name in self.mixed:
            self._keep(name, t if t is not None else _decode_part(raw))
            return
        if name not in self.schema:
            self.schema[name] = t.schema if t is not None else pq.read_schema(pa.BufferReader(raw))
        elif t is not None and t.schema != self.schema[name]:
            self._to_mixed(name)
            self._keep(name, t)
            return
        if raw is not None:
            self._flush(name)  # the runs before it first: row groups in run order
            try:
                self._append(name, raw)
            except ValueError:  # its schema differs (a column null in this run, typed in another)
                self._to_mixed(name)
                self._keep(name, t if t is not None else _decode_part(raw))
                return
        else:
            self.pending[name].append(t)
            self.pending_rows[name] += t.num_rows  # type: ignore[union-attr]
        if not self.spilled and t is not None:
            self._keep(name, t)
            self.held += t.get_total_buffer_size()  # Table.nbytes costs ~50 us a table (it dedups buffers)
        elif not self.spilled:
            self.lazy.add(name)  # spliced, never decoded: read from the combined file when used
            self.parts[name] = []
        if raw is None:
            if self.pending_rows[name] >= self.ROW_GROUP:
                self._flush(name)
            elif len(self.pending[name]) >= self.COMPACT_PARTS:
                self.pending[name] = [_compact(self.pending[name], unify=False)]

    def _keep(self, name: str, t: pa.Table) -> None:
        """Holds run table `t` for the result (zero-copy), many small ones compacted into one:
        Arrow's cost per table and column, not the rows, is what grows with many tiny runs
        (10,000 of them, ~70,000 small tables, held ~0.6 GB)."""
        if name in self.lazy and name not in self.mixed:
            return
        parts = self.parts[name]
        parts.append(t)
        if len(parts) >= self.COMPACT_PARTS:
            self.parts[name] = [_compact(parts, unify=name in self.mixed)]

    def _to_mixed(self, name: str) -> None:
        """Table `name` met a second schema: from now on all its parts are kept and written at the
        end with types unified; what was dropped from memory is read back from its file."""
        self._flush(name)
        self._close(name)
        self.mixed.add(name)
        if (self.spilled or name in self.lazy) and self._tmp(name).exists():
            self.parts[name] = [_fspath.read_parquet(self._tmp(name))]
        self.lazy.discard(name)
        self._tmp(name).unlink(missing_ok=True)

    def _append(self, name: str, data: pa.Buffer | bytes) -> None:
        """Splices Parquet image `data` into table `name`'s file (ValueError: another schema)."""
        c = self.concat.get(name)
        if c is None:
            from jitterlab import _native

            c = self.concat[name] = _native.ParquetConcat()
        chunk = c.append(data.to_pybytes() if isinstance(data, pa.Buffer) else data)
        f = self.files.get(name)
        if f is None:
            f = self.files[name] = _fspath.open_write(self._tmp(name))
        f.write(chunk)

    def _flush(self, name: str) -> None:
        """Writes the pending runs of table `name` as one row group."""
        if not self.pending[name]:
            return
        t = pa.concat_tables(self.pending[name])
        if t.num_rows < self.CHUNK_ROWS * len(self.pending[name]):
            # small runs as one chunk: Parquet's writer pays per chunk and column (1000 one-row
            # runs tables: 8x); large ones are written as they are (the same bytes, no copy)
            t = t.combine_chunks()
        self.pending[name], self.pending_rows[name] = [], 0
        self._append(name, _parquet_image(t))

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
                if name in self.mixed or not self.rows[name]:
                    self._close(name)
                    self._tmp(name).unlink(missing_ok=True)
                    t = pa.concat_tables(parts, promote_options="default") if parts else _empty()
                    _fspath.write_parquet(final, t, **_combined_options(t))
                else:
                    self._flush(name)
                    self._close(name)
                    _fspath.replace(self._tmp(name), final)
                    t = None if self.spilled or name in self.lazy else pa.concat_tables(parts)
            except OSError as e:
                self.abort()
                raise _io._oserror(final, e, "write") from None
            if t is None:
                combined.later(name, final)
            else:
                combined[name] = t
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
    dirs = sorted(p for p in (out / "runs").glob("[0-9]*") if p.is_dir() and ".tmp" not in p.name)
    done = [d for d in dirs if (d / "done").exists()]
    if not verified:
        bad = {d: verify_run(d) for d in done if int(d.name) not in fresh}
        for d, why in bad.items():
            if why is not None:
                print(f"run {d.name}: {why}; left out of the combined tables (run the sweep again to redo it)", file=sys.stderr)
        done = [d for d in done if bad.get(d) is None]
    # the same combining as a sweep's (row groups in run order, the client's memory bounded)
    ids = [int(d.name) for d in done]
    combiner = _Combiner(out, tables, ids, [i for i in ids if i not in fresh])
    try:
        for i in ids:
            if i in fresh:
                combiner.add(i, fresh[i], True)
    except BaseException:
        combiner.abort()
        raise
    combined = combiner.finish()
    fails = [{"run_id": int(d.name), "error": (d / "error.txt").read_text().split("\n", 1)[0]} for d in dirs if (d / "error.txt").exists()]
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


def _empty() -> pa.Table:
    """A table of no runs (a run_id column only), built without pyarrow's converters (they import pandas)."""
    return pa.Table.from_arrays([pa.Array.from_buffers(pa.int64(), 0, [None, pa.py_buffer(b"")])], names=["run_id"])


def _combined_options(t: pa.Table) -> dict[str, Any]:
    """Parquet options of the combined tables: dictionary pages only for text columns (names
    repeat; for numbers they cost time and rarely space); integer columns DELTA_BINARY_PACKED
    (times in ns, sequence numbers, run ids rise in small steps: the media table of `bench/run
    vs-ns2` is 20x smaller than plain+snappy and no slower to write; every Parquet reader since
    format 2.0 decodes it); statistics kept (readers filter on them)."""
    return {"use_dictionary": [c.name for c in t.schema if pa.types.is_string(c.type)],
            "column_encoding": {c.name: "DELTA_BINARY_PACKED" for c in t.schema if pa.types.is_integer(c.type)}}


def sweep(spec: str | Path | Mapping[str, Any] | Sweep, out: str | Path, *, jobs: int | None = None, executor: str = "local",
          scheduler: str | None = None, progress: bool = True, on_result: Callable[[dict[str, Any]], None] | None = None,
          max_memory: float | None = None, max_events: float | None = None) -> SweepResult:
    """Runs a sweep: ``jitterlab.sweep("file.toml", "out/dir", jobs=4)``.

    Parameters
    ----------
    spec : str, Path, mapping or Sweep
        A sweep file, the parsed TOML document as a dict, or a loaded `Sweep`.
    out : str or Path
        Output directory (resumable: finished runs are skipped).
    jobs, executor, scheduler, progress, on_result, max_memory, max_events
        As `run`: local worker processes (default: all cores), ``"local"`` or ``"dask"`` (with
        the scheduler's address), a progress bar on stderr, a callback per finished run, cost limits.
        From a plain script no ``if __name__ == "__main__":`` guard is needed (see `jitterlab._spawn`).

    Returns
    -------
    SweepResult
        The combined tables (`jitterlab.tables.Tables`), failures and counts.
    """
    if not isinstance(spec, (str, Path, Mapping, Sweep)):
        raise TypeError(f"parameter 'spec': expected a sweep file, a dict or a Sweep, got {type(spec).__name__}")
    if not isinstance(out, (str, Path, _fspath.FsPath)):
        raise TypeError(f"parameter 'out': expected a directory path, got {type(out).__name__} {out!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"parameter 'jobs': a number of worker processes (1 or more), got {jobs!r}")
    sw = spec if isinstance(spec, Sweep) else load(spec) if isinstance(spec, (str, Path)) else from_dict(spec)
    return run(sw, out, jobs=jobs, executor=executor, scheduler=scheduler, progress=progress, on_result=on_result,
               max_memory=max_memory, max_events=max_events)


class _CallableModule(type(sys)):  # type: ignore[misc]
    """Makes the module itself callable, so `jitterlab.sweep(...)` runs a sweep while
    `jitterlab.sweep.load`, `.run` … stay where they are."""

    def __call__(self, spec: str | Path | Mapping[str, Any] | Sweep, out: str | Path, **options: Any) -> SweepResult:
        return sweep(spec, out, **options)  # the signature to check is `sweep`'s (see jitterlab/__init__.py)


sys.modules[__name__].__class__ = _CallableModule
