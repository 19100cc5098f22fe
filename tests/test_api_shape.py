"""One API shape: simulate, analyze, testbed and sweep return the same result type
(`jitterlab.Tables`: Arrow tables with pandas views), and the tables of every source share one
Arrow schema, so they concatenate with `pyarrow.concat_tables` without casting."""
from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import jitterlab
from conftest import ROOT, run_cli

SCENARIO = ROOT / "scenarios" / "audio-bulk-access.toml"


@pytest.fixture(scope="module")
def sim_and_capture(tmp_path_factory):
    d = tmp_path_factory.mktemp("shape")
    sim = jitterlab.simulate(SCENARIO, seed=2, overrides={"output.pcap": ["server", "client"]}, pcap_dir=d)
    cap = jitterlab.analyze(sim.pcap["server"], sim.pcap["client"])
    return sim, cap


def _shared_types_equal(a: pa.Schema, b: pa.Schema) -> None:
    for name in set(a.names) & set(b.names):
        assert a.field(name).type == b.field(name).type, (name, a.field(name).type, b.field(name).type)


def test_every_source_returns_tables(sim_and_capture, tmp_path):
    sim, cap = sim_and_capture
    assert isinstance(sim, jitterlab.Tables) and isinstance(cap, jitterlab.Tables)
    assert (sim.source, cap.source) == ("sim", "capture")
    sw = jitterlab.sweep({"sweep": {"name": "s", "scenario": str(SCENARIO), "replications": 2}}, tmp_path / "sw", jobs=1, progress=False)
    assert isinstance(sw, jitterlab.Tables) and sw.source == "sweep" and len(sw["runs"]) == 2
    for res in (sim, cap, sw):
        # the pandas view and the Arrow view are the same table
        assert res["media_packets"] is res.media_packets
        assert len(res["media_packets"]) == res.arrow["media_packets"].num_rows
        assert str(res["media_packets"]["recv_ns"].dtype) == "Int64"
        assert "media_packets" in res and set(res) == set(res.arrow)
    jitterlab.sim.write(sim, tmp_path / "out")
    back = jitterlab.load(tmp_path / "out")
    assert back.source == "sim"
    pd.testing.assert_frame_equal(back["media_packets"], sim["media_packets"])


def test_simulate_and_analyze_tables_concatenate_without_casting(sim_and_capture, tmp_path):
    sim, cap = sim_and_capture
    # media_packets: identical schemas, so a plain concat works
    both = pa.concat_tables([sim.arrow["media_packets"], cap.arrow["media_packets"]])
    assert both.num_rows == 2 * sim.arrow["media_packets"].num_rows  # the capture is the sim's own tap
    assert both.schema.field("lost_where").type == pa.string()
    # tables with source-specific extra columns: same types where shared; concat adds nulls only
    for name in ("tcp_flows", "runs"):
        _shared_types_equal(sim.arrow[name].schema, cap.arrow[name].schema)
        pa.concat_tables([sim.arrow[name], cap.arrow[name]], promote_options="default")
    # and as written to disk by the two commands
    jitterlab.sim.write(sim, tmp_path / "s")
    jitterlab.capture.write(cap, tmp_path / "c")
    for name in ("media_packets", "tcp_flows", "runs"):
        a, b = pq.read_table(tmp_path / "s" / f"{name}.parquet"), pq.read_table(tmp_path / "c" / f"{name}.parquet")
        _shared_types_equal(a.schema, b.schema)
        pa.concat_tables([a, b], promote_options="default")


@pytest.mark.realtime
def test_testbed_tables_concatenate_with_the_simulators(sim_and_capture, tmp_path):
    import test_testbed_runs

    if test_testbed_runs._reason:
        pytest.skip(test_testbed_runs._reason)
    from jitterlab import testbed

    sim, _ = sim_and_capture
    tb = testbed.run(ROOT / "scenarios" / "testbed" / "audio-bulk.toml", out=tmp_path / "tb", overrides={"duration": "4s"})
    assert isinstance(tb, jitterlab.Tables) and tb.source == "testbed"
    pa.concat_tables([sim.arrow["media_packets"], tb.arrow["media_packets"]])
    for name in ("tcp_flows", "runs", "queue_samples"):
        _shared_types_equal(sim.arrow[name].schema, tb.arrow[name].schema)
        pa.concat_tables([sim.arrow[name], tb.arrow[name]], promote_options="default")
    # and `jitterlab report` reads a testbed output like any other
    testbed.write(tb, tmp_path / "tb")
    assert json.loads((tmp_path / "tb" / "manifest.json").read_text())["provenance"]["seeds"] == [1]
    run_cli("report", str(tmp_path / "tb"), "--out", str(tmp_path / "rep"), check=True)
    s = pd.read_csv(tmp_path / "rep" / "summary.csv")
    assert len(s) == 1 and s.tcp_flows[0] == 1 and s.runs[0] == 1
