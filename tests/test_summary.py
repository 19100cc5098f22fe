"""The answer on the terminal: `simulate` and `sweep` end with a summary (per media flow OWD median
and p99, loss, best-JB MOS; per TCP role goodput and completion), and `--json` prints the same as
one JSON document on standard output with nothing else there."""
from __future__ import annotations

import json

import pytest

import jitterlab
from jitterlab import summary
from conftest import ROOT, run_cli

# 80-byte audio over one 1 Mbit/s, 10 ms link: every packet's OWD is 10 ms + 640 µs of serialisation
LINK = {"duration": "2s", "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms"}},
        "traffic": [{"kind": "audio", "name": "call", "from": "a", "to": "b"}]}


@pytest.mark.filterwarnings("ignore::jitterlab.metrics.MetricsWarning")  # no TCP: base from the whole stream, as stated
def test_audio_alone_by_hand():
    s = summary.summarize(jitterlab.simulate(LINK, seed=1))
    assert (s["runs"], s["window"]) == (1, "all")  # no TCP: the whole run
    (m,) = s["points"][0]["media"]
    assert m["name"] == "call" and m["packets"] == 100  # 2 s / 20 ms
    assert m["owd_median_ms"] == pytest.approx(10.64) and m["owd_p99_ms"] == pytest.approx(10.64)
    assert m["loss"] == 0.0
    # no packet is late behind any buffer, so a larger one only adds delay: the smallest wins
    assert m["best_jb_ms"] == 40.0
    mos40 = jitterlab.emodel_mos(jitterlab.simulate(LINK, seed=1).media_packets, None, jbs_ms=[40], window="all").mos.iloc[0]
    assert m["mos"] == pytest.approx(mos40) and not m["mos_same_at_every_jb"]
    assert s["points"][0]["tcp"] == []


def test_tcp_goodput_uses_delivered_bytes_finished_or_not():
    sc = {"duration": "3s", "links": {"l": {"from": "a", "to": "b", "rate": "2Mbit", "delay": "5ms", "queue": {"kind": "droptail", "limit": "50pkt"}},
                                      "r": {"from": "b", "to": "a", "rate": "2Mbit", "delay": "5ms"}},
          "traffic": [{"kind": "bulk", "from": "a", "to": "b", "size": "100kB", "start": "0.5s"},
                      {"kind": "web", "from": "a", "to": "b", "size": "50MB", "flows": 2, "start": "1s"}]}
    r = jitterlab.simulate(sc, seed=1)
    s = summary.summarize(r)
    tcp = {t["role"]: t for t in s["points"][0]["tcp"]}
    f = r.tcp_flows.set_index("role")
    bulk = f.loc["bulk"]
    assert tcp["bulk"]["finished_runs"] == 1 and tcp["bulk"]["bytes"] == 100_000
    assert tcp["bulk"]["completion_s"] == pytest.approx((bulk.end_ns - bulk.syn_ns) / 1e9)
    assert tcp["bulk"]["goodput_mbps"] == pytest.approx(100_000 * 8 / ((bulk.end_ns - bulk.syn_ns) / 1e9) / 1e6)
    web = tcp["web"]
    # 50 MB cannot cross 2 Mbit/s in 2 s: unfinished, no completion; goodput from what arrived
    assert web["finished_runs"] == 0 and web["completion_s"] is None and web["connections"] == 2
    delivered = int(f.loc["web", "bytes"].sum())
    assert web["bytes"] == delivered < 500_000
    assert web["goodput_mbps"] == pytest.approx(delivered * 8 / 2.0 / 1e6)  # first SYN at 1 s to the run's end at 3 s
    assert web["goodput_mbps"] <= 2.0


def test_simulate_prints_the_summary_and_json_alone_on_stdout(tmp_path):
    p = run_cli("simulate", str(ROOT / "scenarios" / "audio-bulk-access.toml"), "--out", str(tmp_path / "a"), check=True)
    assert p.stdout.startswith("summary (1 run; media over the TCP overlap window):")
    assert "audio: OWD median" in p.stdout and "bulk TCP (1 conn.): goodput" in p.stdout
    # a 500-packet buffer behind a download: MOS 1 whatever the buffer, said so rather than "best JB 40 ms"
    assert "MOS 1.00 (the same at every JB)" in p.stdout
    p = run_cli("simulate", str(ROOT / "scenarios" / "audio-bulk-access.toml"), "--out", str(tmp_path / "b"), "--json", check=True)
    doc = json.loads(p.stdout)  # the whole of stdout is one document
    assert doc["scenario"] == "audio-bulk-access" and doc["out"] == str(tmp_path / "b")
    assert doc["points"][0]["tcp"][0]["bytes"] == 5_000_000
    assert doc == {**doc, **summary.summarize(jitterlab.load(tmp_path / "b"))}
    assert "tables in" in p.stderr


def test_sweep_json_has_a_point_per_value(tmp_path):
    p = run_cli("sweep", str(ROOT / "scenarios" / "sweeps" / "buffer-aqm.toml"), "--out", str(tmp_path / "s"), "--jobs", "1", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["sweep"] == "buffer-aqm" and doc["runs"] == 9
    assert [pt["params"]["queue"] for pt in doc["points"]] == ["droptail-50", "droptail-500", "codel"]
    assert all(pt["runs"] == 3 and len(pt["media"]) == 1 for pt in doc["points"])


def test_rows_of_a_points_runs_are_the_isin_filter():
    """A point's rows are found through each run's positions, found once (not a pass over the
    whole table per point): the same rows in the same order as filtering with isin, for runs
    that are one stretch (a view) or scattered (replications of a point between other points')."""
    import pandas as pd

    df = pd.DataFrame({"run_id": [0, 0, 1, 2, 2, 1, 3, 0], "x": range(8)})
    by_run = summary._rows_by_run(df)
    for ids in ([0], [2], [1, 3], [0, 2], [3, 0, 1], [9], [2, 9]):
        runs = pd.DataFrame({"run_id": ids})
        got = summary._of_runs(df, by_run, runs)
        assert got.equals(df[df["run_id"].isin(ids)]), ids
    assert summary._of_runs(df.iloc[:0], summary._rows_by_run(df.iloc[:0]), pd.DataFrame({"run_id": [0]})).empty


def test_the_summary_converts_only_the_six_media_columns_it_uses(tmp_path):
    """A sweep's media rows, in memory or still in OUT/media_packets.parquet (spliced, never
    decoded), are converted for the summary by the six columns its metrics use (and not kept):
    the same summary as from the whole table."""
    import json as _json

    from jitterlab import sweep
    from jitterlab.tables import LazyTables

    # 500 packets/s for 10 s: 5,000 rows a run, past PARQUET_MIN_ROWS, so each run's part is spliced
    sc = {"duration": "10s", "links": {"l": {"from": "a", "to": "b", "rate": "10Mbit", "delay": "10ms"}},
          "traffic": [{"kind": "video", "name": "v", "from": "a", "to": "b", "rate": "4Mbit", "mode": "paced"}]}
    sw = sweep.from_dict({"sweep": {"name": "lazy", "seed": 1, "replications": 2,
                                    "vary": {"links.l.delay": ["5ms", "20ms"]}}, "scenario": sc})
    fresh = sweep.run(sw, tmp_path / "out", jobs=1, progress=False)  # runs made here: the tables in memory
    in_memory = summary.summarize(fresh)
    assert "media_packets" not in fresh._pd  # only six columns converted, and not kept
    res = sweep.run(sw, tmp_path / "out", jobs=1, progress=False)  # every run reused: the tables are files
    assert isinstance(res.arrow, LazyTables) and "media_packets" not in res.arrow._t  # still in its file
    assert res.arrow.read_columns("media_packets", summary.MEDIA_COLUMNS).num_rows == 4 * 5000
    lazy = summary.summarize(res)
    assert "media_packets" not in res.arrow._t and "media_packets" not in res._pd  # read, not kept
    res["media_packets"]  # now loaded whole: the ordinary path
    whole = _json.dumps(summary.summarize(res), sort_keys=True)
    assert _json.dumps(lazy, sort_keys=True) == whole and _json.dumps(in_memory, sort_keys=True) == whole
    assert [p["media"][0]["packets"] for p in lazy["points"]] == [10000, 10000]


def test_a_sweeps_points_at_once_equal_each_point_alone(tmp_path):
    """The sweep summary computes every point's media and TCP rows in one pass (metrics grouped
    by `point`); it must give exactly what each point computed alone gives (the per-point path a
    single run still takes), on a sweep with replications, several points, audio and web flows."""
    import jitterlab

    p = run_cli("sweep", str(ROOT / "scenarios" / "sweeps" / "web-iw.toml"), "--out", str(tmp_path / "s"), "--jobs", "1")
    assert p.returncode == 0, p.stderr
    t = jitterlab.load(tmp_path / "s")
    got = summary.summarize(t)
    runs, media, tcp = t["runs"], t["media_packets"], t["tcp_flows"]
    names = {int(a): str(b) for a, b in zip(t["flows"]["flow_id"], t["flows"]["name"])}
    alone = [{"params": params, "runs": int(len(r)),
              "media": summary._media(media, r, names, got["window"], summary.JBS_MS),
              "tcp": summary._tcp(tcp, r)} for params, r in summary._points(runs)]
    assert len(alone) == 8 and all(pt["runs"] == 2 and pt["media"] and pt["tcp"] for pt in alone)
    assert json.dumps(got["points"], sort_keys=True, default=str) == json.dumps(alone, sort_keys=True, default=str)
