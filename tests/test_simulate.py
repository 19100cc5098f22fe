"""The simulator from Python and the CLI: tables, outputs, determinism, user errors."""
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import jitterlab
from jitterlab import ScenarioError, simulate
from conftest import run_cli

ONE_LINK = {
    "name": "one-link",
    "duration": "2s",
    "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms", "queue": {"kind": "droptail", "limit": "50pkt"}}},
    "traffic": [{"kind": "audio", "from": "a", "to": "b"}],
}


def test_tables_follow_design_columns():
    r = simulate(ONE_LINK, seed=3, run_id=7)
    assert list(r.media_packets.columns) == ["run_id", "flow_id", "seq", "send_ns", "recv_ns", "size", "lost_where", "ce"]
    assert r.media_packets["recv_ns"].dtype == pd.Int64Dtype()
    assert (r.media_packets.run_id == 7).all()
    # 80 B at 1 Mbit/s = 640 us, + 10 ms
    owd = (r.media_packets.recv_ns - r.media_packets.send_ns).astype("int64")
    assert (owd == 10_640_000).all()
    runs = r.runs.iloc[0]
    assert runs.seed == 3 and runs.source == "sim" and runs.scenario == "one-link"
    assert pd.isna(runs.tcp_start_ns)
    for col in ["run_id", "t_ns", "queue", "backlog_pkts", "backlog_bytes", "drops", "marks"]:
        assert col in r.queue_samples.columns
    for col in ["run_id", "flow_id", "role", "iw", "syn_ns", "first_data_ns", "end_ns", "bytes", "segments_sent", "retransmits", "drops", "ecn_marks"]:
        assert col in r.tcp_flows.columns


def test_lost_where_names_the_queue():
    sc = json.loads(json.dumps(ONE_LINK))
    sc["traffic"][0].update({"size": "1000B", "interval": "4ms"})  # 2 Mbit/s into 1 Mbit/s
    r = simulate(sc, seed=1)
    lost = r.media_packets[r.media_packets.lost_where.notna()]
    assert len(lost) > 0 and set(lost.lost_where) == {"l"}
    assert lost.recv_ns.isna().all()
    t = r.totals
    assert t["sent_bytes"] == t["delivered_bytes"] + t["dropped_bytes"] + t["in_flight_bytes"]


def test_same_seed_same_tables(root):
    a = simulate(root / "scenarios/audio-bulk-access.toml", seed=5)
    b = simulate(root / "scenarios/audio-bulk-access.toml", seed=5)
    c = simulate(root / "scenarios/audio-bulk-access.toml", seed=6)
    pd.testing.assert_frame_equal(a.media_packets, b.media_packets)
    pd.testing.assert_frame_equal(a.queue_samples, b.queue_samples)
    assert not a.media_packets.recv_ns.equals(c.media_packets.recv_ns)


def test_overrides_and_trace_files(tmp_path):
    trace = tmp_path / "link.trace"
    trace.write_text("\n".join(str(i) for i in range(1, 11)) + "\n")
    sc = {
        "duration": "100ms",
        "links": {"l": {"from": "a", "to": "b", "delay": "0ms", "trace": "link.trace"}},
        "traffic": [{"kind": "audio", "from": "a", "to": "b", "interval": "20ms"}],
    }
    f = tmp_path / "s.toml"
    f.write_text(
        'duration = "100ms"\n[links.l]\nfrom = "a"\nto = "b"\ndelay = "0ms"\ntrace = "link.trace"\n'
        '[[traffic]]\nkind = "audio"\nfrom = "a"\nto = "b"\n'
    )
    r = simulate(f)
    # Opportunities at 1..10 ms, looping with period 10 ms (so also at 20, 21, .. ms). As in
    # Mahimahi, a packet sent at ms 20 finds the 20 ms opportunity already used (rationalize(now)
    # runs before the enqueue) and leaves with the 21 ms one.
    assert list(r.media_packets.recv_ns.astype("int64")) == [1_000_000, 21_000_000, 41_000_000, 61_000_000, 81_000_000]
    assert int(r.channels.set_index("name").loc["l", "rate_bps"]) == 12_032_000  # 10 × 1504 B × 8 / 10 ms
    r2 = simulate(f, overrides={"links.l.delay": "5ms"})
    assert int(r2.media_packets.recv_ns.iloc[0]) == 6_000_000
    f.with_name("bad.trace").write_text("5\n3\n")
    with pytest.raises(ScenarioError, match=r"links\.l\.trace: .*bad\.trace line 2: timestamps must not decrease"):
        simulate(f, overrides={"links.l.trace": str(f.with_name("bad.trace"))})
    with pytest.raises(ScenarioError, match="cannot read trace file"):
        simulate({**sc, "links": {"l": {**sc["links"]["l"], "trace": "missing.trace"}}})


@pytest.mark.parametrize(
    "patch, message",
    [
        ({"links.l.rate": "-2Mbit"}, 'links.l.rate: must be > 0, got "-2Mbit"'),
        ({"links.l.delay": 5}, "links.l.delay: expected a duration as a string with a unit, got 5"),
        ({"links.l.queue.limit": "lots"}, "links.l.queue.limit: expected a size"),
        ({"traffic[0].kind": "telepathy"}, "traffic[0].kind: must be one of"),
        ({"duration": "0s"}, "duration: must be > 0"),
        ({"links.l.jitter": {"dist": "normal", "mean": "1ms"}}, "links.l.jitter.sd: missing"),
    ],
)
def test_scenario_errors_name_the_key(patch, message):
    with pytest.raises(ScenarioError) as e:
        simulate(ONE_LINK, overrides=patch)
    assert message in str(e.value)


def test_toml_syntax_error_is_a_scenario_error(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('duration = "1s"\n[links.l\n')
    with pytest.raises(ScenarioError, match="not valid TOML"):
        simulate(f)


def test_cli_simulate_writes_parquet_and_manifest(tmp_path, root):
    out = tmp_path / "out"
    p = run_cli("simulate", str(root / "scenarios/dumbbell-video.toml"), "--seed", "9", "--out", str(out), check=True)
    assert "events" in p.stderr
    man = json.loads((out / "manifest.json").read_text())
    assert man["format_version"] == 1 and man["seed"] == 9 and man["scenario"]["name"] == "dumbbell-video"
    assert man["jitterlab_version"] == jitterlab.__version__
    media = pq.read_table(out / "media_packets.parquet").to_pandas()
    assert len(media) == 30 * 25 * 5  # 30 s of 25 frames/s x 5 packets
    qs = pq.read_table(out / "queue_samples.parquet").to_pandas()
    assert set(qs.queue) == {"bottleneck"}
    # the queue never holds more than its 50-packet limit
    assert qs.backlog_pkts.max() <= 50


def test_cli_user_errors_are_one_line(tmp_path, root):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "1s"\n[links.l]\nfrom = "a"\nto = "b"\nrate = "fast"\ndelay = "1ms"\n')
    p = run_cli("simulate", str(bad), "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0
    assert "links.l.rate" in p.stderr
    p = run_cli("simulate", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o"))
    assert p.returncode == 2 and "no such scenario file" in p.stderr
    p = run_cli("simulate", str(root / "scenarios/dumbbell-video.toml"), "--out", str(tmp_path / "o"), "--set", "dumbbell.pairs=0")
    assert p.returncode == 2 and "dumbbell.pairs: must be between 1 and 10000, got 0" in p.stderr


def test_every_shipped_scenario_loads_and_runs(root):
    files = sorted((root / "scenarios").glob("*.toml"))
    assert files
    for f in files:
        r = simulate(f, overrides={"duration": "1s"})
        assert r.totals["events"] > 0, f


def test_tcp_series_for_plots():
    """cwnd after the handshake is IW·MSS and grows by one MSS per ACK in slow start (no loss)."""
    sc = {
        "duration": "3s",
        "links": {"l": {"from": "a", "to": "b", "rate": "10Mbit", "delay": "10ms", "queue": {"kind": "droptail", "limit": "1000pkt"}}},
        "traffic": [{"kind": "bulk", "from": "a", "to": "b", "size": "200kB", "iw": 10, "mss": "1000B", "cc": "reno",
                     "delack": "off", "series": True, "timestamps": False}],  # SMSS = the whole 1000 B
    }
    r = simulate(sc, seed=1)
    s = r.tcp_series
    assert list(s.columns) == ["run_id", "t_ns", "flow_id", "cwnd", "ssthresh", "srtt_ns", "inflight"]
    assert len(s) > 10 and s.t_ns.is_monotonic_increasing
    assert s.cwnd.iloc[0] in (10_000, 11_000)
    assert s.ssthresh.isna().all()  # never set: no loss
    grow = s.cwnd.diff().dropna()
    assert set(grow.unique()) <= {0, 1000}
    assert s.srtt_ns.dropna().min() >= 20_000_000  # at least the 20 ms propagation RTT
    assert r.tcp_flows.end_ns.notna().all()


def test_core_tables_arrive_as_arrow_batches_with_numpy_era_layout():
    """The core hands each table to pyarrow through the Arrow C data interface (`ArrowBatch`,
    `pyarrow.record_batch(obj)`), its vectors moved, not copied. The layout is what the numpy
    path made, so every stored byte stays the same: every field nullable; a validity bitmap only
    on a column that has a null; a null's slot keeps the core's value (i64::MIN for a lost
    packet's recv_ns, 2^62 - 1 for an unset ssthresh); run_id a column of every table. Each
    batch is exported once; a capsule dropped without import is released by us."""
    import pyarrow as pa

    from jitterlab import _native, scenario, sim

    sc = json.loads(json.dumps(ONE_LINK))
    sc["traffic"][0].update({"size": "1000B", "interval": "4ms"})  # 2 Mbit/s into 1 Mbit/s: drops
    sc["traffic"].append({"kind": "bulk", "from": "a", "to": "b", "size": "50MB", "series": True})  # never ends in 2 s
    js = scenario.to_json(scenario.load(sc))
    raw = _native.simulate_tables(js, 1, 9)
    assert set(sim.CORE_TABLES) <= set(raw) and raw["channel_names"] == ["l", "l.rev"]
    media = pa.record_batch(raw["media_packets"])
    with pytest.raises(ValueError, match="exported already"):
        raw["media_packets"].__arrow_c_array__()
    assert media.schema.names == ["run_id", "flow_id", "seq", "send_ns", "recv_ns", "size", "lost_where", "ce"]
    assert [f.type for f in media.schema] == [pa.int64()] * 6 + [pa.string(), pa.bool_()]
    assert all(f.nullable for f in media.schema)
    assert media.num_rows == 500  # 2 s / 4 ms
    assert media.column("run_id").to_pylist() == [9] * 500 and media.column("seq").to_pylist() == list(range(500))
    unreceived = np.array(media.column("recv_ns").is_null().to_pylist())
    dropped = np.array(media.column("lost_where").is_valid().to_pylist())
    # dropped at the queue, or still on the way at the end (50 queued + one on the wire at most)
    assert dropped.sum() > 0 and (unreceived[dropped]).all() and 0 < unreceived.sum() - dropped.sum() <= 51
    values = np.frombuffer(media.column("recv_ns").buffers()[1], dtype=np.int64)[:500]
    assert (values[unreceived] == np.iinfo(np.int64).min).all()  # the core's NULL_NS, kept under the null
    for c in ("run_id", "flow_id", "seq", "send_ns", "size", "ce"):
        assert media.column(c).buffers()[0] is None, c  # no nulls: no bitmap (as numpy's path)
    assert media.column("ce").to_pylist() == [False] * 500
    series = pa.record_batch(raw["tcp_series"])
    ss = series.column("ssthresh")
    unset = np.array(ss.is_null().to_pylist())
    assert unset.any() and (np.frombuffer(ss.buffers()[1], dtype=np.int64)[:len(ss)][unset] == 2**62 - 1).all()
    flows = pa.record_batch(raw["tcp_flows"])
    assert flows.column("end_ns").null_count == 1 and flows.column("end_ns").buffers()[0] is not None
    for c in ("syn_ns", "first_data_ns"):  # nullable columns, no null in this run: no bitmap
        assert flows.column(c).null_count == 0 and flows.column(c).buffers()[0] is None, c
    assert flows.column("role").to_pylist() == ["bulk"] and flows.column("cc").to_pylist() == ["cubic"]
    # the same tables as the whole path gives
    r = simulate(sc, seed=1, run_id=9)
    assert pa.Table.from_batches([media]).equals(r.arrow["media_packets"])
    # a schema request is refused; capsules never imported are released with nothing leaked
    raw2 = _native.simulate_tables(js, 1, 9)
    with pytest.raises(ValueError, match="requested schema"):
        raw2["queue_samples"].__arrow_c_array__(pa.schema([]))
    for _ in range(3):
        s, a = _native.simulate_tables(js, 1, 9)["media_packets"].__arrow_c_array__()
        del s, a


def test_a_sweeps_run_keeps_its_tables_native_with_the_same_layout():
    """`sim.simulate_run` (a sweep's run) keeps the core's tables native (`_native.NativeTable`)
    and builds its `runs` row natively: read by pyarrow they equal `simulate`'s tables, schema
    included, with the same buffers where a null is (a null TCP time keeps the core's NULL_NS in
    its slot, as the stored IPC image holds it); a value pyarrow alone types (a numpy scalar) makes
    the row with pyarrow; `nbytes` counts the buffers as pyarrow does."""
    import pyarrow as pa

    from jitterlab import _native, scenario, sim

    params = {"x": 1.5, "y": "s", "z": True, "n": None, "d": {"b": 2, "a": 1}, "big": 2**63 - 1, "l": [1, "a"]}
    base = scenario.load(ONE_LINK)  # no TCP: tcp_start_ns and tcp_end_ns null
    r = sim.simulate_run(base, {}, 5, 3, params)
    assert all(isinstance(r.arrow.held(n), _native.NativeTable) for n in sim.Result.NAMES)
    assert r.arrow.held("runs").to_pylist("tcp_start_ns") == [None] and r.arrow.held("runs").to_pylist("d") == ['{"a": 1, "b": 2}']
    ref = simulate(ONE_LINK, seed=5, run_id=3, params=params)
    assert [r.arrow.held(n).nbytes for n in sim.Result.NAMES] == [ref.arrow[n].get_total_buffer_size() for n in sim.Result.NAMES]
    assert list(r.arrow) == list(ref.arrow) == list(sim.Result.NAMES)
    for n in sim.Result.NAMES:
        assert r.arrow[n].equals(ref.arrow[n], check_metadata=True), n
        assert r.arrow[n].schema.equals(ref.arrow[n].schema, check_metadata=True), n
    runs = r.arrow["runs"]
    assert [str(t) for t in runs.schema.types][-7:] == ["double", "string", "bool", "null", "string", "int64", "string"]
    start = runs.column("tcp_start_ns").chunk(0)
    assert start.null_count == 1 and np.frombuffer(start.buffers()[1], dtype=np.int64)[0] == np.iinfo(np.int64).min
    assert isinstance(sim.simulate_run(base, {}, 5, 3, {"x": np.int64(4)}).arrow.held("runs"), pa.Table)
    # pickled (sent to another process), the tables held native travel as Arrow tables
    import pickle

    back = pickle.loads(pickle.dumps(sim.simulate_run(base, {}, 5, 3, params)))
    assert all(back.arrow[n].equals(ref.arrow[n]) for n in sim.Result.NAMES)


def test_manifest_and_report_record_each_tcp_entrys_stack_and_overrides(tmp_path, root):
    """The manifest's provenance names every TCP entry's stack profile and the switches the entry
    overrides (with the values the run used); the report's provenance table shows them."""
    out = tmp_path / "out"
    run_cli("simulate", str(root / "scenarios/audio-bulk-access.toml"), "--out", str(out),
            "--set", "traffic[1].tsq=false", "--set", "traffic[1].iw=3", check=True)
    man = json.loads((out / "manifest.json").read_text())
    stacks = man["provenance"]["tcp_stacks"]
    assert stacks == ["bulk: linux-6.18 with iw = 3, cc = cubic, tsq = False"], stacks
    sc = {"name": "s", "duration": "1s", "stack": "linux-3.2",
          "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "10ms", "up_rate": "1Mbit", "up_delay": "10ms"},
          "traffic": [{"kind": "web", "name": "page", "from": "server", "to": "client", "size": "10kB"}]}
    from jitterlab import provenance
    assert provenance.tcp_stacks(sc) == ["page: linux-3.2"]
    rep = tmp_path / "rep"
    run_cli("report", str(out), "--out", str(rep), check=True)
    html = (rep / "report.html").read_text()
    assert "TCP stacks (profile and overrides)" in html and "bulk: linux-6.18 with" in html
