"""Cross-check with Wireshark: RFC 3550 jitter, loss and packet spacing per RTP stream from
`jitterlab analyze` against `tshark -q -z rtp,streams` on the same captures (written with our
PcapWriter). tshark prints milliseconds with 3 decimals, so values may differ by 0.0005 ms."""
from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from jitterlab import _native
from jitterlab.capture import analyze

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
ROUND = 0.0005 + 1e-9  # tshark's %.3f rounding, in ms

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed (Debian: apt-get install tshark)")


def write_stream(sender: Path, receiver: Path, n: int, seed: int, streams: list[tuple[int, int, int]]) -> None:
    """Streams (ssrc, port, first seq), 20 ms G.711 packets; uniform 0-15 ms extra delay and every
    37th packet lost at the receiver."""
    rng = random.Random(seed)
    arrivals = []
    with _native.PcapWriter(str(sender)) as s:
        for i in range(n):
            for k, (ssrc, port, seq0) in enumerate(streams):
                ts = T0 + i * 20 * MS + k * MS
                args = ("10.0.0.1", "10.0.1.1", port, port, ssrc, (seq0 + i) & 0xFFFF, (i * 160) & 0xFFFFFFFF, 80)
                s.write_rtp(ts, *args)
                if (i + k) % 37 == 5:
                    continue
                arrivals.append((ts + 30 * MS + rng.randint(0, 15 * MS), args))
    arrivals.sort()
    with _native.PcapWriter(str(receiver)) as r:
        for t, args in arrivals:
            r.write_rtp(t, *args)


def tshark_streams(path: Path, ports: list[int]) -> dict[int, dict[str, float]]:
    cmd = ["tshark", "-q", "-z", "rtp,streams", "-r", str(path)]
    for p in ports:
        cmd += ["-d", f"udp.port=={p},rtp"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = {}
    # Start End SrcIP Port DstIP Port SSRC Payload Pkts Lost (pct) MinDelta MeanDelta MaxDelta MinJit MeanJit MaxJit [Problems]
    pat = re.compile(
        r"^\s*\S+\s+\S+\s+\S+\s+\d+\s+\S+\s+\d+\s+(0x[0-9A-Fa-f]+)\s+\S+\s+(\d+)\s+(-?\d+)\s+\(\S+\)"
        r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
    )
    for line in out.splitlines():
        m = pat.match(line)
        if m:
            names = ["pkts", "lost", "min_delta", "mean_delta", "max_delta", "min_jitter", "mean_jitter", "max_jitter"]
            rows[int(m.group(1), 16)] = dict(zip(names, map(float, m.groups()[1:])))
    assert rows, f"no stream parsed from tshark output:\n{out}"
    return rows


@pytest.mark.parametrize("seed", [1, 2])
def test_jitter_loss_and_deltas_agree_with_tshark(tmp_path, seed):
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    # Two streams; the second crosses the 16-bit sequence wrap.
    streams = [(0x0ABC, 5004, 100), (0xBEEF, 5008, 65400)]
    write_stream(s, r, 600, seed, streams)
    ours = analyze(s, r)["rtp_streams"]
    ours = ours[ours.side == "receiver"].set_index("ssrc")
    theirs = tshark_streams(r, [5004, 5008])
    assert set(theirs) == set(ours.index) == {0x0ABC, 0xBEEF}
    for ssrc, t in theirs.items():
        o = ours.loc[ssrc]
        assert o.packets == t["pkts"]
        assert o.lost == t["lost"] > 0
        for ours_col, col in [("min_delta_ms", "min_delta"), ("mean_delta_ms", "mean_delta"), ("max_delta_ms", "max_delta"),
                              ("min_jitter_ms", "min_jitter"), ("mean_jitter_ms", "mean_jitter"), ("max_jitter_ms", "max_jitter")]:
            assert abs(o[ours_col] - t[col]) <= ROUND, (hex(ssrc), col, o[ours_col], t[col])
        # Not trivially zero: the delays vary by up to 15 ms.
        assert t["max_jitter"] > 1.0


def test_constant_delay_has_zero_jitter_in_both(tmp_path):
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    with _native.PcapWriter(str(s)) as ws, _native.PcapWriter(str(r)) as wr:
        for i in range(50):
            args = ("10.0.0.1", "10.0.1.1", 5004, 5004, 7, i, i * 160, 80)
            ws.write_rtp(T0 + i * 20 * MS, *args)
            wr.write_rtp(T0 + i * 20 * MS + 25 * MS, *args)
    o = analyze(s, r)["rtp_streams"].set_index("side").loc["receiver"]
    t = tshark_streams(r, [5004])[7]
    assert o.max_jitter_ms == 0.0 and t["max_jitter"] == 0.0
    assert o.lost == t["lost"] == 0


def test_writer_frames_are_clean_in_wireshark(tmp_path):
    """What the simulator's pcap tap will produce opens in Wireshark with valid IPv4/UDP/TCP
    checksums, the TCP options it models, and ECN bits where set."""
    p = tmp_path / "mix.pcap"
    with _native.PcapWriter(str(p)) as w:
        w.write_rtp(T0, "10.0.0.1", "10.0.1.1", 5004, 5004, 7, 1, 160, 80)
        w.write_tcp(T0 + 1, "10.0.1.1", "10.0.0.1", 40000, 80, 1000, 0, 0x02, mss=1460, wscale=7, sack_permitted=True, timestamps=(5, 0))
        w.write_tcp(T0 + 2, "10.0.0.1", "10.0.1.1", 80, 40000, 5, 1001, 0x10, payload_len=1448, timestamps=(6, 5), sack=[(10, 20), (30, 40)])
        w.write_tcp(T0 + 3, "10.0.0.1", "10.0.1.1", 80, 40000, 1453, 1001, 0x11, ecn=3)
    fields = ["ip.checksum.status", "udp.checksum.status", "tcp.checksum.status", "_ws.malformed", "tcp.option_kind", "ip.dsfield.ecn", "rtp.seq"]
    cmd = ["tshark", "-r", str(p), "-d", "udp.port==5004,rtp", "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
           "-o", "tcp.check_checksum:TRUE", "-T", "fields", *sum((["-e", f] for f in fields), [])]
    rows = [line.split("\t") for line in subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()]
    assert len(rows) == 4
    good = "1"  # Wireshark's PROTO_CHECKSUM_E_GOOD
    assert rows[0][0] == rows[0][1] == good and rows[0][6] == "1"
    for r in rows[1:]:
        assert r[0] == r[2] == good and r[3] == ""
    assert rows[1][4].split(",") == ["2", "1", "3", "1", "1", "4", "1", "1", "8"]  # MSS, NOP, WS, NOP, NOP, SACK_PERM, NOP, NOP, TS
    assert "5" in rows[2][4].split(",")  # SACK blocks
    assert [r[5] for r in rows] == ["0", "0", "0", "3"]


def test_reordering_and_duplication_agree_with_tshark(tmp_path):
    """Packet 50 lost, 100 overtaken by 101 and 102, 200 duplicated: RFC 3550 counts lost as
    expected - received, so the duplicate hides the loss in both tools; our run row keeps them apart."""
    rng = random.Random(3)
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    arrivals = []
    with _native.PcapWriter(str(s)) as w:
        for i in range(300):
            ts = T0 + i * 20 * MS
            args = ("10.0.0.1", "10.0.1.1", 5004, 5004, 5, i, i * 160, 80)
            w.write_rtp(ts, *args)
            if i == 50:
                continue
            d = 30 * MS + rng.randint(0, 5 * MS) + (45 * MS if i == 100 else 0)
            arrivals.append((ts + d, args))
            if i == 200:
                arrivals.append((ts + d + MS, args))
    arrivals.sort()
    with _native.PcapWriter(str(r)) as w:
        for t, args in arrivals:
            w.write_rtp(t, *args)
    res = analyze(s, r)
    o = res["rtp_streams"].set_index("side").loc["receiver"]
    t = tshark_streams(r, [5004])[5]
    assert o.packets == t["pkts"] == 300 and o.lost == t["lost"] == 0
    for ours_col, col in [("min_delta_ms", "min_delta"), ("mean_delta_ms", "mean_delta"), ("max_delta_ms", "max_delta"),
                          ("min_jitter_ms", "min_jitter"), ("mean_jitter_ms", "mean_jitter"), ("max_jitter_ms", "max_jitter")]:
        assert abs(o[ours_col] - t[col]) <= ROUND, (col, o[ours_col], t[col])
    run = res["runs"].iloc[0]
    assert (run.media_lost, run.reordered, run.duplicates) == (1, 1, 1)
