"""Type stubs of the native module (kept true by tests/test_stubs.py)."""

import os
from typing import Any, Callable, final

__all__ = [
    "__version__", "JitterlabError", "ScenarioError", "TableError", "CaptureError", "simulate_tables", "ArrowBatch",
    "sim_registry", "stack_profiles", "expand_scenario", "scenario_schema", "channel_opportunities", "cellular_trace", "channel_loss_periods",
    "MediaSet", "grouped_quantiles", "emodel_r", "mos_from_r", "run_share", "analyze_pair", "PcapWriter", "testbed_link",
    "testbed_set_realtime", "testbed_media_send", "testbed_media_recv", "testbed_rtc_send", "testbed_rtc_recv", "capture_check", "parse_duration_ns",
    "parse_rate_bps", "parse_size", "estimate_json", "take_strings", "ParquetConcat",
    "encode_pack", "encode_table", "merge_parts", "PartMerger", "simulate_native", "PreparedScenario", "NativeTable", "runs_table", "run_share_native",
    "mallopt", "sha256_hex", "sha256_fd",
]

__version__: str

class JitterlabError(Exception): ...
class ScenarioError(JitterlabError): ...
class TableError(JitterlabError): ...
class CaptureError(JitterlabError): ...

# --- capture (crates/py/src/capture.rs) ---------------------------------------------------

def analyze_pair(
    sender: str,
    receiver: str,
    media: str = "auto",
    clock_offset_ns: int = 0,
    t0_ns: int | None = None,
    tcp_start_ns: int | None = None,
    clock_rate: int | None = None,
    spike_ns: int = 3000000000,
    loss_run: int = 50,
    reorder_min: int = 1,
    duplicate_min: int = 1,
    progress: Callable[[str, int, int], Any] | None = None,
) -> dict[str, Any]: ...

@final
class PcapWriter:
    # a PyO3 class: constructed by __new__ (#[new]), no __init__
    def __new__(cls, path: str, snaplen: int = 65535, nanos: bool = True) -> PcapWriter: ...
    def write_rtp(
        self, ts_ns: int, src: str, dst: str, sport: int, dport: int, ssrc: int, seq: int, rtp_ts: int,
        ip_len: int, payload_type: int = 0, marker: bool = False, ecn: int = 0,
    ) -> None: ...
    def write_udp(self, ts_ns: int, src: str, dst: str, sport: int, dport: int, payload: bytes, ecn: int = 0) -> None: ...
    def write_tcp(
        self, ts_ns: int, src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int,
        payload_len: int = 0, window: int = 65535, ecn: int = 0, mss: int | None = None,
        wscale: int | None = None, sack_permitted: bool = False, timestamps: tuple[int, int] | None = None,
        sack: list[tuple[int, int]] = ...,
    ) -> None: ...
    @property
    def frames(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> PcapWriter: ...
    def __exit__(self, *args: object) -> bool: ...

# --- metrics (crates/py/src/metrics.rs) ---------------------------------------------------
import numpy as np
import numpy.typing as npt

@final
class MediaSet:
    """Prepared media_packets table: sorted by (run, flow, seq), duplicates dropped."""

    def __new__(
        cls,
        run: npt.NDArray[np.int64],
        flow: npt.NDArray[np.int64],
        seq: npt.NDArray[np.int64],
        send_ns: npt.NDArray[np.int64],
        recv_ns: npt.NDArray[np.int64],
        received: npt.NDArray[np.bool_],
        size: npt.NDArray[np.int64],
        tcp_start_ns: npt.NDArray[np.int64],
        tcp_start_valid: npt.NDArray[np.bool_],
        tcp_end_ns: npt.NDArray[np.int64],
        tcp_end_valid: npt.NDArray[np.bool_],
        unwrap16: bool = False,
    ) -> MediaSet: ...
    @staticmethod
    def from_chunks(
        run: list[int],
        flow: list[npt.NDArray[np.int64]],
        seq: list[npt.NDArray[np.int64]],
        send_ns: list[npt.NDArray[np.int64]],
        recv_ns: list[npt.NDArray[np.int64]],
        received: list[npt.NDArray[np.bool_]],
        size: list[npt.NDArray[np.int64]],
        tcp_start_ns: npt.NDArray[np.int64],
        tcp_start_valid: npt.NDArray[np.bool_],
        tcp_end_ns: npt.NDArray[np.int64],
        tcp_end_valid: npt.NDArray[np.bool_],
    ) -> MediaSet: ...
    @property
    def duplicates(self) -> int: ...
    def __len__(self) -> int: ...
    def columns(self) -> dict[str, np.ndarray]: ...
    def gather(self, name: str, rows: npt.NDArray[np.int64] | None = None) -> np.ndarray: ...
    def pooled_quantiles(
        self, metric: str, kind: str, lo: int, hi: int, run_group: npt.NDArray[np.uint32],
        n_groups: int, probs: list[float],
    ) -> dict[str, np.ndarray]: ...
    def jitter_final(self, kind: str, lo: int, hi: int) -> npt.NDArray[np.float64]: ...
    def levels_over_time_multi(
        self, kind: str, lo: int, hi: int, pre_ns: int, jbs_ns: list[int | None], interval_ns: int,
        run_group: npt.NDArray[np.uint32], n_groups: int, bin_ns: int, span_ns: int,
    ) -> dict[str, object]: ...
    def streams(self) -> dict[str, np.ndarray]: ...
    def window_mask(self, kind: str, lo: int, hi: int) -> dict[str, np.ndarray]: ...
    def owd(self, kind: str, lo: int, hi: int) -> dict[str, np.ndarray]: ...
    def ipdv(self, kind: str, lo: int, hi: int) -> dict[str, np.ndarray]: ...
    def jitter(self, kind: str, lo: int, hi: int) -> dict[str, np.ndarray]: ...
    def base_delay(self, pre_ns: int) -> dict[str, np.ndarray]: ...
    def jb_loss(self, kind: str, lo: int, hi: int, pre_ns: int, jbs_ns: list[int]) -> dict[str, np.ndarray]: ...
    def levels(self, pre_ns: int, jb_ns: int | None, interval_ns: int) -> dict[str, np.ndarray]: ...
    def periods(self, kind: str, lo: int, hi: int, pre_ns: int, jb_ns: int | None) -> dict[str, np.ndarray]: ...
    def levels_over_time(
        self, kind: str, lo: int, hi: int, pre_ns: int, jb_ns: int | None, interval_ns: int,
        run_group: npt.NDArray[np.uint32], n_groups: int, bin_ns: int, span_ns: int,
    ) -> dict[str, object]: ...
    def rtp_summary(self, kind: str, lo: int, hi: int) -> dict[str, np.ndarray]: ...
    def emodel(
        self, kind: str, lo: int, hi: int, pre_ns: int, jbs_ns: list[int], ie: float, bpl: float,
        codec_delay_ms: float, params: dict[str, float] | None = None,
    ) -> dict[str, np.ndarray]: ...

def run_share(
    flow: list[npt.NDArray[np.int64]],
    seq: list[npt.NDArray[np.int64]],
    send_ns: list[npt.NDArray[np.int64]],
    recv_ns: list[npt.NDArray[np.int64]],
    received: list[npt.NDArray[np.bool_]],
    size: list[npt.NDArray[np.int64]],
    tcp_start_ns: int | None,
    tcp_end_ns: int | None,
    kind: str,
    pre_ns: int,
    jbs_ns: list[int],
    ie: float,
    bpl: float,
    codec_delay_ms: float,
    probs: list[float] | None,
) -> dict[str, np.ndarray]: ...
def run_share_native(
    media: NativeTable,
    tcp_start_ns: int | None,
    tcp_end_ns: int | None,
    kind: str,
    pre_ns: int,
    jbs_ns: list[int],
    ie: float,
    bpl: float,
    codec_delay_ms: float,
    probs: list[float] | None,
) -> dict[str, Any]:
    """`run_share` of a run's native `media_packets`, read in place; the arrays are `array.array`s."""
    ...
def grouped_quantiles(
    values: npt.NDArray[np.float64], group: npt.NDArray[np.uint32], n_groups: int, probs: list[float]
) -> dict[str, np.ndarray]: ...
def emodel_r(
    ta_ms: npt.NDArray[np.float64], ppl: npt.NDArray[np.float64], burst_r: npt.NDArray[np.float64],
    ie: float, bpl: float, params: dict[str, float] | None = None,
) -> npt.NDArray[np.float64]: ...
def mos_from_r(r: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...

# ---- simulator (crates/py/src/sim.rs)
def simulate_tables(scenario_json: str, seed: int, run_id: int, pcap_dir: str | None = None) -> dict[str, Any]:
    """Runs a scenario (JSON text) with `seed`: each core table as an `ArrowBatch` (a `run_id`
    column first), the channel names, run totals, and the pcap files written for the nodes in
    `output.pcap` when `pcap_dir` is given."""
    ...

def simulate_native(scenario: str | PreparedScenario, seed: int, run_id: int) -> dict[str, Any]:
    """`simulate_tables` without captures, each core table a `NativeTable` (kept native until read);
    the scenario as JSON text or a `PreparedScenario`."""
    ...

@final
class PreparedScenario:
    """A scenario parsed by the core once (crates/py/src/prepared.rs): `estimate_json` and
    `simulate_native` take it in place of JSON text; a sweep's runs set their overrides into copies."""
    def __new__(cls, scenario_json: str) -> PreparedScenario: ...
    def with_overrides(self, overrides: list[tuple[tuple[str | int, ...], Any]]) -> PreparedScenario | None:
        """A copy with each (path, value) set (as `_runprep._set_fast`); None when one cannot be set natively."""
        ...
    def name_or(self, default: str) -> str | None:
        """The scenario's name (`default` without one); None for a name that is not a string."""
        ...
    def to_json(self) -> str: ...

@final
class NativeTable:
    """One table of a run (or a small Parquet file) held by the native module: `encode_pack`,
    `encode_table`, `PartMerger.add_table` and `run_share_native` read it in place; pyarrow takes it
    through `__arrow_c_stream__` (its buffers shared)."""

    @property
    def num_rows(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def column_names(self) -> list[str]: ...
    @property
    def column_kinds(self) -> list[str]: ...
    def to_pylist(self, name: str) -> list[Any]: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    @staticmethod
    def empty() -> NativeTable: ...
    @staticmethod
    def concat(tables: list[NativeTable]) -> NativeTable: ...
    @staticmethod
    def read_parquet(path: str | os.PathLike[str]) -> NativeTable: ...

def runs_table(row: list[tuple[str, Any]]) -> NativeTable:
    """A run's one-row `runs` table (bool, int64, float64, string, null columns; TypeError for
    another value)."""
    ...

@final
class ArrowBatch:
    """One table of the core for `pyarrow.record_batch(obj)` (the Arrow PyCapsule protocol): its
    buffers move to pyarrow, once. Made only by `simulate_tables`."""

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """The (schema, array) capsules of the table. ValueError when exported already or when a
        schema is requested."""
        ...

@final
class ParquetConcat:
    """One Parquet file out of the row groups of Parquet images of one schema, spliced without
    decoding (column chunks copied, offsets and footer rewritten). Python writes the bytes."""

    # a PyO3 class: constructed by __new__ (#[new]), no __init__
    def __new__(cls) -> ParquetConcat: ...
    def append(self, data: bytes) -> bytes:
        """Appends every row group of the Parquet image `data`; returns the bytes to write next.
        ValueError (nothing written) when `data` is not Parquet or its schema differs from the first image's."""
        ...
    def finish(self) -> bytes:
        """The bytes that end the file (the footer). ValueError when nothing was appended."""
        ...
    @property
    def rows(self) -> int:
        """Rows appended so far."""
        ...

# --- Parquet encoding (crates/py/src/parquet_write.rs) -----------------------------------------

def encode_pack(tables: list[tuple[str, Any]], align: int, parquet_min_rows: int) -> tuple[bytes, list[tuple[str, int, int, int]], str]:
    """A run's tables (pyarrow tables) as its pack: each a Parquet image from `parquet_min_rows`
    rows, else an Arrow IPC one, at a multiple of `align` bytes; returns the pack, each part's
    (name, offset, length, rows) and the pack's SHA-256 (hex)."""
    ...
def encode_table(table: Any, parquet_min_rows: int) -> bytes:
    """One pyarrow table as a run's part (`encode_pack`; `parquet_min_rows` 0: always Parquet)."""
    ...
def merge_parts(images: list[bytes]) -> bytes:
    """Parts (Parquet or Arrow IPC images) of one schema decoded and encoded as one Parquet image
    (rows in order). ValueError when one is neither or its Arrow schema differs from the first's."""
    ...

@final
class PartMerger:
    """Parts (Parquet or Arrow IPC images) of one schema decoded as they are added and encoded at
    the end as one Parquet image (rows in order, one row group)."""

    # a PyO3 class: constructed by __new__ (#[new]), no __init__
    def __new__(cls) -> PartMerger: ...
    def add(self, data: bytes) -> None:
        """Decodes part `data` and keeps its rows. ValueError (nothing kept) when it is neither
        Parquet nor Arrow IPC or its Arrow schema differs from the first part's."""
        ...
    def add_table(self, table: Any) -> None:
        """Keeps the rows of a pyarrow table. ValueError (nothing kept) when its schema differs from the first part's."""
        ...
    def finish(self) -> bytes:
        """The rows kept so far as one Parquet image; the merger is empty again. ValueError when nothing was added."""
        ...

def take_strings(names: list[str], idx: Any) -> tuple[Any | None, Any, Any, int]:
    """`names[idx]` as an Arrow string column's buffers (validity bitmap or None, int32 offsets,
    UTF-8 data, null count); null where idx is negative or past the names."""
    ...
def sim_registry() -> dict[str, list[str]]:
    """Queue disciplines ("queues"), congestion controls ("cc"), traffic kinds ("traffic") and TCP
    stack profiles ("stacks") the simulator knows."""
    ...
def stack_profiles() -> str:
    """The TCP stack profiles as JSON: {"default", "profiles": [{name, summary, switches, sources}]}."""
    ...
def expand_scenario(scenario_json: str) -> str:
    """The scenario (JSON, trace files inlined as {path, data}) validated and expanded by the Rust
    parser, as JSON text (shape: docs/scenarios.md, "Expanded form")."""
    ...
def scenario_schema() -> str:
    """The scenario format's JSON Schema (draft 2020-12) as JSON text, generated from the Rust
    parser: keys, types, units and choices of every table."""
    ...
def channel_opportunities(scenario_json: str, seed: int, channel: str) -> tuple[list[int], int]:
    """(ms stamps, period_ms) of the delivery opportunities channel `channel` runs on in the run
    with `seed` (a trace's, or the cellular model's for that seed and channel)."""
    ...
def channel_loss_periods(scenario_json: str, seed: int, channel: str) -> list[tuple[int, int]]:
    """Loss bursts [(start_ns, end_ns)] of channel `channel` in the run with `seed` (links with
    `loss_burst`; empty otherwise), for the run's duration plus a 10 s margin."""
    ...
def cellular_trace(model_json: str, duration: str, seed: int, channel: str) -> tuple[list[int], float]:
    """(delivery-opportunity stamps in ms, mean rate in bit/s) of the cellular model (JSON table of
    its keys) for the TTIs that start within `duration` (e.g. "60s"), from stream
    `cellular:<channel>` of `seed`."""
    ...

# ---- units, cost estimate, input checks (crates/py/src/units.rs)
def parse_duration_ns(s: str) -> int:
    """A duration string ("25ms", "-1.5ms", "1sec") in int nanoseconds; ValueError otherwise."""
    ...
def parse_rate_bps(s: str) -> int:
    """A rate string ("4Mbit", "100kbit/s") in bit/s; ValueError otherwise ("4Mbps" included)."""
    ...
def parse_size(s: str) -> tuple[int, str]:
    """A size string as (value, "B" | "pkt"); ValueError otherwise."""
    ...
def estimate_json(scenario: str | PreparedScenario) -> dict[str, float]:
    """A scenario's cost before it runs: events, table rows, memory_bytes, nodes, flows, ..."""
    ...
def capture_check(path: str, full: bool = True) -> None:
    """Raises the CaptureError reading this one capture gives, if any."""
    ...

# testbed (Linux; run inside the testbed's namespaces by jitterlab.testbed.worker)
def testbed_link(config_json: str) -> dict[str, object]: ...
def testbed_set_realtime(prio: int) -> bool: ...
def testbed_media_send(
    dst: str, dst_port: int, start_ns: int, stop_ns: int, interval_ns: int, ip_size: int, per_tick: int = 1,
    spacing_ns: int = 0, src_port: int = 0, ssrc: int = 1, payload_type: int = 0, clock_rate: int = 8000, tos: int = 0,
    fifo_prio: int = 60,
) -> dict[str, object]: ...
def testbed_media_recv(port: int, stop_ns: int, fifo_prio: int = 60, fd: int | None = None) -> dict[str, object]: ...
def testbed_rtc_send(config_json: str) -> dict[str, object]: ...
def testbed_rtc_recv(config_json: str, fd: int | None = None) -> dict[str, object]: ...

def mallopt(param: int, value: int) -> bool:
    """glibc's mallopt(param, value): True when the C library took it; False when refused or not glibc."""

def sha256_hex(data: bytes | bytearray | memoryview) -> str:
    """hashlib.sha256(data).hexdigest()."""

def sha256_fd(fd: int) -> str:
    """SHA-256 (hex) of what remains to read from open file descriptor `fd`; raises OSError."""
