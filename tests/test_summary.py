"""The answer on the terminal: `simulate` and `sweep` end with a summary (per media flow OWD median
and p99, loss, best-JB MOS; per TCP role goodput and completion), and `--json` prints the same as
one JSON document on standard output with nothing else there."""
from __future__ import annotations

import json
import math

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


def test_the_summary_converts_only_the_six_media_columns_it_uses(tmp_path):
    """A sweep's media rows, in memory or still in OUT/media_packets.parquet (spliced, never
    decoded), are read for the summary by the six columns its metrics use (and not kept, nor
    converted to pandas): the same summary as from the whole table."""
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
    assert "media_packets" not in fresh._pd  # nothing converted to pandas
    res = sweep.run(sw, tmp_path / "out", jobs=1, progress=False)  # every run reused: the tables are files
    assert isinstance(res.arrow, LazyTables) and "media_packets" not in res.arrow._t  # still in its file
    assert res.arrow.read_columns("media_packets", summary.MEDIA_COLUMNS).num_rows == 4 * 5000
    lazy = summary.summarize(res)
    assert "media_packets" not in res.arrow._t and "media_packets" not in res._pd  # read, not kept
    res["media_packets"]  # now loaded whole: the ordinary path
    whole = _json.dumps(summary.summarize(res), sort_keys=True)
    assert _json.dumps(lazy, sort_keys=True) == whole and _json.dumps(in_memory, sort_keys=True) == whole
    assert [p["media"][0]["packets"] for p in lazy["points"]] == [10000, 10000]


@pytest.fixture(scope="module")
def web_iw(tmp_path_factory):
    """The web-iw sweep: 8 points x 2 replications, an audio call and web flows, int parameters."""
    out = tmp_path_factory.mktemp("web-iw") / "s"
    p = run_cli("sweep", str(ROOT / "scenarios" / "sweeps" / "web-iw.toml"), "--out", str(out), "--jobs", "1", "--json")
    assert p.returncode == 0, p.stderr
    return out, json.loads(p.stdout)


def _json(s: object) -> str:
    return json.dumps(s, default=str)  # as `--json` prints it


def test_a_sweeps_summary_is_the_pandas_computation_byte_for_byte(web_iw, monkeypatch):
    """The summary is computed from the Arrow tables without pandas (issue 31); it must print
    what the pandas computation it replaced printed (tests/_summary_pandas.py, kept verbatim), byte
    for byte, on a sweep with replications (pooled OWD percentiles, MOS means over runs, TCP
    medians over runs), and what that computation gave point by point (its per-point path)."""
    import jitterlab
    import _summary_pandas as ref

    out, doc = web_iw
    t = jitterlab.load(out)
    got = summary.summarize(t)
    assert got["runs"] == 16 and len(got["points"]) == 8
    assert all(pt["runs"] == 2 and pt["media"] and pt["tcp"] for pt in got["points"])
    assert all(isinstance(pt["params"][k], int) for pt in got["points"] for k in ("point", "iw", "traffic[1].flows"))
    want = _json(ref.summarize(jitterlab.load(out)))
    assert _json(got) == want
    assert doc == {**doc, **json.loads(_json(got))}  # what the command printed
    # the media rows prepared a few points at a time (a batch per point, per 1000 rows), not at once
    for rows in (1, 1000):
        monkeypatch.setattr(summary, "BATCH_ROWS", rows)
        batches = summary._batches(summary._stretches(t.arrow["media_packets"], t.arrow["runs"])[1], summary._points(t.arrow["runs"])[2])
        assert len(batches) == (8 if rows == 1 else 4) and sum(len(b) for b in batches) == 16
        assert _json(summary.summarize(t)) == want
    runs, media, tcp = t["runs"], t["media_packets"], t["tcp_flows"]
    names = {int(a): str(b) for a, b in zip(t["flows"]["flow_id"], t["flows"]["name"])}
    alone = [{"params": params, "runs": int(len(r)),
              "media": ref._media(media, r, names, got["window"], ref.JBS_MS),
              "tcp": ref._tcp(tcp, r)} for params, r in ref._points(runs)]
    assert _json(got["points"]) == _json(alone)


def test_a_single_runs_summary_is_the_pandas_computation_byte_for_byte():
    """One run (no sweep points), with TCP (overlap window) and audio alone (whole run)."""
    import _summary_pandas as ref

    with_tcp = jitterlab.simulate(str(ROOT / "scenarios" / "audio-bulk-access.toml"), seed=3)
    audio = jitterlab.simulate(LINK, seed=1)
    for r in (with_tcp, audio):
        got = summary.summarize(r)
        assert _json(got) == _json(ref.summarize(r))
    assert summary.summarize(with_tcp)["window"] == "overlap" and summary.summarize(audio)["window"] == "all"


def test_point_labels_keep_what_pandas_showed_for_nulls(web_iw):
    """A parameter column with nulls is labelled as pandas showed it (the summary's JSON kept its
    bytes): an int column with nulls as floats (NaN for the null), a null text as "<NA>", a float
    NaN as NaN; a column that differs between a point's runs is left out."""
    import pyarrow as pa

    import jitterlab
    import _summary_pandas as ref

    out, _ = web_iw
    arrow = dict(jitterlab.load(out).arrow)
    runs = arrow["runs"]
    pt = runs.column("point").to_pylist()
    arrow["runs"] = (runs.append_column("k_int", pa.array([None if p % 2 else p for p in pt], pa.int64()))
                     .append_column("k_text", pa.array([None if p < 4 else f"t{p}" for p in pt], pa.string()))
                     .append_column("k_float", pa.array([None if p == 0 else p / 4 for p in pt], pa.float64()))
                     .append_column("k_bool", pa.array([p > 2 for p in pt], pa.bool_()))
                     .append_column("k_draw", pa.array(range(len(pt)), pa.int64())))  # per run: no label
    got = summary.summarize(jitterlab.Tables(arrow, "sweep"))
    labels = [p["params"] for p in got["points"]]
    assert [lab["k_int"] for lab in labels][:3] == [0.0, labels[1]["k_int"], 2.0] and math.isnan(labels[1]["k_int"])
    assert [lab["k_text"] for lab in labels] == ["<NA>"] * 4 + ["t4", "t5", "t6", "t7"]
    assert math.isnan(labels[0]["k_float"]) and labels[2]["k_float"] == 0.5 and labels[3]["k_bool"] is True
    assert all("k_draw" not in lab for lab in labels)
    assert _json(got) == _json(ref.summarize(jitterlab.Tables(arrow, "sweep")))


def test_mos_means_are_pandas_compensated_sums():
    """The MOS of a point is the mean over its runs, summed as pandas' groupby mean sums (Kahan's
    compensation, row order): 1e16, 1, 1, -1e16 sums to 2 so (mean 0.5), plainly to 0; NaN is
    skipped; a group with nothing is NaN."""
    import numpy as np
    import pandas as pd

    v = np.array([1e16, 1.0, 1.0, -1e16, 0.1, 0.2, 0.3, np.nan, np.nan, 7.0])
    g = np.array([0, 0, 0, 0, 1, 1, 1, 2, 1, 3])
    got = summary._means(v, g, 5)
    assert got[0] == 0.5 and sum(v[:4]) / 4 == 0.0  # the plain sum loses both ones
    # 0.1 + 0.2 + 0.3 compensated is 0.6 (mean 0.19999999999999998); numpy's plain sum gives 0.6000000000000001
    assert got[1] == 0.6 / 3 != np.mean(v[4:7]) and math.isnan(got[2]) and got[3] == 7.0 and math.isnan(got[4])
    rng = np.random.default_rng(1)
    v = rng.normal(3.0, 1e-3, 5000) * rng.choice([1.0, 1e12, 1e-9], 5000)
    g = rng.integers(0, 40, 5000)
    want = pd.Series(v).groupby(g).mean().reindex(range(40)).to_numpy()
    assert np.array_equal(summary._means(v, g, 40), want)


def test_the_summarys_e_model_is_emodel_mos_default():
    import inspect

    from jitterlab import metrics

    sig = inspect.signature(metrics.emodel_mos).parameters
    assert (summary.CODEC, summary.BASE_WINDOW_MS) == (sig["codec"].default, sig["base_window_ms"].default)


def test_the_sweep_command_imports_no_pandas(tmp_path):
    """`jitterlab sweep` (and its closing summary, and `simulate`'s) needs no pandas: importing it
    cost 0.2 s of CPU in every such process (issue 31). Its import is watched in a fresh process,
    with numpy.ma's (~20 ms: np.unique and np.median import it; the summary uses its own)."""
    import subprocess
    import sys

    sc = tmp_path / "a.toml"
    sc.write_text('duration = "2s"\n[links.l]\nfrom = "a"\nto = "b"\nrate = "2Mbit"\ndelay = "5ms"\n'
                  '[[traffic]]\nkind = "audio"\nfrom = "a"\nto = "b"\n'
                  '[[traffic]]\nkind = "bulk"\nfrom = "a"\nto = "b"\nsize = "50kB"\nstart = "0.5s"\n')
    sw = tmp_path / "s.toml"
    sw.write_text(f'[sweep]\nname = "s"\nscenario = "{sc}"\nreplications = 2\n[sweep.vary]\n"links.l.delay" = ["5ms", "20ms"]\n')
    check = ("import sys\nfrom jitterlab.cli import main\nrc = main(sys.argv[1:])\n"
             "heavy = sorted(m for m in ('pandas', 'matplotlib', 'plotly', 'dask', 'scipy', 'numpy.ma') if m in sys.modules)\n"
             "print('HEAVY', heavy, file=sys.stderr)\nsys.exit(rc or (3 if heavy else 0))\n")
    for args in (["sweep", str(sw), "--out", str(tmp_path / "s"), "--jobs", "1", "--quiet"],
                 ["simulate", str(sc), "--out", str(tmp_path / "a")]):
        p = subprocess.run([sys.executable, "-c", check, *args], capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 0 and "HEAVY []" in p.stderr, (args[0], p.stderr[-2000:])
        assert "summary (" in p.stdout  # the summary was printed, computed without them


def test_median_lookup_and_distinct_are_numpys():
    """The summary's own median (np.median imports numpy.ma) and id lookups (a table over a small
    range of ids, a binary search past it) give numpy's answers: medians of odd and even counts,
    ids absent from the keys (-1), negative ids, ids 2^40 apart."""
    import numpy as np

    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 4, 5, 10, 11):
        xs = (rng.normal(size=n) * 10.0 ** rng.integers(-3, 9, n)).tolist()
        assert summary._median(xs) == np.median(xs), xs
    for keys, values in (([5, 3, 9], [3, 3, 9, 4, 5, 10, 2]), ([-2, 1 << 40, 7], [7, 1 << 40, -2, 8, 0])):
        k, v = np.array(keys, dtype=np.int64), np.array(values, dtype=np.int64)
        want = [keys.index(x) if x in keys else -1 for x in values]
        assert summary._lookup(v, k).tolist() == want
        assert summary._distinct(v).tolist() == sorted(set(values))
    assert summary._lookup(np.array([], dtype=np.int64), np.array([1], dtype=np.int64)).tolist() == []


# an audio call and, where enabled, a bulk download over a 2 Mbit/s link with a 50-packet buffer
_MIXED = {"duration": "3s", "links": {"l": {"from": "a", "to": "b", "rate": "2Mbit", "delay": "5ms", "queue": {"kind": "droptail", "limit": "50pkt"}},
                                      "r": {"from": "b", "to": "a", "rate": "2Mbit", "delay": "5ms"}},
          "traffic": [{"kind": "audio", "name": "call", "from": "a", "to": "b"},
                      {"kind": "bulk", "from": "a", "to": "b", "size": "50MB", "start": "0.5s"}]}


@pytest.mark.filterwarnings("ignore::jitterlab.metrics.MetricsWarning")
@pytest.mark.parametrize("enabled, reps, from_parts", [
    ([False, True], 1, True),   # a run without TCP first: every part for the whole run, each point's quantiles in its run
    ([True], 2, True),          # TCP everywhere: the overlap window, OWD values pooled over a point's two runs
    ([True, False], 1, False),  # runs without TCP only after others: their parts lack the whole run; from the rows
])
def test_the_runs_shares_give_the_summary_the_rows_give(tmp_path, monkeypatch, enabled, reps, from_parts):
    """`sweep.run(..., summary=True)` (what `jitterlab sweep` runs): each run computes its share of
    the summary while its rows are in memory and the client keeps none of them; the summary from
    the shares is the one from the rows, byte for byte, or is computed from the rows when a share
    lacks the window the sweep's runs decide."""
    from jitterlab import sweep

    sw = sweep.from_dict({"sweep": {"name": "shares", "seed": 5, "replications": reps,
                                    "vary": {"traffic[1].enabled": enabled, "links.l.delay": ["5ms", "30ms"]}}, "scenario": _MIXED})
    res = sweep.run(sw, tmp_path / "out", jobs=1, progress=False, summary=True)
    parts = res.summary_parts
    assert sorted(parts) == list(range(2 * len(enabled) * reps)) and "media_packets" not in res.arrow._t  # not kept
    assert all(("q" in p) == (reps == 1) and ("owd" in p) == (reps > 1) for p in parts.values())
    from_rows = summary._media
    if from_parts:  # the rows are not read at all
        monkeypatch.setattr(summary, "_media", lambda *a: pytest.fail("read the media rows"))
    got = _json(summary.summarize(res))
    monkeypatch.setattr(summary, "_media", from_rows)
    want = _json(summary.summarize(jitterlab.load(tmp_path / "out")))  # from the rows in the files
    assert got == want
    doc = json.loads(got)
    assert doc["window"] == ("overlap" if all(enabled) else "all") and all(0 < pt["media"][0]["packets"] <= 150 * reps for pt in doc["points"])
    assert len({pt["media"][0]["owd_p99_ms"] for pt in doc["points"]}) > 1  # figures that differ by point
