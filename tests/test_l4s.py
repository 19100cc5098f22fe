"""The shipped L4S scenarios reproduce the physics crates/sim/tests/l4s.rs asserts (docs/l4s.md),
and the L4S keys fail as user errors."""
import numpy as np
import pytest

from jitterlab import ScenarioError, simulate


def test_dctcp_step_scenario_holds_queue_at_step(root):
    # K = 1 ms at 100 Mbit/s = 8.33 packets; the DCTCP paper's sawtooth: Q_max = K + 1 = 9.33,
    # amplitude A = 0.5*sqrt(2*(84.2 + 8.33)) = 6.8, mean ~ Q_max - A/2 = 5.9 packets, never empty.
    r = simulate(root / "scenarios/l4s-dctcp-step.toml", seed=1)
    f = r.tcp_flows
    assert list(f.cc) == ["dctcp"]
    assert int(f.retransmits.iloc[0]) == 0
    q = r.queue_samples
    b = q[q.t_ns > 2_000_000_000].backlog_pkts.to_numpy(dtype=float)
    assert abs(b.mean() - 5.9) < 1.5, b.mean()
    assert (b == 0).mean() < 0.01
    assert np.percentile(b, 99) <= 11


def test_coupled_scenario_rates_roughly_equal(root):
    # RFC 9332 §2.1 with k = 2: CUBIC (Reno-friendly) and DCTCP windows 1.22/p' and 1/p'; with
    # the C queue's extra delay the expected rate ratio is ~1.0 (docs/l4s.md).
    r = simulate(root / "scenarios/l4s-coupled.toml", seed=1)
    f = r.tcp_flows
    assert list(f.cc) == ["cubic", "dctcp"]
    ratio = float(f.bytes_acked.iloc[0]) / float(f.bytes_acked.iloc[1])
    assert 0.5 <= ratio <= 2.0, ratio
    assert int(f.retransmits.iloc[1]) == 0, "the L4S flow sees marks, not drops"
    assert int(f.retransmits.iloc[0]) > 0, "the Not-ECT classic flow sees drops"


@pytest.mark.parametrize("queue,key", [
    ({"kind": "dualpi2", "coupling_factor": 0}, "coupling_factor"),
    ({"kind": "dualpi2", "step_thresh": "3kB"}, "step_thresh"),
])
def test_dualpi2_user_errors_name_the_key(queue, key):
    sc = {"name": "x", "duration": "1s",
          "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "1ms", "queue": queue}},
          "traffic": [{"kind": "audio", "from": "a", "to": "b"}]}
    with pytest.raises(ScenarioError, match=f"links.l.queue.{key}"):
        simulate(sc)


def test_ecn_key_values():
    base = {"name": "x", "duration": "1s",
            "links": {"l": {"from": "a", "to": "b", "rate": "10Mbit", "delay": "1ms", "queue": {"kind": "dualpi2"}}}}
    bad = dict(base, traffic=[{"kind": "bulk", "from": "a", "to": "b", "size": "10kB", "ecn": "ect2"}])
    with pytest.raises(ScenarioError, match="ecn"):
        simulate(bad)
    ok = dict(base, traffic=[{"kind": "bulk", "from": "a", "to": "b", "size": "10kB", "cc": "reno", "ecn": "l4s"}])
    assert len(simulate(ok).tcp_flows) == 1
