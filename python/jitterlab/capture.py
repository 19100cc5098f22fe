"""Capture analysis from Python: `analyze(sender, receiver)` turns a pair of tcpdump captures (one
at the media sender, one at the receiver) into the shared tables of docs/tables.md, as a
`jitterlab.Tables` (pandas and Arrow views, as `simulate` returns); `analyze_pairs` does it for many replications at once. The work happens in Rust
(`jitterlab-capture`), streaming, with the GIL released.

Tables returned:

- ``media_packets``: run_id, flow_id, seq (extended), send_ns, recv_ns (Int64, null = lost), size
  (IP bytes), lost_where (always null for captures), ce.
- ``tcp_flows``: run_id, flow_id, role (null: a capture cannot tell), iw (observed initial flight,
  null without a SYN), cc (null), syn_ns, first_data_ns, end_ns (last data byte acknowledged, null
  if never), bytes, bytes_acked, segments_sent, retransmits, drops (null), ecn_marks, timeouts
  (null), plus last_data_ns, src, dst, sport, dport, last_ns.
- ``runs``: one row per pair: source="capture", tcp_start_ns, tcp_end_ns, t0_epoch_ns, counts,
  the anomaly flags of the PAM 2013 study, the clock-offset bound, and any extra pair columns.
- ``rtp_streams``: RFC 3550 statistics per stream and capture side (for tshark comparisons).
- ``media_flows``: flow_id -> SSRC / addresses / ports.
- ``warnings``: run_id, side, message (damaged input, with byte offsets).

Times are int64 ns from the run start = the first packet of the sender capture (absolute time in
``runs.t0_epoch_ns``).
"""
from __future__ import annotations

import csv
import io
import functools
import json
import os
import stat
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from jitterlab import _io, _native
from jitterlab.tables import Tables, to_arrow

NULL_NS = np.iinfo(np.int64).min
FORMAT_VERSION = 1
TABLES = ("media_packets", "tcp_flows", "runs", "rtp_streams", "media_flows", "warnings")

I64_MAX = 2**63 - 1


def duration_ns(v: int | float | str | None, name: str = "duration") -> int | None:
    """An int is ns; a string carries a unit, read by the scenario's parser
    (`jitterlab._native.parse_duration_ns`): ``"5ms"``, ``"-2.5 ms"``, ``"3s"``, ``"1sec"``. A string
    without a unit is refused (is "5" seconds or nanoseconds?).

    >>> duration_ns("-2.5ms"), duration_ns(42), duration_ns("3s"), duration_ns("1sec")
    (-2500000, 42, 3000000000, 1000000000)
    """
    if v is None:
        return None
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        if not -I64_MAX <= int(v) <= I64_MAX:
            raise _native.CaptureError(f"{name}: {v} ns is out of range (int64 nanoseconds)")
        return int(v)
    if isinstance(v, float):
        raise _native.CaptureError(f"{name}: give a unit (e.g. '{v}s') or an integer number of ns")
    try:
        return int(_native.parse_duration_ns(str(v)))
    except ValueError as e:
        msg = str(e)
        if "needs a unit" in msg:
            msg = f"{str(v).strip()!r} has no unit; write e.g. {str(v).strip()}s or {str(v).strip()}ms"
        raise _native.CaptureError(f"{name}: {msg}") from None


def _whole(v: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise _native.CaptureError(f"{name}: expected a whole number, got {v!r}")
    if not lo <= int(v) <= hi:
        raise _native.CaptureError(f"{name}: must be between {lo} and {hi}, got {v}")
    return int(v)


def _capture_file(p: str | Path, side: str) -> str:
    """A capture must be a regular file (a FIFO or device would block or never end)."""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such capture file: {p} ({side})") from None
    except OSError as e:
        raise _native.CaptureError(f"{side} capture {p}: cannot read: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise _native.CaptureError(f"{side} capture {p}: not a regular file (a directory, FIFO or device)")
    return str(p)


def _which_side(e: Exception, sender: str, receiver: str) -> Exception:
    """Pins a CaptureError of the pair on the file it comes from, by reading each alone."""
    msg = str(e)
    if sender in msg or receiver in msg:
        return e
    if "in the sender capture" in msg:  # no media stream: the sender's, whatever the receiver holds
        return _native.CaptureError(f"sender capture {sender}: {msg}")
    for side, path in (("sender", sender), ("receiver", receiver)):
        try:
            _native.capture_check(path, full=True)
        except _native.CaptureError as one:
            return _native.CaptureError(f"{side} capture {path}: {one}")
    return e


def _nullable(values: Iterable[Any]) -> pd.arrays.IntegerArray:
    return pd.array([None if v is None else int(v) for v in values], dtype="Int64")


def _null_strings(n: int) -> pd.api.extensions.ExtensionArray:
    """n nulls of the "string" dtype: the same array as ``pd.array([None] * n, dtype="string")``,
    which converts n Python objects one by one (0.1 s for a million rows); repeating one null is
    100x faster."""
    return pd.array([None], dtype="string").take(np.zeros(n, dtype=np.intp))


def _nullable_ns(a: np.ndarray) -> pd.arrays.IntegerArray:
    a = np.asarray(a, dtype=np.int64)
    return pd.arrays.IntegerArray(a, a == NULL_NS)


def analyze(
    sender: str | Path,
    receiver: str | Path,
    media: str = "auto",
    clock_offset: int | str = 0,
    *,
    t0_ns: int | None = None,
    tcp_start: int | str | None = None,
    clock_rate: int | None = None,
    spike: int | str = "3s",
    loss_run: int = 50,
    reorder_min: int = 1,
    duplicate_min: int = 1,
    run_id: int = 0,
    params: Mapping[str, Any] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    accept_truncated: bool = False,
) -> Tables:
    """Analyses one capture pair into the shared tables.

    Parameters
    ----------
    sender, receiver : str or Path
        Captures at the media sender and at the receiver (pcap or pcapng, may be gzipped).
    media : str
        ``auto`` (every RTP stream found), ``udp:PORT`` or ``rtp:SSRC``.
    clock_offset : int or str
        Receiver clock minus sender clock, subtracted from receiver times (int ns or ``"3ms"``).
    t0_ns : int, optional
        Absolute run start (ns since the epoch); default the first sender packet.
    tcp_start : int or str, optional
        Arrival of the competing traffic after the run start; default the first SYN.
    clock_rate : int, optional
        RTP clock rate (Hz) for a dynamic payload type.
    spike, loss_run, reorder_min, duplicate_min
        Anomaly thresholds (docs/capture.md).
    run_id : int
        Value of the ``run_id`` column.
    params : mapping, optional
        Extra columns of ``runs``.
    progress : callable, optional
        ``progress(phase, bytes_done, bytes_total)``, called every 32 MiB.
    accept_truncated : bool
        Analyse the records before a truncated or corrupt part of a capture (a capture cut while
        written, a full disk) instead of refusing it; the damage stays a warning.

    Returns
    -------
    Tables
        media_packets, tcp_flows, runs, rtp_streams, media_flows, warnings (docs/tables.md),
        ``source = "capture"``.

    Raises
    ------
    jitterlab.CaptureError
        An unreadable capture; the message names the byte offset.
    """
    sender, receiver = _capture_file(sender, "sender"), _capture_file(receiver, "receiver")
    kw: dict[str, Any] = dict(
        media=str(media),
        clock_offset_ns=duration_ns(clock_offset, "clock_offset"),
        t0_ns=None if t0_ns is None else _whole(t0_ns, "t0_ns", 0, I64_MAX),
        tcp_start_ns=duration_ns(tcp_start, "tcp_start"),
        clock_rate=None if clock_rate is None else _whole(clock_rate, "clock_rate", 1, 2**32 - 1),
        spike_ns=duration_ns(spike, "spike"),
        loss_run=_whole(loss_run, "loss_run", 1, I64_MAX),
        reorder_min=_whole(reorder_min, "reorder_min", 1, I64_MAX),
        duplicate_min=_whole(duplicate_min, "duplicate_min", 1, I64_MAX),
    )
    if kw["tcp_start_ns"] is not None and kw["tcp_start_ns"] < 0:
        raise _native.CaptureError(f"tcp_start: must be >= 0 (after the run start), got {tcp_start!r}")
    if kw["spike_ns"] is not None and kw["spike_ns"] <= 0:
        raise _native.CaptureError(f"spike: must be > 0, got {spike!r}")
    try:
        raw = _native.analyze_pair(sender, receiver, progress=progress, **kw)
    except _native.CaptureError as e:
        raise _which_side(e, sender, receiver) from None
    damage = raw["warnings"].get("damage", {})
    for side, path in (("sender", sender), ("receiver", receiver)):
        if damage.get(side) and not accept_truncated:
            # a cut capture would pass for a run whose media stopped early
            raise _native.CaptureError(f"{side} capture {path}: {damage[side]}; reading stopped there "
                                       "(accept_truncated=True / --accept-truncated analyses the records before it)")
    return Tables.from_pandas(_tables(raw, run_id, sender, receiver, params or {}), "capture")


def _tables(raw: dict, run_id: int, sender: str, receiver: str, params: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    m = raw["media_packets"]
    n = len(m["seq"])
    media = pd.DataFrame(
        {
            "run_id": np.full(n, run_id, dtype=np.int64),
            "flow_id": np.asarray(m["flow_id"], dtype=np.int64),
            "seq": np.asarray(m["seq"], dtype=np.int64),
            "send_ns": np.asarray(m["send_ns"], dtype=np.int64),
            "recv_ns": _nullable_ns(m["recv_ns"]),
            "size": np.asarray(m["size"], dtype=np.int64),
            "lost_where": _null_strings(n),
            "ce": np.asarray(m["ce"], dtype=bool),
        }
    )
    f = raw["tcp_flows"]
    k = len(f["flow_id"])
    tcp = pd.DataFrame(
        {
            "run_id": np.full(k, run_id, dtype=np.int64),
            "flow_id": np.asarray(f["flow_id"], dtype=np.int64),
            "role": pd.array([None] * k, dtype="string"),
            "iw": _nullable(f["iw"]),
            "cc": pd.array([None] * k, dtype="string"),
            "syn_ns": _nullable(f["syn_ns"]),
            "first_data_ns": _nullable(f["first_data_ns"]),
            "end_ns": _nullable(f["end_ns"]),
            "bytes": np.asarray(f["bytes"], dtype=np.int64),
            "bytes_acked": np.asarray(f["bytes_acked"], dtype=np.int64),
            "size": pd.array([None] * k, dtype="Int64"),
            "segments_sent": np.asarray(f["segments_sent"], dtype=np.int64),
            "retransmits": np.asarray(f["retransmits"], dtype=np.int64),
            "drops": pd.array([None] * k, dtype="Int64"),
            "ecn_marks": np.asarray(f["ecn_marks"], dtype=np.int64),
            "timeouts": pd.array([None] * k, dtype="Int64"),
            "last_data_ns": _nullable(f["last_data_ns"]),
            "src": pd.array(f["src"], dtype="string"),
            "dst": pd.array(f["dst"], dtype="string"),
            "sport": np.asarray(f["sport"], dtype=np.int64),
            "dport": np.asarray(f["dport"], dtype=np.int64),
            "last_ns": np.asarray(f["last_ns"], dtype=np.int64),
        }
    )
    r = raw["run"]
    row: dict[str, Any] = {
        "run_id": run_id,
        "scenario": params.get("scenario", "capture"),
        "seed": None,
        "source": "capture",
        "sender": sender,
        "receiver": receiver,
        **r,
        "jitterlab_version": _native.__version__,
    }
    for key, val in params.items():
        row.setdefault(key, val)
    runs = pd.DataFrame([row])
    for c in ("tcp_start_ns", "tcp_end_ns", "min_owd_ns", "max_owd_ns", "clock_offset_bound_ns", "seed"):
        runs[c] = _nullable([row[c]])
    streams = pd.DataFrame(raw["rtp_streams"])
    flows = pd.DataFrame(raw["media_flows"])
    for df in (streams, flows):
        df.insert(0, "run_id", np.full(len(df), run_id, dtype=np.int64))
    warns = [(side, msg) for side in ("sender", "receiver", "notes") for msg in raw["warnings"][side]]
    warnings = pd.DataFrame(
        {
            "run_id": np.full(len(warns), run_id, dtype=np.int64),
            "side": pd.array([w[0] for w in warns], dtype="string"),
            "message": pd.array([w[1] for w in warns], dtype="string"),
        }
    )
    return {"media_packets": media, "tcp_flows": tcp, "runs": runs, "rtp_streams": streams, "media_flows": flows, "warnings": warnings}


def read_pairs(path: str | Path) -> pd.DataFrame:
    """Reads PAIRS.csv: columns `sender`, `receiver` (paths relative to the CSV's folder), optional
    `run_id` (whole numbers, unique), `media`, `clock_offset`, `tcp_start`; any other column is a
    parameter copied into `runs` (e.g. workload, n, iw). Every defect (binary content, a quote left
    open, a row with too many or too few fields, a bad or repeated run_id) is one CaptureError
    naming the file and line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such pairs file: {path}")
    try:
        data = _io.read_bytes(path, "pairs file", _io.MAX_PAIRS_BYTES)
    except _io.InputError as e:
        raise _native.CaptureError(str(e)) from None
    if b"\0" in data:
        off = data.index(b"\0")
        line = data.count(b"\n", 0, off) + 1
        raise _native.CaptureError(f"{path}: binary content (a NUL byte at byte offset {off}, line {line}); expected CSV text")
    try:
        text = _io.decode_utf8(data, str(path), "pairs file")
    except _io.InputError as e:
        raise _native.CaptureError(str(e)) from None
    rows: list[list[str]] = []
    lines: list[int] = []
    r = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for row in r:
            if row and any(c.strip() for c in row):
                rows.append([c.strip() for c in row])
                lines.append(r.line_num)
    except csv.Error as e:
        raise _native.CaptureError(f"{path}: line {r.line_num}: {e}") from None
    if not rows:
        raise _native.CaptureError(f"{path}: empty (need a header with sender, receiver)")
    header = rows[0]
    missing = {"sender", "receiver"} - set(header)
    if missing:
        raise _native.CaptureError(f"{path}: missing column(s) {', '.join(sorted(missing))} (need sender, receiver)")
    dup = [c for c in header if header.count(c) > 1]
    if dup:
        raise _native.CaptureError(f"{path}: line {lines[0]}: column {dup[0]!r} appears twice")
    for row, ln in zip(rows[1:], lines[1:]):
        if len(row) != len(header):
            raise _native.CaptureError(f"{path}: line {ln}: {len(row)} fields, the header has {len(header)}")
        rec = dict(zip(header, row))
        for c in ("sender", "receiver"):
            if not rec[c]:
                raise _native.CaptureError(f"{path}: line {ln}: empty {c}")
    df = pd.DataFrame(rows[1:], columns=header, dtype=object).astype(str)
    df.attrs["lines"] = lines[1:]
    df.attrs["file"] = str(path)
    _check_run_ids(df)
    for c in ("sender", "receiver"):
        df[c] = [str(p) if Path(p).is_absolute() else str(path.parent / p) for p in df[c]]
    return df


def _check_run_ids(df: pd.DataFrame) -> None:
    """run_id values, where given, are whole numbers in int64 and unique (a repeated run_id would
    merge two replications' packets into one run)."""
    if "run_id" not in df.columns:
        return
    where = df.attrs.get("file", "pairs")
    lines = df.attrs.get("lines") or [i + 2 for i in range(len(df))]
    seen: dict[int, int] = {}
    for i, v in enumerate(df["run_id"].tolist()):
        sv = str(v).strip()
        if sv == "":
            continue
        try:
            n = int(sv, 10)
        except ValueError:
            raise _native.CaptureError(f"{where}: line {lines[i]}: run_id {sv!r} is not a whole number") from None
        if not 0 <= n <= I64_MAX:
            raise _native.CaptureError(f"{where}: line {lines[i]}: run_id {sv} is out of range (0 to 2^63-1)")
        if n in seen:
            raise _native.CaptureError(f"{where}: line {lines[i]}: run_id {n} repeats line {seen[n]}")
        seen[n] = lines[i]


def analyze_pairs(
    pairs: str | Path | pd.DataFrame,
    exclude_anomalous: bool = False,
    progress: Callable[[int, int, str, int, int], None] | None = None,
    **options: Any,
) -> Tables:
    """Analyses many replications (one row per pair) into one dataset with run_id per pair.

    Parameters
    ----------
    pairs : str, Path or DataFrame
        PAIRS.csv (see `read_pairs`) or the table itself.
    exclude_anomalous : bool
        Pairs flagged anomalous keep their ``runs`` row (``excluded`` True) but their packets
        and flows are left out of the other tables, as the PAM 2013 study filtered its
        replications.
    progress : callable, optional
        ``progress(i, n, phase, done, total)`` per pair.
    **options
        `analyze`'s keyword arguments for every pair (a pair's own columns win).

    Returns
    -------
    Tables
        The tables of all pairs concatenated, ``source = "capture"``.
    """
    df = read_pairs(pairs) if not isinstance(pairs, pd.DataFrame) else pairs
    if len(df) == 0:
        raise _native.CaptureError("the pairs table is empty")
    _check_run_ids(df)
    lines = df.attrs.get("lines") or [i + 2 for i in range(len(df))]
    used_ids = {int(str(v)) for v in df["run_id"].tolist() if str(v).strip() != ""} if "run_id" in df.columns else set()
    per_pair = {"media", "clock_offset", "tcp_start", "run_id", "sender", "receiver"}
    parts: dict[str, list[pd.DataFrame]] = {t: [] for t in TABLES}
    for i, rec in enumerate(df.to_dict("records")):
        run_id = int(str(rec["run_id"])) if str(rec.get("run_id", "")).strip() != "" else i
        if str(rec.get("run_id", "")).strip() == "" and i in used_ids:
            raise _native.CaptureError(f"{df.attrs.get('file', 'pairs')}: line {lines[i]}: no run_id, and its default ({i}, the row index) is another row's run_id")
        opts = dict(options)
        for key in ("media", "clock_offset", "tcp_start"):
            if str(rec.get(key, "")).strip() != "":
                opts[key] = rec[key]
        params = {k: v for k, v in rec.items() if k not in per_pair}
        cb = None
        if progress is not None:
            cb = lambda phase, done, total, i=i: progress(i, len(df), phase, done, total)  # noqa: E731
        try:
            t = analyze(rec["sender"], rec["receiver"], run_id=run_id, params=params, progress=cb, **opts)
        except (_native.CaptureError, FileNotFoundError) as e:
            where = f"{df.attrs['file']} line {lines[i]}" if "file" in df.attrs else f"pair {i}"
            raise type(e)(f"{where} (run_id {run_id}): {e}") from None
        for name in TABLES:
            parts[name].append(t[name])
    out = {name: pd.concat(parts[name], ignore_index=True) if parts[name] else pd.DataFrame() for name in TABLES}
    runs = out["runs"]
    runs["excluded"] = runs["anomalous"].astype(bool) if exclude_anomalous else False
    if exclude_anomalous:
        bad = set(runs.loc[runs["excluded"], "run_id"].tolist())
        for name in ("media_packets", "tcp_flows", "rtp_streams", "media_flows"):
            d = out[name]
            if len(d):
                out[name] = d[~d["run_id"].isin(bad)].reset_index(drop=True)
    return Tables.from_pandas(out, "capture")


def write(tables: Mapping[str, pd.DataFrame], out: str | Path, options: Mapping[str, Any] | None = None) -> Path:
    """Writes each table as Parquet plus manifest.json (format version, inputs, run starts, each
    table's rows and SHA-256). Files appear under their names only when complete; the manifest,
    written last, certifies the set (see sim.write)."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _io.OutputError(f"{out}: cannot create the output directory: {e.strerror}") from None
    files = {}
    import pyarrow.parquet as pq

    for name, df in tables.items():
        path = out / f"{name}.parquet"
        # one Arrow schema for every source (text as string, not large_string): docs/tables.md
        t = tables.arrow[name] if isinstance(tables, Tables) else to_arrow(df)
        _io.write_atomic(path, functools.partial(pq.write_table, t))  # write_table(t, tmp)
        files[path.name] = {"rows": int(len(df)), "sha256": _io.sha256_file(path)}
    from jitterlab import provenance

    runs = tables["runs"]
    manifest = {
        "format_version": FORMAT_VERSION,
        "schema_version": provenance.SCHEMA_VERSION,
        "jitterlab_version": _native.__version__,
        "provenance": provenance.collect(None, None),
        "source": "capture",
        "options": {k: (v if isinstance(v, (int, float, str, bool, type(None))) else str(v)) for k, v in (options or {}).items()},
        "runs": [
            {"run_id": int(r["run_id"]), "sender": r["sender"], "receiver": r["receiver"], "t0_epoch_ns": int(r["t0_epoch_ns"]),
             "anomalous": bool(r["anomalous"]), "excluded": bool(r.get("excluded", False))}
            for r in runs.to_dict("records")
        ],
        "tables": sorted(files),
        "files": files,
    }
    _io.write_text_atomic(out / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return out


def media_to_pcap(
    media_packets: pd.DataFrame,
    sender_path: str | Path,
    receiver_path: str | Path,
    *,
    t0_epoch_ns: int = 1_700_000_000_000_000_000,
    src: str = "10.0.0.1",
    dst: str = "10.0.1.1",
    base_port: int = 5004,
    ssrc_base: int = 0x4A4C0000,
    ticks_per_packet: int = 160,
    payload_type: int = 0,
    receiver_clock_offset_ns: int = 0,
) -> None:
    """Writes a media_packets table (e.g. the simulator's) as an RTP capture pair: each row at
    `send_ns` in the sender capture and, if received, at `recv_ns` in the receiver capture (with
    CE when `ce`). Flow f becomes SSRC `ssrc_base + f` on port `base_port + 2f`; sequence numbers
    are folded to 16 bits and RTP timestamps advance `ticks_per_packet` per sequence number. This
    is the media half of the simulator's pcap tap, and what the round-trip test uses."""
    df = media_packets.sort_values("send_ns", kind="stable")
    recv = df["recv_ns"].astype("Int64")
    rows = list(zip(df["flow_id"].astype(int), df["seq"].astype(int), df["send_ns"].astype(int), recv, df["size"].astype(int), df["ce"].astype(bool)))
    arrivals: list[tuple[int, int, tuple[Any, ...], bool]] = []
    with _native.PcapWriter(str(sender_path)) as w:
        for flow, seq, send, rv, size, ce in rows:
            args = (src, dst, base_port + 2 * flow, base_port + 2 * flow, ssrc_base + flow, seq & 0xFFFF, (seq * ticks_per_packet) & 0xFFFFFFFF, size)
            w.write_rtp(t0_epoch_ns + send, *args, payload_type=payload_type)
            if rv is not pd.NA:
                arrivals.append((int(rv), len(arrivals), args, ce))
    arrivals.sort()
    with _native.PcapWriter(str(receiver_path)) as w:
        for rv, _, args, ce in arrivals:
            w.write_rtp(t0_epoch_ns + rv + receiver_clock_offset_ns, *args, payload_type=payload_type, ecn=3 if ce else 0)
