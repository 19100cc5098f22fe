"""Running the built-in simulator from Python: `simulate(scenario, seed)` returns the shared tables
(docs/tables.md) as a `jitterlab.Tables` built straight from the simulator's columns."""
from __future__ import annotations

import functools
import itertools
import json
import os
from pathlib import Path
from typing import Any, Mapping

import sys
from typing import TYPE_CHECKING

from jitterlab import _lazy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
else:  # a sweep's run keeps its tables native: pyarrow and numpy only where a table is read
    np, pa = _lazy.module("numpy"), _lazy.module("pyarrow")

from jitterlab import _io, _native
from jitterlab import scenario as _scn
from jitterlab.tables import NULLABLE, LazyTables, Tables, to_pandas  # noqa: F401  (to_pandas: still importable from here)
from jitterlab._runprep import _Deferred, prepare_run, run_json  # noqa: F401  (run_json: still importable from here)

NULL_NS = -(2**63)  # the core's null time (int64's least value)
FORMAT_VERSION = 1
#: Events a run may take unless raised (--max-events): ~1 to 3 hours at the 1-6 million events per
#: second measured on the shipped scenarios.
DEFAULT_MAX_EVENTS = 2e10


class ResourceError(_native.ScenarioError):
    """A scenario whose estimated cost exceeds the limits; the message gives the estimate."""


def available_memory() -> int:
    """Bytes of memory available now (Linux MemAvailable; else physical memory)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (OSError, ValueError, AttributeError):
        return 8 << 30


def _human(n: float) -> str:
    for unit, k in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n:.0f} B"


def estimate(scenario: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The cost of a run before it runs (crates/sim/src/estimate.rs): events, table rows, memory."""
    sc = _scn.with_overrides(_scn.load(scenario), overrides)
    return dict(_native.estimate_json(_scn.to_json(sc)))


def check_cost(est: Mapping[str, float], max_memory: float | None = None, max_events: float | None = None, share: int = 1,
               available: int | None = None) -> None:
    """Raises ResourceError when the estimate exceeds the limits: `max_memory` bytes (default half
    of the available memory (`available`, read now when not given), divided among `share`
    parallel runs) and `max_events` (default DEFAULT_MAX_EVENTS)."""
    if max_memory is None:
        mem_limit = (available_memory() if available is None else available) / 2 / max(share, 1)
    else:
        mem_limit = float(max_memory)
    ev_limit = DEFAULT_MAX_EVENTS if max_events is None else float(max_events)
    if not (est["memory_bytes"] > mem_limit or est["events"] > ev_limit):
        return  # a sweep checks every point: the messages below are made only for a refusal
    what = (f"{est['events']:.3g} events, {est['media_rows']:.3g} media rows, {est['nodes']:.0f} nodes, "
            f"{est['flows']:.0f} flows over {est['duration_ns'] / 1e9:.6g} s simulated")
    if est["memory_bytes"] > mem_limit:
        how = ("half the available memory" + (f" shared by {share} parallel runs" if share > 1 else "")) if max_memory is None else "--max-memory"
        raise ResourceError(f"the scenario would need about {_human(est['memory_bytes'])} of memory ({what}); the limit is "
                            f"{_human(mem_limit)} ({how}); shorten `duration` or the traffic, or raise --max-memory")
    raise ResourceError(f"the scenario would take about {est['events']:.3g} events ({what}); the limit is {ev_limit:.3g} "
                        "(--max-events); shorten `duration` or the traffic, or raise --max-events")


# Arrow arrays are built from their buffers (numpy memory, no copy for int64): pyarrow's converters
# (pa.array, pa.table from Python or numpy) import pandas on first use, half a second a process.
def _validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    """Arrow's validity bitmap (LSB first) of a boolean mask, and the null count."""
    nulls = int(len(valid) - np.count_nonzero(valid))
    return (pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None), nulls


def _i64(a: Any, valid: np.ndarray | None = None) -> pa.Array:
    a = np.ascontiguousarray(a, dtype=np.int64)
    if valid is None:
        return pa.Array.from_buffers(pa.int64(), len(a), [None, pa.py_buffer(a)], null_count=0)
    bitmap, nulls = _validity(valid)
    return pa.Array.from_buffers(pa.int64(), len(a), [bitmap, pa.py_buffer(a)], null_count=nulls)


def _nullable(a: np.ndarray) -> pa.Array:
    a = np.asarray(a, dtype=np.int64)
    return _i64(a, a != NULL_NS)


def _bool(a: Any) -> pa.Array:
    a = np.asarray(a, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(np.packbits(a, bitorder="little"))])


def _f64(a: Any) -> pa.Array:
    a = np.ascontiguousarray(a, dtype=np.float64)
    return pa.Array.from_buffers(pa.float64(), len(a), [None, pa.py_buffer(a)])


def _strings(values: list[str]) -> pa.Array:
    enc = [v.encode() for v in values]
    off = np.array([0, *itertools.accumulate(map(len, enc))], dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), len(enc), [None, pa.py_buffer(off), pa.py_buffer(b"".join(enc))])


def _take_strings(values: list[str], idx: np.ndarray) -> pa.Array:
    """values[idx] as a string array, null where idx < 0: gathered in Rust into the column's
    buffers (no per-row Python, no temporaries beyond the output: queue samples run to millions
    of rows; and no import of pyarrow.compute, ~50 ms a process)."""
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    if not values:
        return pa.nulls(len(idx), type=pa.string())
    bitmap, offsets, data, nulls = _native.take_strings(list(values), idx)
    return pa.Array.from_buffers(pa.string(), len(idx), [None if bitmap is None else pa.py_buffer(bitmap), pa.py_buffer(offsets),
                                                         pa.py_buffer(data)], null_count=nulls)


def _column(values: list[Any]) -> pa.Array:
    """A column of Python scalars with the type `pa.array(values)` infers, for the common cases
    (all bool, int, float or str, with None as null); anything else goes to pa.array."""
    types = {type(v) for v in values}
    if len(types) == 1:  # the usual case: no nulls, one type
        t = types.pop()
        try:
            if t is int:
                return _i64(np.array(values, dtype=np.int64))
            if t is float:
                return _f64(values)
            if t is str:
                return _strings(values)
            if t is bool:
                return _bool(values)
        except OverflowError:  # an int beyond int64: pyarrow's own inference
            return pa.array(values)
        types = {t}
    present = [v for v in values if v is not None]
    if not present:
        return pa.nulls(len(values))
    types.discard(type(None))
    valid = np.array([v is not None for v in values], dtype=bool)
    if types == {bool}:
        a = _bool([v is True for v in values])
    elif types == {int} and all(-(2**63) <= v < 2**63 for v in present):
        return _i64([v if v is not None else 0 for v in values], valid)
    elif types <= {int, float} and float in types:
        a = _f64([float(v) if v is not None else 0.0 for v in values])
    elif types == {str}:
        return _take_strings(present, np.where(valid, np.cumsum(valid) - 1, -1))
    else:
        return pa.array(values)
    bitmap, nulls = _validity(valid)
    return pa.Array.from_buffers(a.type, len(values), [bitmap] + a.buffers()[1:], null_count=nulls)


def _table(cols: dict[str, pa.Array]) -> pa.Table:
    return pa.Table.from_arrays(list(cols.values()), names=list(cols))


class Result(Tables):
    """Tables of one run (`jitterlab.tables.Tables`: Arrow tables, pandas views), plus the
    scenario as run, the seed and the run totals. `media_packets`, `tcp_flows`, `queue_samples`,
    `runs` follow docs/tables.md; `channels` and `flows` describe the topology and traffic with
    end-of-run counters."""

    NAMES = ("media_packets", "tcp_flows", "queue_samples", "runs", "channels", "flows", "tcp_series", "rtc_frames", "rtc_series")

    def __init__(self, arrow: Mapping[str, pa.Table], scenario: dict[str, Any] | _Deferred, seed: int, totals: dict[str, Any],
                 source: str = "sim"):
        super().__init__(arrow, source)
        self._scenario = scenario
        self.seed = seed
        self.totals = totals
        self.pcap: dict[str, str] = {}
        self.pcap_epoch_ns = 0

    @property
    def scenario(self) -> dict[str, Any]:
        """The scenario as run, with its overrides (a sweep's run builds it when first read)."""
        if isinstance(self._scenario, _Deferred):
            self._scenario = self._scenario()
        return self._scenario

    @scenario.setter
    def scenario(self, value: dict[str, Any]) -> None:
        self._scenario = value

    def table(self, name: str) -> pd.DataFrame:
        """The table `name` as a pandas DataFrame (same as ``result[name]``)."""
        return self[name]

    def save(self, out: str | Path) -> Path:
        """Writes the run as `jitterlab simulate --out` does: each table as Parquet, manifest.json
        (see `write`), and the captures of ``output.pcap`` under ``out/pcap/`` (``pcap`` then
        names those copies). Returns ``out``; `jitterlab.load(out)` reads it back."""
        import shutil

        out = Path(out)
        dest = out / "pcap"
        moved = {}
        for node, p in self.pcap.items():
            src = Path(p)
            if src.parent.resolve() != dest.resolve():
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest / src.name)
            moved[node] = str(dest / src.name)
        self.pcap = moved
        return write(self, out)

    # typed properties (not property(lambda ...)): type checkers and stubtest see DataFrames
    @property
    def media_packets(self) -> pd.DataFrame:
        return self.table("media_packets")

    @property
    def tcp_flows(self) -> pd.DataFrame:
        return self.table("tcp_flows")

    @property
    def queue_samples(self) -> pd.DataFrame:
        return self.table("queue_samples")

    @property
    def runs(self) -> pd.DataFrame:
        return self.table("runs")

    @property
    def channels(self) -> pd.DataFrame:
        return self.table("channels")

    @property
    def flows(self) -> pd.DataFrame:
        return self.table("flows")

    @property
    def tcp_series(self) -> pd.DataFrame:
        """Per-ACK sender state of the TCP flows with `series = true`: t_ns, flow_id, cwnd,
        ssthresh (null while unset), srtt_ns (null before the first sample), inflight — bytes."""
        return self.table("tcp_series")

    @property
    def rtc_frames(self) -> pd.DataFrame:
        """Adaptive media (`cc = …`): one row per encoded frame."""
        return self.table("rtc_frames")

    @property
    def rtc_series(self) -> pd.DataFrame:
        """Adaptive media: the controller's state after each feedback report."""
        return self.table("rtc_series")


def _check_int(name: str, v: Any) -> None:
    # a numpy integer only where numpy is loaded (nothing else could have made one)
    if isinstance(v, bool) or not (isinstance(v, int) or ("numpy" in sys.modules and isinstance(v, np.integer))):
        raise TypeError(f"parameter '{name}': expected an int, got {type(v).__name__} {v!r}")


def simulate(
    scenario: str | Path | Mapping[str, Any],
    seed: int = 1,
    run_id: int = 0,
    overrides: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    pcap_dir: str | Path | None = None,
    max_memory: float | None = None,
    max_events: float | None = None,
    share: int = 1,
) -> Result:
    """Runs a scenario on the simulator.

    Parameters
    ----------
    scenario : str, Path or mapping
        A TOML file, TOML text, or the scenario as a dict (docs/scenarios.md).
    seed : int
        Master seed (0 to 2**64 - 1); the same scenario and seed give identical tables.
    run_id : int
        Value of the ``run_id`` column in every table.
    overrides : mapping, optional
        Dotted scenario keys set before the run (``{"access.down_rate": "3Mbit"}``).
    params : mapping, optional
        Extra columns of the ``runs`` table (a sweep's parameters).
    pcap_dir : str or Path, optional
        Where the nodes listed in ``output.pcap`` get a capture each; without it they go to a
        temporary directory removed when the process exits, and `Result.save` copies them into
        its output's ``pcap/``.
    max_memory, max_events : float, optional
        Cost limits checked before running (see `check_cost`).
    share : int
        Number of runs sharing the machine's memory (the cost check divides by it).

    Returns
    -------
    Result
        A `jitterlab.Tables` (media_packets, tcp_flows, queue_samples, runs, channels, flows,
        tcp_series; docs/tables.md) with ``scenario``, ``seed``, ``totals``, and ``pcap`` (node
        name -> path; packets at ``pcap_epoch_ns`` + simulated time).

    Raises
    ------
    jitterlab.ScenarioError
        A malformed scenario, naming the key.
    ResourceError
        Before running, when the estimated cost exceeds `max_memory` / `max_events`.

    Examples
    --------

    >>> r = simulate({"duration": "1s",
    ...               "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms"}},
    ...               "traffic": [{"kind": "audio", "from": "a", "to": "b"}]}, seed=1)
    >>> len(r.media_packets), int((r.media_packets.recv_ns - r.media_packets.send_ns).iloc[0])
    (50, 10640000)
    """
    _check_int("seed", seed)
    _check_int("run_id", run_id)
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"parameter 'overrides': expected a mapping of dotted keys to values, got {type(overrides).__name__}")
    if seed < 0 or seed >= 2**64:
        raise _native.ScenarioError(f"seed: must be between 0 and 2^64-1, got {seed}")
    sc = _scn.with_overrides(_scn.load(scenario), overrides)
    out_pcap = sc.get("output", {}).get("pcap") if isinstance(sc.get("output"), Mapping) else None
    if pcap_dir is None and out_pcap:
        # the scenario asks for captures: they go to a temporary directory, removed when this
        # process exits, until `Result.save` copies them into its output
        import atexit
        import shutil
        import tempfile

        pcap_dir = tempfile.mkdtemp(prefix="jitterlab-pcap-")
        atexit.register(shutil.rmtree, pcap_dir, True)
    js = _scn.to_json(sc)
    check_cost(_native.estimate_json(js), max_memory, max_events, share)
    raw = _native.simulate_tables(js, int(seed), int(run_id), None if pcap_dir is None else str(pcap_dir))
    res = _to_result(raw, sc, int(seed), run_id, params or {})
    res.pcap = dict(raw["pcap"])
    res.pcap_epoch_ns = int(raw["pcap_epoch_ns"])
    return res


def _to_result(raw: dict, sc: dict | _Deferred, seed: int, run_id: int, params: Mapping[str, Any],
               name: str | None = None) -> Result:
    t = raw["totals"]
    if name is None:
        name = (sc() if isinstance(sc, _Deferred) else sc).get("name", "scenario")
    row: dict[str, Any] = {
        "run_id": run_id,
        "scenario": name,
        "seed": seed,
        "source": "sim",
        "tcp_start_ns": t["tcp_start_ns"],
        "tcp_end_ns": t["tcp_end_ns"],
        "end_ns": t["end_ns"],
        "events": t["events"],
        "jitterlab_version": _native.__version__,
    }
    for key, val in params.items():
        row.setdefault(key, val)
    if isinstance(raw["media_packets"], _native.NativeTable):
        # kept native (`_native.simulate_native`): pyarrow takes a table only when it is read
        arrow = LazyTables()
        for k in Result.NAMES:  # in the order of the tables of `simulate`
            arrow.native(k, _runs_native(row) if k == "runs" else raw[k])
        return Result(arrow, sc, seed, t)
    # the core's tables arrive as Arrow record batches (C data interface: its buffers, not copies)
    core = {k: pa.Table.from_batches([pa.record_batch(raw[k])]) for k in CORE_TABLES}
    return Result({k: _runs_arrow(row) if k == "runs" else core[k] for k in Result.NAMES}, sc, seed, t)


def _runs_arrow(row: Mapping[str, Any]) -> pa.Table:
    """The run's `runs` table (one row) with pyarrow: a column a value, typed as `pa.array` infers it."""
    cols = {}
    for key, val in row.items():
        if key in ("tcp_start_ns", "tcp_end_ns"):
            cols[key] = _nullable(np.array([val], dtype=np.int64))
        elif isinstance(val, (dict, list)):
            cols[key] = _strings([json.dumps(val, sort_keys=True)])
        else:
            cols[key] = _column([val])
    return _table(cols)


def _runs_native(row: Mapping[str, Any]) -> Any:
    """`_runs_arrow`'s table built by the native module (`_native.runs_table`: bool, int64,
    float64, string and null columns, as pyarrow infers a lone value); a row with another value
    (an int beyond int64, a numpy scalar) is built by pyarrow."""
    items = [(k, json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v) for k, v in row.items()]
    try:
        return _native.runs_table(items)
    except TypeError:
        return _runs_arrow(row)


#: the tables the core hands over (`_native.simulate_tables`); `runs` is built here
CORE_TABLES = ("media_packets", "tcp_flows", "queue_samples", "channels", "flows", "tcp_series", "rtc_frames", "rtc_series")


def simulate_run(base: Mapping[str, Any], overrides: Mapping[str, Any] | None, seed: int, run_id: int,
                 params: Mapping[str, Any], cache_key: str | None = None,
                 prepared: tuple[Any, Any] | None = None) -> Result:
    """One run of a sweep: `simulate(base, seed, run_id, overrides, params)` without the cost
    check (the sweep checked every parameter point before starting) and with the base scenario
    prepared once per process (`prepare_run`), or, given `prepared`, what `prepare_run(base,
    overrides, cache_key)` returned for the sweep's estimate of this very run. Same tables as `simulate`."""
    if seed < 0 or seed >= 2**64:
        raise _native.ScenarioError(f"seed: must be between 0 and 2^64-1, got {seed}")
    sc, core = prepared if prepared is not None else prepare_run(base, overrides, cache_key)
    raw = _native.simulate_native(core, int(seed), int(run_id))
    name = None if type(core) is str else core.name_or("scenario")
    return _to_result(raw, sc, int(seed), run_id, params, name)


def write(result: Result, out: str | Path, source: str = "sim", extra: Mapping[str, Any] | None = None) -> Path:
    """Writes each table as Parquet plus manifest.json (format and schema version, source, scenario,
    seed, version, provenance (`jitterlab.provenance.collect`), `extra` fields such as the
    testbed's pcaps, and each table's rows and SHA-256).

    Each file is written under a temporary name and renamed when complete, so no file is ever
    half-written under its name, and a failure (ENOSPC) leaves the files not yet replaced as they
    were. The manifest is written last: its checksums certify the set, and a directory whose files
    do not match its manifest was interrupted while being rewritten.
    """
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _io.OutputError(f"{out}: cannot create the output directory: {e.strerror}") from None
    import pyarrow.parquet as pq

    files = {}
    for name, t in result.arrow.items():
        path = out / f"{name}.parquet"
        _io.write_atomic(path, functools.partial(pq.write_table, t))  # write_table(t, tmp)
        files[path.name] = {"rows": t.num_rows, "sha256": _io.sha256_file(path)}
    from jitterlab import provenance

    manifest = {
        "format_version": FORMAT_VERSION,
        "schema_version": provenance.SCHEMA_VERSION,
        "jitterlab_version": _native.__version__,
        "provenance": provenance.collect(result.seed, result.scenario),
        "source": source,
        "seed": result.seed,
        "scenario": result.scenario,
        "tables": sorted(files),
        "files": files,
        **(extra or {}),
    }
    _io.write_text_atomic(out / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    return out
