"""Testbed runs with real namespaces (root only; about 2-3 minutes in all). The Done-when checks of
the testbed issue: audio alone arrives with OWD = configured delay; a bulk download fills a
500-packet pfifo; RWND moderation with a 20 kB budget keeps audio delay low at a small goodput
cost, and the advertised window in the capture is the proof; 6 flows with IW10 hurt audio more
than 1 flow with IW3; `--cleanup` removes what a SIGKILLed driver left."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from _realtime import undisturbed
from conftest import ROOT, run_cli, trace_mean_bps, umts_or_shipped
from conftest import testbed_skip_reason as _testbed_skip_reason  # aliased: pytest collects any test* name


_reason = _testbed_skip_reason()
pytestmark = pytest.mark.skipif(_reason is not None, reason=_reason or "")

SC = ROOT / "scenarios" / "testbed"


def _overlap_owd_ms(res) -> np.ndarray:
    m, r = res.media_packets, res.runs.iloc[0]
    w = m[(m.send_ns >= r.tcp_start_ns) & (m.send_ns <= r.tcp_end_ns) & m.recv_ns.notna()]
    return ((w.recv_ns - w.send_ns).astype("int64") / 1e6).to_numpy()


def _goodput_bps(res) -> float:
    t = res.tcp_flows
    return float(t.bytes.sum() * 8 / ((t.end_ns.max() - t.syn_ns.min()) / 1e9))


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.strip()]


def test_audio_alone_owd_is_the_configured_delay(tmp_path):
    from jitterlab import testbed

    res = undisturbed(lambda: testbed.run(SC / "audio-alone.toml", out=tmp_path))
    m = res.media_packets
    assert m.recv_ns.notna().all() and len(m) == 300
    owd = ((m.recv_ns - m.send_ns).astype("int64") / 1e6).to_numpy()
    configured = 15.0  # core 5 ms + downlink 10 ms
    assert abs(np.median(owd) - configured) < 1.0, np.median(owd)
    assert res.runs.source.iloc[0] == "testbed"
    # the metrics read testbed tables as they read simulated ones
    from jitterlab import metrics as jm

    pct = jm.owd_percentiles(res.media_packets, res.runs, window="all")
    assert abs(float(pct["p50_s"].iloc[0]) - 0.015) < 0.001
    assert not [n for n in _namespaces() if n.startswith(f"jl-{os.getpid()}-")]
    # the captures are there, MTU-sized at most (offloads off)
    assert (tmp_path / "server.pcap").stat().st_size > 0 and (tmp_path / "client.pcap").stat().st_size > 0


BULK = {"traffic[1].size": "10MB", "traffic[1].start": "1s", "duration": "27s"}  # CUBIC+HyStart needs ~10 s to fill the buffer


@pytest.fixture(scope="module")
def bulk_runs(tmp_path_factory):
    from jitterlab import testbed

    base = tmp_path_factory.mktemp("bulk")
    mod = tmp_path_factory.mktemp("bulk-rwnd")
    plain = undisturbed(lambda: testbed.run(SC / "audio-bulk.toml", out=base, overrides=BULK))
    moderated = undisturbed(lambda: testbed.run(SC / "audio-bulk.toml", out=mod, overrides={**BULK, "hosts": {"client": {"rwnd": {"budget": "20kB"}}}}))
    return plain, moderated, mod


def test_bulk_download_fills_the_buffer(bulk_runs):
    plain, _, _ = bulk_runs
    assert plain.tcp_flows.bytes.iloc[0] == 10_000_000
    assert plain.tcp_flows.cc.iloc[0] == "cubic"
    owd = _overlap_owd_ms(plain)
    assert np.median(owd) > 500, np.median(owd)


def test_rwnd_moderation_protects_audio_at_small_cost(bulk_runs):
    plain, moderated, mod_dir = bulk_runs
    owd = _overlap_owd_ms(moderated)
    assert np.median(owd) < 60, np.median(owd)
    cost = 1 - _goodput_bps(moderated) / _goodput_bps(plain)
    assert cost < 0.10, cost
    # the proof: the windows the client advertised (scaled, as tshark computes them) stay near the
    # 20 kB budget once the connection is established
    wins = _advertised_windows(mod_dir / "client.pcap", src_port_not=6000)  # the server listens on 6000: the client's windows
    assert len(wins) > 100
    assert max(wins) <= 26_000, max(wins)


def test_captures_through_the_capture_analysis_agree_with_the_workers(bulk_runs):
    """The tcpdump pair, read by the capture analysis, gives the run the workers logged: the same
    media packets sent and lost, OWDs within the capture/socket timestamp difference, and the TCP
    transfer with its size."""
    plain, _, _ = bulk_runs
    cap = plain.capture
    want = plain.media_packets.set_index("seq")
    got = cap["media_packets"].set_index("seq")
    assert len(got) == len(want)
    assert (got.recv_ns.isna() == want.recv_ns.reindex(got.index).isna()).all()
    both = got.recv_ns.notna()
    d_ms = (got.recv_ns[both].astype("int64") - want.recv_ns.reindex(got.index)[both].astype("int64")).abs() / 1e6
    # tcpdump and the receiving socket both take the kernel's receive time; the sender side is the
    # socket's send time against the capture's: a fraction of a millisecond apart
    assert d_ms.median() < 0.5, d_ms.describe()
    tcp = cap["tcp_flows"]
    assert len(tcp) == 1 and int(tcp.bytes.iloc[0]) == 10_000_000
    assert abs(int(tcp.end_ns.iloc[0]) - int(plain.tcp_flows.end_ns.iloc[0])) < 50_000_000


def _advertised_windows(pcap: Path, src_port_not: int) -> list[int]:
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed")
    p = subprocess.run(["tshark", "-r", str(pcap), "-Y", f"tcp && tcp.srcport != {src_port_not} && !(tcp.flags.syn == 1)",
                        "-T", "fields", "-e", "tcp.window_size"], capture_output=True, text=True)
    return [int(x) for x in p.stdout.split() if x.strip().isdigit()]


def test_six_iw10_flows_hurt_audio_more_than_one_iw3(tmp_path):
    from jitterlab import testbed

    six = undisturbed(lambda: testbed.run(SC / "audio-web.toml", out=tmp_path / "six", overrides={"traffic[1].flows": 6, "traffic[1].iw": 10}))
    one = undisturbed(lambda: testbed.run(SC / "audio-web.toml", out=tmp_path / "one", overrides={"traffic[1].flows": 1, "traffic[1].iw": 3}))
    assert list(six.tcp_flows.cwnd_at_accept) == [10] * 6
    assert list(one.tcp_flows.cwnd_at_accept) == [3]
    # the page's six connections start together, as the scenario says (0.2 ms apart in all; one
    # thread per connect() spread them over 14-18 ms, docs/validation.md)
    syn = six.tcp_flows.syn_ns
    assert syn.max() - syn.min() < 2_000_000, (syn.max() - syn.min()) / 1e6
    a, b = _overlap_owd_ms(six), _overlap_owd_ms(one)
    assert np.median(a) > np.median(b) and a.max() > b.max(), (np.median(a), np.median(b), a.max(), b.max())


def _ns_pids(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def test_sigkill_of_the_driver_leaves_nothing_once_the_next_run_starts(tmp_path):
    """SIGKILL of the driver: its children (delay line, media and TCP workers, tcpdumps) die with
    it (PR_SET_PDEATHSIG), and the next run removes its namespaces before building its own."""
    exe = Path(sys.executable).parent / "jitterlab"
    p = subprocess.Popen([str(exe), "testbed", str(SC / "audio-alone.toml"), "--out", str(tmp_path / "killed")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prefix = f"jl-{p.pid}-"
    t0 = time.monotonic()
    running: dict[str, list[int]] = {}
    # wait until the workers and both tcpdumps run (5 processes in the host namespaces, 1 in the router)
    while time.monotonic() - t0 < 60:
        running = {n: _ns_pids(n) for n in _namespaces() if n.startswith(prefix)}
        if len(running) == 3 and sum(len(v) for v in running.values()) >= 5:
            break
        time.sleep(0.1)
    pids = [x for v in running.values() for x in v]
    assert len(running) == 3 and len(pids) >= 5, running
    p.send_signal(signal.SIGKILL)
    p.wait()
    t1 = time.monotonic()
    while time.monotonic() - t1 < 5 and any(_alive(x) for x in pids):
        time.sleep(0.05)
    assert not [x for x in pids if _alive(x)], "children outlived the driver"
    from jitterlab import testbed

    testbed.run(SC / "audio-alone.toml", out=tmp_path / "next", overrides={"duration": "1s"})
    assert not [n for n in _namespaces() if n.startswith(prefix)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_cleanup_option_removes_leftovers(tmp_path):
    exe = Path(sys.executable).parent / "jitterlab"
    p = subprocess.Popen([str(exe), "testbed", str(SC / "audio-alone.toml"), "--out", str(tmp_path)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prefix = f"jl-{p.pid}-"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30 and len([n for n in _namespaces() if n.startswith(prefix)]) < 3:
        time.sleep(0.1)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert len([n for n in _namespaces() if n.startswith(prefix)]) == 3
    r = run_cli("testbed", "--cleanup")
    assert r.returncode == 0, r.stderr
    assert not [n for n in _namespaces() if n.startswith(prefix)]


def test_sigterm_tears_down(tmp_path):
    exe = Path(sys.executable).parent / "jitterlab"
    p = subprocess.Popen([str(exe), "testbed", str(SC / "audio-alone.toml"), "--out", str(tmp_path)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    prefix = f"jl-{p.pid}-"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30 and len([n for n in _namespaces() if n.startswith(prefix)]) < 3:
        time.sleep(0.1)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    assert p.returncode != 0
    assert not [n for n in _namespaces() if n.startswith(prefix)]


def test_rwnd_budget_is_resplit_as_flows_come_and_go(tmp_path):
    """A long download alone, then with a short one, then alone again: its advertised window
    follows the share (budget, budget/2, budget)."""
    from jitterlab import testbed

    res = testbed.run(SC / "rwnd-resplit.toml", out=tmp_path)
    t = res.tcp_flows.set_index("flow_id")
    short_start, short_end = int(t.loc[2, "syn_ns"]), int(t.loc[2, "end_ns"])
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed")
    p = subprocess.run(["tshark", "-r", str(tmp_path / "client.pcap"), "-Y", "tcp.dstport == 6000 && tcp.flags.syn == 0",
                        "-T", "fields", "-e", "frame.time_epoch", "-e", "tcp.window_size"], capture_output=True, text=True)
    rows = [l.split() for l in p.stdout.splitlines() if len(l.split()) == 2]
    t0 = int(res.runs.iloc[0].get("t0_realtime_ns"))
    pts = [(int(float(a) * 1e9) - t0, int(b)) for a, b in rows]
    during = [w for ts, w in pts if short_start + 0.5e9 < ts < short_end - 0.2e9]
    after = [w for ts, w in pts if ts > short_end + 1e9]
    before = [w for ts, w in pts if ts < short_start - 0.2e9]
    # The caps are upper bounds that hold whatever the load (a reader stalled by a busy CPU only
    # shrinks the advertised window further), so `before` and `during` are checked by their maxima.
    # After the short flow the cap is lifted; a momentary stall of the reader can still lower single
    # advertisements (7,240 B seen on a busy machine), so the lift is checked as "the full budget is
    # advertised again", i.e. a window above the half share's cap, well into the full one.
    assert max(before) <= 26_000 and max(during) <= 14_000, (max(before), max(during))
    assert max(after) >= 20_000, sorted(after)[:5]


def test_sweep_with_testbed_backend(tmp_path):
    from jitterlab import sweep

    sw = sweep.from_dict({"sweep": {"name": "tb", "scenario": str(SC / "audio-alone.toml"), "backend": "testbed",
                                    "replications": 2, "vary": {"duration": ["3s"]}}})
    res = sweep.run(sw, tmp_path, progress=False)
    runs = res.tables["runs"]
    assert list(runs.source) == ["testbed", "testbed"] and len(res.failures) == 0
    m = res.tables["media_packets"]
    assert sorted(m.run_id.unique()) == [0, 1] and len(m) == 2 * 150  # 50 packets a second for 3 s
    # nothing is lost on an idle link, but a packet sent in the run's last moments may still be in
    # flight when the receiver stops at 3 s (as in the simulator: in flight at the end, recv_ns
    # null); the last one leaves 20 ms before the end on a ~15 ms path, which a busy machine can
    # delay past it (seen once in CI). Every packet sent half a second before the end arrives.
    early = m[m.send_ns < 2_500_000_000]
    assert len(early) >= 2 * 124 and early.recv_ns.notna().all()


TRACE = umts_or_shipped()  # Mahimahi's UMTS trace (Debian's package or ../shared), else the shipped one


@pytest.fixture(scope="module")
def umts(tmp_path_factory):
    """Issue 11: `jitterlab compare` over TMobile-UMTS-driving.down (500-packet buffer): the simulator
    and real Linux TCP through the userspace link (Mahimahi's queue on the same opportunities, the
    trace clock started at the run's time zero on both)."""
    from jitterlab.compare import compare

    out = {}
    for name in ("umts-bulk", "umts-web"):
        d = tmp_path_factory.mktemp(name)
        out[name] = (undisturbed(lambda: compare(SC / f"{name}.toml", seed=1, out=d, overrides={"access.down_trace": str(TRACE)})), d)
    return out


@pytest.mark.parametrize("name", ["umts-bulk", "umts-web"])
def test_umts_trace_audio_owd_within_15_percent(umts, name):
    df, d = umts[name]
    ch = __import__("pandas").read_parquet(d / "testbed" / "channels.parquet").set_index("name")
    assert ch.loc["bottleneck", "qdisc"] == "userspace-pfifo" and ch.loc["bottleneck", "tx_pkts"] > 200
    assert abs(ch.loc["bottleneck", "rate_bps"] - trace_mean_bps(TRACE)) < 0.01e6  # the trace's mean (UMTS: 2.02 Mbit/s)
    for k in ("owd_p50_ms", "owd_p90_ms"):
        assert abs(df.loc[k, "diff_pct"]) <= 15, df.to_string()


def test_umts_bulk_goodput_within_5_percent(umts):
    df, _ = umts["umts-bulk"]
    assert abs(df.loc["tcp_goodput_mbps", "diff_pct"]) <= 5, df.to_string()


def test_umts_web_goodput_within_5_percent(umts):
    """Holds since the simulator has TCP Small Queues (crates/sim/src/tcp/tsq.rs): the six IW10
    bursts leave the server interleaved as on Linux, no flow's first segments wait ~300 ms behind
    the others' bursts, and no retransmission timer fires (with `tsq = false`: 80 spurious
    retransmissions, goodput 1.96 against 2.45 Mbit/s, docs/validation.md)."""
    df, _ = umts["umts-web"]
    if TRACE.name == "TMobile-UMTS-driving.down":  # measured on that trace (on the shipped one: sim 22, Linux 6 retransmissions)
        assert df.loc["tcp_retransmits", "sim"] <= 2, df.to_string()
    assert abs(df.loc["tcp_goodput_mbps", "diff_pct"]) <= 5, df.to_string()


def test_link_jitter_on_the_testbed(tmp_path):
    """Exponential link jitter (mean 4 ms, the PAM 2013 preset's kind) in the userspace link: the
    audio's OWD is 15 ms + Exp(4 ms), kept in order (20 ms spacing makes holding-back rare):
    mean +4 ms, 90th percentile +4·ln 10 = 9.2 ms."""
    from jitterlab import testbed

    res = undisturbed(lambda: testbed.run(SC / "audio-alone.toml", out=tmp_path, overrides={"duration": "6s",
                      "access.down_jitter": {"dist": "exponential", "mean": "4ms"}}))
    m = res.media_packets
    assert m.recv_ns.notna().all()
    extra = ((m.recv_ns - m.send_ns).astype("int64") / 1e6).to_numpy() - 15.0
    assert abs(extra.mean() - 4.0) < 1.0, extra.mean()
    assert abs(np.percentile(extra, 90) - 9.2) < 2.5, np.percentile(extra, 90)
    assert (np.diff(m.recv_ns.astype("int64").to_numpy()) > 0).all()  # FIFO kept


def test_audio_alone_with_both_cores_busy(tmp_path):
    """A test of the tests: with two busy loops on the 2 cores (as a parallel compile), audio still
    arrives complete (no start-up loss) and on time (SCHED_FIFO sender, receiver and link). The
    tail is the saturated machine's: even SCHED_FIFO threads wait behind interrupt and softirq work
    (a few packets +5 ms here, the link's release lateness up to 12 ms at p99.9, and once, at load 9
    with two more busy loops and other builds, 79 ms; `docs/testbed.md` measured up to 8.1 ms at
    load 5.9 before this change), so the bounds are on the median and the 90th percentile."""
    from jitterlab import testbed

    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        res = testbed.run(SC / "audio-alone.toml", out=tmp_path, overrides={"duration": "4s"})
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    m = res.media_packets
    assert len(m) == 200 and m.recv_ns.notna().all(), int(m.recv_ns.isna().sum())
    owd = ((m.recv_ns - m.send_ns).astype("int64") / 1e6).to_numpy()
    assert abs(np.median(owd) - 15.0) < 1.0 and np.percentile(owd, 90) < 16.0, (np.median(owd), np.percentile(owd, 90), owd.max())


def test_loss_bursts_hit_the_same_packets_on_both_backends(tmp_path):
    """`loss` + `loss_burst`: the userspace link replays the simulator's loss periods (same seed, same
    `loss:<channel>` stream, counted from time zero), so the same audio packets are lost on both
    (a packet within a fraction of a millisecond of a burst's edge may fall either way: at most one)."""
    from jitterlab import sim, testbed
    from jitterlab import scenario as scn

    ov = {"duration": "6s", "access.down_loss": 0.05, "access.down_loss_burst": "100ms"}
    tb = testbed.run(SC / "audio-alone.toml", out=tmp_path, overrides=ov, seed=1)
    sm = sim.simulate(scn.with_overrides(scn.load(SC / "audio-alone.toml"), ov), seed=1)
    lost_tb = set(tb.media_packets[tb.media_packets.recv_ns.isna()].seq)
    lost_sim = set(sm.media_packets[sm.media_packets.recv_ns.isna()].seq)
    assert len(lost_sim) >= 3 and len(lost_tb ^ lost_sim) <= 1, (sorted(lost_sim), sorted(lost_tb))


def test_report_on_the_testbeds_captures_works_in_chromium(bulk_runs, tmp_path):
    """`jitterlab report` on the analysis of the testbed's own tcpdump captures, overlaid with the
    tables the testbed's workers wrote: one interactive page that renders in Chromium, every figure
    drawn, zoom and hover working, both inputs in the same figures."""
    from test_report import chromium
    from test_report_cmd import page_state

    from jitterlab import testbed

    _, moderated, run_dir = bulk_runs
    assert (run_dir / "capture" / "manifest.json").is_file()
    testbed.write(moderated, run_dir)  # what `jitterlab testbed --out` does after the run
    out = tmp_path / "r"
    run_cli("report", str(run_dir), str(run_dir / "capture"), "--label", "testbed", "--label", "capture", "--out", str(out), check=True)
    summary = (out / "summary.csv").read_text()
    assert "testbed" in summary and "capture" in summary
    if not chromium():
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    attrs, errors = page_state(out / "report.html")
    assert not errors, errors
    assert int(attrs["data-figures-total"]) >= 5 and attrs["data-figures-loaded"] == attrs["data-figures-total"]
    assert attrs["data-selftest-zoom"] == "ok" and attrs["data-selftest-hover"].startswith("ok:")
