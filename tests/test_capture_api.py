"""Capture analysis from Python and the CLI: round trip of a media_packets table through pcap,
TCP flows, many pairs with --exclude-anomalous, damaged input, formats (gzip, pcapng)."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jitterlab
from jitterlab import _native
from jitterlab.capture import analyze, analyze_pairs, duration_ns, media_to_pcap

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "jitterlab"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=ROOT, env={**os.environ})


def sim_like_media(n: int = 400, lost=(50, 51, 52, 300), flows: int = 1) -> pd.DataFrame:
    """A media_packets table as the simulator writes it: 20 ms audio from t = 1 s, OWD 20-29 ms,
    some packets lost, some CE-marked, sequence numbers past the 16-bit wrap for flow 1."""
    rows = []
    for f in range(flows):
        for i in range(n):
            send = 1_000 * MS + i * 20 * MS + f * 3 * MS
            recv = None if i in lost else send + 20 * MS + (i * 7919 % 10) * MS
            rows.append((0, f, i + (65_500 if f == 1 else 0), send, recv, 80, None, i % 97 == 3 and recv is not None))
    df = pd.DataFrame(rows, columns=["run_id", "flow_id", "seq", "send_ns", "recv_ns", "size", "lost_where", "ce"])
    df["recv_ns"] = df["recv_ns"].astype("Int64")
    df["lost_where"] = df["lost_where"].astype("string")
    return df


def test_media_round_trip_is_exact(tmp_path):
    sim = sim_like_media(flows=2)
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    media_to_pcap(sim, s, r, t0_epoch_ns=T0)
    # Run start = the simulator's time 0, as the tap will write it.
    t = analyze(s, r, t0_ns=T0)
    got = t["media_packets"].sort_values(["flow_id", "seq"]).reset_index(drop=True)
    want = sim.sort_values(["flow_id", "seq"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got[want.columns], want, check_dtype=True)
    run = t["runs"].iloc[0]
    assert (run.media_sent, run.media_lost, run.max_loss_run) == (800, 8, 3)
    assert run.source == "capture" and not run.anomalous


def test_default_run_start_and_clock_offset(tmp_path):
    sim = sim_like_media()
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    media_to_pcap(sim, s, r, t0_epoch_ns=T0, receiver_clock_offset_ns=-7 * MS)
    t = analyze(s, r)
    m, run = t["media_packets"], t["runs"].iloc[0]
    # Default run start: the first sender packet (1 s after the simulator's 0).
    assert run.t0_epoch_ns == T0 + 1_000 * MS and m.send_ns.iloc[0] == 0
    owd = (m.recv_ns - m.send_ns).dropna()
    assert owd.min() == 20 * MS - 7 * MS
    assert run.clock_offset_bound_ns == 13 * MS
    t2 = analyze(s, r, clock_offset="-7ms")
    owd2 = (t2["media_packets"].recv_ns - t2["media_packets"].send_ns).dropna()
    assert owd2.min() == 20 * MS and owd2.max() == 29 * MS
    # Over-correcting makes OWDs negative: a warning, not an error.
    t3 = analyze(s, r, clock_offset="20ms")
    assert any("negative one-way delays" in w for w in t3["warnings"].message)


def write_tcp_transfer(w, t0: int, sport: int, segs: int, mss: int = 1448, retransmit: int | None = None, finish: bool = True) -> None:
    """Client SYN at t0; server sends `segs` segments 1 ms apart after the handshake; the client
    ACKs everything 50 ms after the last one."""
    srv, cli_ = "10.0.0.1", "10.0.1.1"
    isn_c, isn_s = 1000, 4_294_900_000  # the server's numbers wrap during the transfer
    w.write_tcp(t0, cli_, srv, sport, 80, isn_c, 0, 0x02, mss=1460, wscale=7, sack_permitted=True)
    w.write_tcp(t0 + 40 * MS, srv, cli_, 80, sport, isn_s, isn_c + 1, 0x12, mss=1460, wscale=7, sack_permitted=True)
    w.write_tcp(t0 + 80 * MS, cli_, srv, sport, 80, isn_c + 1, (isn_s + 1) % 2**32, 0x10)
    t = t0 + 81 * MS
    for k in range(segs):
        w.write_tcp(t + k * MS, srv, cli_, 80, sport, (isn_s + 1 + k * mss) % 2**32, isn_c + 1, 0x10, payload_len=mss, timestamps=(k, 0))
    if retransmit is not None:
        w.write_tcp(t + segs * MS, srv, cli_, 80, sport, (isn_s + 1 + retransmit * mss) % 2**32, isn_c + 1, 0x10, payload_len=mss)
    if finish:
        w.write_tcp(t + segs * MS + 50 * MS, cli_, srv, sport, 80, isn_c + 1, (isn_s + 1 + segs * mss) % 2**32, 0x10, sack=[])


def test_tcp_flows_table(tmp_path):
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    with _native.PcapWriter(str(s)) as w:
        for i in range(20):
            w.write_rtp(T0 + i * 20 * MS, "10.0.0.1", "10.0.1.1", 5004, 5004, 9, i, i * 160, 80)
        write_tcp_transfer(w, T0 + 100 * MS, 40001, segs=10, retransmit=3)
        write_tcp_transfer(w, T0 + 100 * MS, 40002, segs=5, finish=False)
    with _native.PcapWriter(str(r)) as w:
        for i in range(20):
            w.write_rtp(T0 + i * 20 * MS + 30 * MS, "10.0.0.1", "10.0.1.1", 5004, 5004, 9, i, i * 160, 80)
    t = analyze(s, r)
    f = t["tcp_flows"].set_index("sport")
    a, b = f.loc[80].iloc[0], f.loc[80].iloc[1]
    assert list(f.flow_id) == [1, 2]  # media first, then TCP in order of appearance
    assert (a.syn_ns, a.first_data_ns, a.bytes, a.segments_sent, a.retransmits, a.iw) == (100 * MS, 181 * MS, 14480, 11, 1, 10)
    assert a.end_ns == 181 * MS + 10 * MS + 50 * MS
    assert (a.last_data_ns, a.bytes_acked, b.last_data_ns, b.bytes_acked) == (191 * MS, 14480, 185 * MS, 0)
    # unfinished, nothing acknowledged: nothing known delivered though 5 segments went out
    assert (b.bytes, b.segments_sent, b.retransmits) == (0, 5, 0)
    assert b.end_ns is pd.NA and b.drops is pd.NA and b.role is pd.NA
    run = t["runs"].iloc[0]
    assert run.tcp_start_ns == 100 * MS
    # The unfinished flow ends at its last segment (185 ms) before the first flow's final ACK.
    assert run.tcp_end_ns == 241 * MS
    assert analyze(s, r, tcp_start="150ms")["runs"].tcp_start_ns.iloc[0] == 150 * MS


def make_pair(d: Path, name: str, lost=(), dup: int | None = None, spike: int | None = None) -> tuple[str, str]:
    sim = sim_like_media(n=200, lost=lost)
    if spike is not None:
        sim.loc[spike, "recv_ns"] = sim.loc[spike, "send_ns"] + 3_500 * MS
    s, r = d / f"{name}-s.pcap", d / f"{name}-r.pcap"
    media_to_pcap(sim, s, r, t0_epoch_ns=T0)
    if dup is not None:
        # Append a second copy of one packet to the receiver capture.
        with _native.PcapWriter(str(d / "tmp.pcap")) as w:
            row = sim.loc[dup]
            w.write_rtp(T0 + int(row.recv_ns) + 100 * MS, "10.0.0.1", "10.0.1.1", 5004, 5004, 0x4A4C0000, dup, dup * 160, 80)
        r.write_bytes(r.read_bytes() + (d / "tmp.pcap").read_bytes()[24:])
    return s.name, r.name


def test_pairs_and_exclude_anomalous(tmp_path):
    rows = [
        ("clean", *make_pair(tmp_path, "clean"), "bulk"),
        ("spike", *make_pair(tmp_path, "spike", spike=100), "bulk"),
        ("lossy", *make_pair(tmp_path, "lossy", lost=range(20, 80)), "web"),
        ("dup", *make_pair(tmp_path, "dup", dup=10), "web"),
    ]
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame([r[1:] for r in rows], columns=["sender", "receiver", "workload"]).to_csv(pairs, index=False)
    t = analyze_pairs(pairs, exclude_anomalous=True)
    runs = t["runs"].set_index("run_id")
    assert list(runs.workload) == ["bulk", "bulk", "web", "web"]
    assert list(runs.flag_delay_spike) == [False, True, False, False]
    assert list(runs.flag_loss_run) == [False, False, True, False]
    assert list(runs.flag_duplication) == [False, False, False, True]
    # The late packet 100 is also overtaken by 101..: reordering is flagged with the spike.
    assert list(runs.flag_reordering) == [False, True, False, False]
    assert list(runs.excluded) == [False, True, True, True]
    assert set(t["media_packets"].run_id) == {0}
    everything = analyze_pairs(pairs)
    assert set(everything["media_packets"].run_id) == {0, 1, 2, 3} and not everything["runs"].excluded.any()

    out = tmp_path / "out"
    p = cli("analyze", "--pairs", str(pairs), "--exclude-anomalous", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert "4 runs, 3 anomalous, 3 excluded" in p.stdout
    m = pd.read_parquet(out / "media_packets.parquet")
    assert str(m.recv_ns.dtype) == "Int64" and set(m.run_id) == {0}
    man = json.loads((out / "manifest.json").read_text())
    assert man["source"] == "capture" and [r["excluded"] for r in man["runs"]] == [False, True, True, True]


def test_gzip_and_pcapng_inputs_give_the_same_tables(tmp_path):
    sim = sim_like_media(n=100)
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    media_to_pcap(sim, s, r, t0_epoch_ns=T0)
    base = analyze(s, r)["media_packets"]
    sg = tmp_path / "s.pcap.gz"
    sg.write_bytes(gzip.compress(s.read_bytes()))
    pd.testing.assert_frame_equal(analyze(sg, r)["media_packets"], base)
    if shutil.which("editcap") is None:
        pytest.skip("editcap not installed (Debian: wireshark-common); pcapng checked in the Rust tests")
    rn = tmp_path / "r.pcapng"
    subprocess.run(["editcap", "-F", "pcapng", str(r), str(rn)], check=True)
    pd.testing.assert_frame_equal(analyze(s, rn)["media_packets"], base)


def test_damaged_inputs(tmp_path):
    sim = sim_like_media(n=100)
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    media_to_pcap(sim, s, r, t0_epoch_ns=T0)
    # Truncated receiver capture: refused with the byte offset (it would pass for a run whose
    # media stopped early); accepted on request: rows before the cut kept, the offset a warning.
    data = r.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) // 2 + 5])
    with pytest.raises(jitterlab.CaptureError, match="receiver capture .*truncated at byte .*accept_truncated"):
        analyze(s, cut)
    t = analyze(s, cut, accept_truncated=True)
    w = t["warnings"]
    assert (w.side == "receiver").sum() == 1 and "truncated at byte" in w.message.iloc[0]
    assert 40 < t["runs"].media_received.iloc[0] < 96
    # Bad magic / random bytes / empty file: a CaptureError naming byte 0, one line from the CLI.
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(jitterlab.CaptureError, match="byte 0"):
        analyze(junk, r)
    p = cli("analyze", "--sender", str(junk), "--receiver", str(r))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "byte 0" in p.stderr and "Traceback" not in p.stderr
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    assert cli("analyze", "--sender", str(empty), "--receiver", str(r)).returncode == 2
    # Bad selectors and durations are user errors too.
    for args in (["--media", "rtp:zz"], ["--media", "udp:99999"], ["--clock-offset", "3 parsecs"]):
        p = cli("analyze", "--sender", str(s), "--receiver", str(r), *args)
        assert p.returncode == 2 and "Traceback" not in p.stderr, (args, p.stderr)
    p = cli("analyze", "--sender", str(s))
    assert p.returncode == 2 and "--receiver" in p.stderr


def test_no_rtp_needs_a_selector(tmp_path):
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    for path in (s, r):
        with _native.PcapWriter(str(path)) as w:
            for i in range(30):
                w.write_udp(T0 + i * 20 * MS + (5 * MS if path == r else 0), "10.0.0.1", "10.0.1.1", 4000, 4001, i.to_bytes(4, "big") * 10)
    with pytest.raises(jitterlab.CaptureError, match="udp:PORT"):
        analyze(s, r)
    t = analyze(s, r, media="udp:4001")
    m = t["media_packets"]
    assert len(m) == 30 and (m.recv_ns - m.send_ns).eq(5 * MS).all() and list(m["size"].unique()) == [68]


def test_progress_callback_and_durations(tmp_path):
    sim = sim_like_media(n=50)
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    media_to_pcap(sim, s, r)
    calls = []
    analyze(s, r, progress=lambda ph, done, total: calls.append((ph, done, total)))
    phases = [c[0] for c in calls]
    assert {"detect", "sender", "receiver"} <= set(phases)
    assert calls[-1][1] == calls[-1][2] == r.stat().st_size
    assert duration_ns("1.5ms") == 1_500_000 and duration_ns("-3s") == -3_000_000_000
    with pytest.raises(jitterlab.CaptureError):
        duration_ns(0.5)


def test_exports_and_stub():
    assert jitterlab.analyze is analyze and jitterlab.analyze_pairs is analyze_pairs
    stub = (ROOT / "python/jitterlab/_native.pyi").read_text()
    for name in ("def analyze_pair", "class PcapWriter", "def write_rtp", "def write_tcp", "def write_udp"):
        assert name in stub
    assert hasattr(_native, "analyze_pair") and hasattr(_native.PcapWriter, "write_tcp")
    assert np.iinfo(np.int64).min == jitterlab.capture.NULL_NS


def test_capture_docstrings():
    import doctest

    import jitterlab.capture

    res = doctest.testmod(jitterlab.capture, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_capture_tables_feed_the_metrics(tmp_path):
    """The narrow waist: capture output goes straight into jitterlab.metrics."""
    metrics = pytest.importorskip("jitterlab.metrics")
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    with _native.PcapWriter(str(s)) as ws, _native.PcapWriter(str(r)) as wr:
        for i in range(1000):
            ts = T0 + i * 20 * MS
            args = ("10.0.0.1", "10.0.1.1", 5004, 5004, 5, i, i * 160, 80)
            ws.write_rtp(ts, *args)
            if i % 50 != 7:
                wr.write_rtp(ts + 20 * MS, *args)
            if i == 500:  # a transfer from 10 s (SYN) to 15 s (final ACK)
                ws.write_tcp(ts, "10.0.1.1", "10.0.0.1", 40000, 80, 0, 0, 0x02)
                ws.write_tcp(ts + 40 * MS, "10.0.0.1", "10.0.1.1", 80, 40000, 0, 1, 0x12)
                ws.write_tcp(ts + 81 * MS, "10.0.0.1", "10.0.1.1", 80, 40000, 1, 1, 0x10, payload_len=1000)
            if i == 750:
                ws.write_tcp(ts, "10.0.1.1", "10.0.0.1", 40000, 80, 1, 1001, 0x10)
    t = analyze(s, r)
    assert (t["runs"].tcp_start_ns.iloc[0], t["runs"].tcp_end_ns.iloc[0]) == (10_000 * MS, 15_000 * MS)
    jb = metrics.jb_loss(t["media_packets"], t["runs"])
    # Overlap window [10 s, 15 s]: packets 500..750 = 251, of which 507, 557, ..., 707 lost = 5.
    row = jb[jb.jb_s == 0.040].iloc[0]
    assert (row.packets, row.pure, row.late) == (251, 5, 0)


def test_sequence_jumps_and_packets_before_the_first_match(tmp_path):
    """Matching by extended sequence number where the numbers are not one contiguous run: a jump
    far ahead and back, and a run counting down below the first number (with 16-bit wrap). Every
    packet must meet its own sender row, and a late duplicate must still count as one."""
    seqs = list(range(300)) + [30_000 + i for i in range(300)] + list(range(300, 600)) + [-i for i in range(1, 2001)]
    owd = [30 * MS + (k % 7) * MS for k in range(len(seqs))]
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    ep = ("10.0.0.1", "10.0.1.1", 5004, 5004, 0x77)
    with _native.PcapWriter(str(s)) as w:
        for k, q in enumerate(seqs):
            w.write_rtp(T0 + k * 20 * MS, *ep, q & 0xFFFF, (q * 160) & 0xFFFFFFFF, 80)
    arrivals = sorted((T0 + k * 20 * MS + owd[k], q) for k, q in enumerate(seqs))
    arrivals.append((arrivals[-1][0] + MS, seqs[310]))  # a duplicate of a packet of the far run
    with _native.PcapWriter(str(r)) as w:
        for t, q in arrivals:
            w.write_rtp(t, *ep, q & 0xFFFF, (q * 160) & 0xFFFFFFFF, 80)
    t = analyze(s, r, t0_ns=T0)
    m, run = t["media_packets"], t["runs"].iloc[0]
    assert len(m) == len(seqs)
    assert (run.media_received, run.media_lost, run.unmatched, run.duplicates, run.sender_duplicates) == (len(seqs), 0, 0, 1, 0)
    np.testing.assert_array_equal(m.seq.to_numpy(), np.array(seqs))
    np.testing.assert_array_equal((m.recv_ns - m.send_ns).to_numpy(dtype=np.int64), np.array(owd))
