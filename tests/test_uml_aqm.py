"""The simulator's queue disciplines against Linux 6.1's own (user-mode Linux, scripts/uml_aqm.py)
on the mitigations study's fixed path. The kernel comparison needs /usr/bin/linux.uml and root and
takes about 12 minutes (8 disciplines x 3 downloads of 8 MB in real time), so it runs on request:
JITTERLAB_UML=1 ./run-tests tests/test_uml_aqm.py (skipped otherwise, with the reason). The
measurement code is tested everywhere against hand-made kernel output, and the docs table's
simulator side against this build."""
import importlib.util
import json
import os
import subprocess
import unittest.mock as um
import sys

import numpy as np
import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("uml_aqm", ROOT / "scripts" / "uml_aqm.py")
U = importlib.util.module_from_spec(spec)
spec.loader.exec_module(U)


def _run(t0: int, last: int, audio: list, sent: int, drops: int = 7, mib=((100, 5), (130, 6))) -> dict:
    mib_txt = [f"Tcp: RtoAlgorithm RetransSegs\nTcp: 1 {r}\nTcpExt: TCPTimeouts X\nTcpExt: {t} 0\n" for r, t in mib]
    return {"setup": {"tc": "codel limit 500"},
            "send": {"connect_ns": t0, "audio_sent": sent},
            "recv": {"audio": audio, "tcp": {"bytes": 8_000_000, "first_ns": t0 + 10**8, "last_ns": last}, "complete": True},
            "qdisc": [{"kind": "htb", "handle": "1:", "drops": 0}, {"kind": "codel", "parent": "1:1", "drops": drops}],
            "mib0": mib_txt[0], "mib1": mib_txt[1]}


def test_mib_parses_the_kernels_pairs_of_lines():
    txt = "Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoAlgorithm RtoMin MaxConn RetransSegs\nTcp: 1 200 -1 42\n"
    assert U._mib(txt) == {"Ip.Forwarding": 1, "Ip.DefaultTTL": 64, "Tcp.RtoAlgorithm": 1, "Tcp.RtoMin": 200,
                           "Tcp.MaxConn": -1, "Tcp.RetransSegs": 42}


def test_kernel_side_by_hand():
    # audio from t = 0 every 20 ms (100 packets, seq 0..99); the download from 1 s to 21 s: 8 MB in
    # 20 s = 3.2 Mbit/s. Audio due in [1 s, 21 s]: seq 50..99 (50 packets); seq 60 is lost; OWD
    # 20 ms + seq mod 3 ms -> in the window 49 packets, median 21 ms, 90th percentile 22 ms
    t0, last = 10**9, 21 * 10**9
    audio = [[k, k * 20_000_000, k * 20_000_000 + (20 + k % 3) * 10**6] for k in range(100) if k != 60]
    k = U.kernel_side(_run(t0, last, audio, 100), 8_000_000)
    assert k["goodput_Mbps"] == pytest.approx(3.2)
    assert k["owd_p50_ms"] == pytest.approx(21.0) and k["owd_p90_ms"] == pytest.approx(22.0)
    assert k["loss_pct"] == pytest.approx(2.0)  # 1 of 50
    assert (k["drops"], k["retransmits"], k["timeouts"], k["tcp_start_s"]) == (7, 30, 1, 1.0)


def test_compare_takes_the_median_over_repetitions(monkeypatch):
    # three kernel runs of 3.2, 3.0, 2.0 Mbit/s (20, 21.33, 32 s); the simulator faked at 3.1: the
    # medians are 3.0 and 3.1, +3.3 %: a miss of the 3 % rule, whatever the outlier
    audio = [[k, k * 20_000_000, k * 20_000_000 + 20 * 10**6] for k in range(2000)]
    runs = {f"codel-{i + 1}": _run(10**9, 10**9 + round(8e6 * 8 / g * 1e9), audio, 2000) for i, g in enumerate((3.2e6, 3.0e6, 2.0e6))}
    fake = {c: 1.0 for c in U.KEYS} | {"goodput_Mbps": 3.1, "owd_p50_ms": 20.0}
    monkeypatch.setattr(U, "sim_side", lambda d, start, size, seed=1, queue=None: dict(fake))
    k = {"size": 8_000_000, "runs": runs, "rtt_ms": [40.0]}
    (row,) = U.compare(U.summarize(k, ("codel",)), ("codel",))
    assert row["reps"] == 3 and row["kernel"]["goodput_Mbps"] == pytest.approx(3.0)
    assert row["goodput_diff"] == pytest.approx(3.1 / 3.0 - 1) and row["owd_diff"] == pytest.approx(0.0)
    assert row["ok"] is False
    fake["goodput_Mbps"] = 3.09
    assert U.compare(U.summarize(k, ("codel",)), ("codel",))[0]["ok"] is True


def test_red_weight_is_what_tc_derives_from_burst_55():
    # tc's tc_red_eval_ewma (iproute2 tc/tc_red.c): the smallest Wlog with
    # burst + 1 - qmin/avpkt <= (1 - (1 - W)^burst) / W, W = 2^-Wlog
    def wlog(qmin, burst, avpkt):
        a = burst + 1 - qmin / avpkt
        return next(w for w in range(1, 32) if a <= (1 - (1 - 2.0 ** -w) ** burst) / 2.0 ** -w)
    assert wlog(7500, 55, 1500) == 9
    assert U.QUEUES["red"]["q_weight"] == 2.0 ** -9
    sc = U.scenario("red", 1.9)
    assert sc["access"]["down_rate"] == "3300kbit" and sc["access"]["down_delay"] == sc["access"]["up_delay"] == "20ms"
    assert sc["traffic"][0]["size"] == "80B" and sc["traffic"][1]["start"] == "1900.000ms"


def test_red_and_pie_say_they_are_linuxs():
    # sch_red under HTB (red.h's rules, no idle period) and sch_pie (jiffy tupdate, frame bytes
    # against psched_mtu 1514 = IP bytes against 1500)
    assert U.QUEUES["red"]["rules"] == "linux" and U.QUEUES["red"]["idle_decay"] is False
    assert U.QUEUES["pie"]["rules"] == "linux" and U.QUEUES["pie"]["mtu"] == 1500
    assert U.PIE_TUPDATE_MS == 20 and U.QUEUES["pie"]["tupdate"] == "20ms"  # ceil(15 ms / 10 ms) jiffies
    if os.path.exists(U.UML):
        with open(U.UML, "rb") as f:
            assert b"\0CONFIG_HZ=%d\n" % U.UML_HZ in f.read(), f"{U.UML} is not built with HZ = {U.UML_HZ}"


@pytest.mark.parametrize("args, msg", [(["--discs", "codel,sfq"], "--discs: unknown discipline 'sfq'"),
                                       (["--kernel", "/nonexistent.json"], "--kernel /nonexistent.json: not a JSON"),
                                       (["--summary", "/nonexistent.json"], "--summary /nonexistent.json: not a kept kernel side")])
def test_bad_input_is_one_line_and_status_2(args, msg):
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "uml_aqm.py"), *args], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith(msg) and p.stderr.count("\n") == 1, p.stderr


@pytest.fixture(scope="module")
def kept():
    """The kernel's side kept in docs/data/uml-aqm.json and the simulator's, recomputed with this build."""
    s = json.loads(U.SUMMARY.read_text())
    return s, U.compare(s)


def test_doc_table_is_this_build(kept):
    """docs/mitigations.md's kernel table: the simulator's side recomputed with this build from the
    kernel's side kept in docs/data/uml-aqm.json (`uml_aqm.py --summary docs/data/uml-aqm.json --doc`
    regenerates it after a model change)."""
    s, rows = kept
    text = U.table(s, rows)
    doc = U.DOC.read_text()
    assert text in doc.split(U.BEGIN, 1)[1].split(U.END, 1)[0], "docs/mitigations.md: the uml-aqm table is not this build's"
    variants = U.variants_table(s)
    assert variants in doc.split(U.VBEGIN, 1)[1].split(U.VEND, 1)[0], "docs/mitigations.md: the variants table is not this build's"


def test_retransmissions_as_the_kernels(kept):
    """Through each of Linux's own disciplines the simulator's download retransmits at most RETX_MAX
    times as often as the kernel's (median over the kept runs; issue 26 found 1.3-3.4x through the same
    queue code), and the kept runs do retransmit (a ratio over nothing would pass anything)."""
    _, rows = kept
    for r in rows:
        assert r["kernel"]["retransmits"] >= 20, (r["disc"], r["kernel"]["retransmits"])
        assert r["retx_ratio"] <= U.RETX_MAX, (r["disc"], r["kernel"]["retransmits"], r["sim"]["retransmits"])


def test_retransmission_ratio_by_hand():
    s = {"size": 1, "tc": {"red": "red"}, "runs": {"red": [dict.fromkeys(U.KEYS, 2.0) | {"tcp_start_s": 1.0, "retransmits": 40.0}]}}
    sim = dict.fromkeys(U.KEYS, 2.0) | {"retransmits": 50.0}

    with um.patch.object(U, "sim_side", lambda *a, **k: sim):
        (row,) = U.compare(s, discs=("red",))
    assert row["retx_ratio"] == 1.25 and row["retx_ratio"] <= U.RETX_MAX
    sim["retransmits"] = 51.0
    with um.patch.object(U, "sim_side", lambda *a, **k: sim):
        (row,) = U.compare(s, discs=("red",))
    assert row["retx_ratio"] > U.RETX_MAX


def test_red_collapses_as_the_kernels():
    """The kernel's CUBIC through sch_red under HTB falls to ssthresh 2 within 2 s of the connect
    (docs/mitigations.md, `ss` inside UML); so does the simulator's with Linux's rules, where ns-2's
    (a q > 1 guard, the idle decay) keep it above 5 segments."""
    from jitterlab.sim import simulate

    def lowest_ssthresh(queue: dict) -> float:
        sc = U.scenario("red", 1.9, queue=queue)
        sc["traffic"][1]["series"] = True
        res = simulate(sc, seed=101)
        ts = res.tcp_series
        within = ts[(ts.t_ns >= 1.9e9) & (ts.t_ns <= 3.9e9)]
        return float(within.ssthresh.astype("float64").min()) / 1448
    assert lowest_ssthresh(dict(U.QUEUES["red"])) <= 3
    ns2 = {k: v for k, v in {**U.QUEUES["red"], "rules": None, "idle_decay": None, "wait": False, "use_mark_p": False,
                             "gentle": False}.items() if v is not None}
    assert lowest_ssthresh(ns2) > 5


_reason = U.skip_reason() or (None if os.environ.get("JITTERLAB_UML") == "1" else
                              "the 12-minute kernel comparison runs on request: JITTERLAB_UML=1 (scripts/uml_aqm.py --doc measures the table)")

#: Disciplines the measured table (docs/mitigations.md) shows outside the rule, with the size of the
#: miss there; they are expected to fail until the cause is found (see the doc).
#: Disciplines outside the rule in the table's boot (docs/mitigations.md): none in the 08:03 boot
#: with RFC 9438's Reno-friendly rule; with Linux's (issue 26) the CAKE rows' goodput falls below the
#: kernel's by more than the rule allows (the table's "no" rows, cause not found).
#: A live rerun on a loaded host can miss by UML's own timer lateness (the earlier boots' CAKE rows):
#: the rerun is on request and its failure names the discipline and both sides.
KNOWN_MISS: dict[str, str] = {}


@pytest.fixture(scope="module")
def uml(tmp_path_factory):
    out = tmp_path_factory.mktemp("uml") / "uml-aqm.json"
    return U.compare(U.summarize(U.run_uml(out)))


@pytest.mark.realtime
@pytest.mark.skipif(_reason is not None, reason=_reason or "")
@pytest.mark.parametrize("disc", [pytest.param(d, marks=pytest.mark.xfail(reason=KNOWN_MISS[d], strict=False)) if d in KNOWN_MISS else d
                                  for d in U.DISCS])
def test_discipline_agrees_with_linux(uml, disc):
    (row,) = [r for r in uml if r["disc"] == disc]
    assert not row.get("missing"), f"the kernel's {disc} runs are missing"
    assert row["reps"] >= 2
    kn, sm = row["kernel"], row["sim"]
    assert abs(row["goodput_diff"]) <= U.GOODPUT_TOL, (disc, kn["goodput_Mbps"], sm["goodput_Mbps"])
    assert abs(row["owd_diff"]) <= U.OWD_TOL, (disc, kn["owd_p50_ms"], sm["owd_p50_ms"])
    assert row["retx_ratio"] <= U.RETX_MAX, (disc, kn["retransmits"], sm["retransmits"])
    assert json.dumps(row)  # the row is what --doc writes
    assert np.isfinite(kn["owd_p90_ms"]) and np.isfinite(sm["owd_p90_ms"])
