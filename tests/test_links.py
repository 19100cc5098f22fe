"""Link capacities from Python: trace files, the cellular model, `jitterlab trace generate`, the
expanded scenario and the opportunities a channel runs on."""
import json
from pathlib import Path

import pandas as pd
import pytest

from jitterlab import ScenarioError, _native, simulate
from jitterlab import scenario as scn
from conftest import run_cli, umts_or_shipped


MODEL = {"mean_rate": "3Mbit", "share": 0.4, "bler": 0.2}


def access(down: dict) -> dict:
    return {
        "name": "cell",
        "duration": "12s",
        "access": {"server": "server", "router": "rnc", "client": "mobile", "core_rate": "100Mbit", "core_delay": "5ms",
                   "down_delay": "10ms", "down_queue": {"kind": "droptail", "limit": "500pkt"}, **down, "up_rate": "1Mbit"},
        "traffic": [{"kind": "audio", "from": "server", "to": "mobile"},
                    {"kind": "bulk", "from": "server", "to": "mobile", "size": "2MB", "start": "4s"}],
    }


def test_simulation_over_the_model_equals_simulation_over_its_generated_trace(tmp_path):
    model = tmp_path / "model.toml"
    model.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in MODEL.items()))
    out = tmp_path / "cell.down"
    p = run_cli("trace", "generate", str(model), "--duration", "30s", "--seed", "5", "--out", str(out))
    assert p.returncode == 0, p.stderr
    stamps = [int(x) for x in out.read_text().split()]
    assert stamps == sorted(stamps) and stamps[-1] >= 29_000
    a = simulate(access({"down_cellular": MODEL}), seed=5)
    b = simulate(access({"down_trace": str(out)}), seed=5)
    pd.testing.assert_frame_equal(a.media_packets, b.media_packets)
    pd.testing.assert_frame_equal(a.tcp_flows, b.tcp_flows)
    ch = a.channels.set_index("name")
    assert int(ch.loc["bottleneck", "rate_bps"]) == 3_000_000  # the model's mean, not a dummy
    # A different seed is a different channel.
    c = simulate(access({"down_cellular": MODEL}), seed=6)
    assert not a.media_packets.recv_ns.equals(c.media_packets.recv_ns)


def test_channel_opportunities_are_what_the_run_uses():
    sc = access({"down_cellular": MODEL})
    stamps, period = _native.channel_opportunities(scn.to_json(sc), 5, "bottleneck")
    gen, mean = _native.cellular_trace(json.dumps(MODEL), "22s", 5, "bottleneck")  # 12 s + 10 s margin
    assert stamps == gen and period == gen[-1] and mean == 3e6
    with pytest.raises(ScenarioError, match="fixed rate"):
        _native.channel_opportunities(scn.to_json(sc), 5, "core")


def test_expand_gives_base_units_for_every_direction(tmp_path):
    tr = tmp_path / "t.down"
    tr.write_text("1\n1\n4\n")
    sc = {
        "duration": "1s",
        "links": {"l": {"from": "a", "to": "b", "delay": "3ms", "trace": str(tr),
                        "jitter": {"dist": "uniform", "min": "1ms", "max": "2ms"}, "loss": 0.01,
                        "reverse": {"rate": "2Mbit", "overhead": "14B"}}},
        "traffic": [{"kind": "audio", "from": "a", "to": "b", "interval": "20ms"}],
    }
    e = scn.expand(sc)
    assert e["schema"] == 1 and e["duration_ns"] == 1_000_000_000 and e["nodes"] == ["a", "b"]
    f, r = e["links"][0]["forward"], e["links"][0]["reverse"]
    assert f["capacity"] == {"kind": "trace", "path": str(tr), "opportunities_ms": [1, 1, 4], "period_ms": 4,
                             "mean_bps": 3 * 1504 * 8 / 0.004}
    assert f["delay_ns"] == 3_000_000 and f["loss"] == 0.01 and f["reorder"] is False
    assert f["jitter"] == {"dist": "uniform", "min_ns": 1_000_000, "max_ns": 2_000_000}
    assert f["queue"] == {"kind": "droptail", "limit_pkts": 1000}
    assert r["capacity"] == {"kind": "rate", "bps": 2_000_000, "overhead_bytes": 14}
    assert r["delay_ns"] == 3_000_000 and r["jitter"] is None
    assert e["traffic"][0]["interval_ns"] == 20_000_000


@pytest.mark.parametrize("links, message", [
    ({"rate": "1Mbit", "trace": "BAD"}, "links.l.trace: give one capacity: links.l.rate and links.l.trace are both set"),
    ({"trace": "missing.trace"}, r"links.l.trace: .*missing.trace: cannot read trace file"),
    ({"cellular": {"share": 2}}, r"links.l.cellular.share: must be in \(0, 1\]"),
    ({"trace": "BAD"}, r"links.l.trace: .*bad.trace line 3: expected a whole number of milliseconds"),
    ({"trace": "BIN"}, r"links.l.trace: .*bin.trace: trace file is not UTF-8 text: invalid byte 0xff at byte offset 2"),
])
def test_link_errors_name_the_users_key(tmp_path, links, message):
    (tmp_path / "bad.trace").write_text("1\n2\nthree\n")
    (tmp_path / "bin.trace").write_bytes(b"1\n\xff\xfe\n")
    links = {k: (str(tmp_path / "bad.trace") if v == "BAD" else str(tmp_path / "bin.trace") if v == "BIN" else v) for k, v in links.items()}
    sc = {"duration": "1s", "links": {"l": {"from": "a", "to": "b", "delay": "1ms", **links}}}
    with pytest.raises(ScenarioError, match=message) as ei:
        simulate(sc)
    assert "trace_data" not in str(ei.value)


def test_trace_generate_errors_are_one_line(tmp_path):
    model = tmp_path / "m.toml"
    model.write_text("share = 0\n")
    p = run_cli("trace", "generate", str(model), "--duration", "10s", "--out", str(tmp_path / "x"))
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "share: must be in (0, 1]" in p.stderr
    model.write_text("colour = 1\n")
    p = run_cli("trace", "generate", str(model), "--duration", "10s", "--out", str(tmp_path / "x"))
    assert p.returncode == 2 and "colour: unknown key" in p.stderr
    model.write_text("")
    p = run_cli("trace", "generate", str(model), "--duration", "10", "--out", str(tmp_path / "x"))
    assert p.returncode == 2 and "--duration: a duration needs a unit" in p.stderr
    assert not (tmp_path / "x").exists()


def test_umts_trace_runs_with_its_mean_rate_reported():
    f = umts_or_shipped()  # Mahimahi's UMTS trace from ../shared, else the shipped one
    r = simulate(access({"down_trace": str(f.resolve())}), seed=1)
    n = sum(1 for line in f.read_text().split() if line.strip())
    period = int(f.read_text().split()[-1])
    assert int(r.channels.set_index("name").loc["bottleneck", "rate_bps"]) == round(n * 1504 * 8 / (period / 1000))
    assert r.media_packets.recv_ns.notna().mean() > 0.9


def test_a_device_is_not_read_as_a_trace():
    sc = {"duration": "1s", "links": {"l": {"from": "a", "to": "b", "delay": "1ms", "trace": "/dev/zero"}}}
    with pytest.raises(ScenarioError, match=r"links.l.trace: /dev/zero: is a device, expected a trace file \(a regular file\)"):
        simulate(sc)
