"""The testbed's scenario -> plan step (no root needed): topology, addresses, delays, refusals."""
import pytest

from jitterlab import ScenarioError
from jitterlab import scenario as scn
from jitterlab.testbed_plan import plan

ACCESS = {
    "name": "t", "duration": "5s",
    "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "10ms",
               "up_rate": "1Mbit", "down_queue": {"kind": "droptail", "limit": "500pkt"}},
    "traffic": [{"kind": "audio", "from": "server", "to": "client"}],
}


def test_access_plan(root):
    p = plan(scn.load(root / "scenarios/testbed/audio-bulk.toml"))
    assert p.nodes == ["server", "router", "client"]
    assert p.delay_router == "router"
    assert p.path_delay_ns("server", "client") == 15_000_000
    assert p.path_delay_ns("client", "server") == 15_000_000
    bn = p.channel("router", "client")
    assert (bn.rate_bps, bn.queue.limit, bn.queue.qdisc()) == (4_000_000, 500, "pfifo")
    assert p.channel("client", "router").rate_bps == 1_000_000
    assert [m.flow_id for m in p.media] == [0] and [f.flow_id for f in p.tcp] == [1]
    assert p.tcp[0].size == 3_000_000 and p.tcp[0].cc == "cubic" and p.tcp[0].iw == 10


def test_web_flows_split_the_size():
    sc = {**ACCESS, "traffic": [*ACCESS["traffic"], {"kind": "web", "from": "server", "to": "client", "size": "372kB", "flows": 6, "iw": 3}]}
    p = plan(sc)
    assert [f.size for f in p.tcp] == [62000] * 6
    assert {f.iw for f in p.tcp} == {3}
    assert len({f.port for f in p.tcp}) == 6


def test_dumbbell_plan():
    sc = {"duration": "5s", "dumbbell": {"pairs": 2, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms",
                                         "queue": {"kind": "droptail", "limit": "50pkt"}, "access_rate": "100Mbit",
                                         "access_delays": ["1ms", "3ms"]},
          "traffic": [{"kind": "video", "from": "s1", "to": "d1", "rate": "1Mbit", "mode": "paced"}]}
    p = plan(sc)
    assert p.path_delay_ns("s1", "d1") == 7_000_000
    assert p.path_delay_ns("s2", "d2") == 11_000_000
    assert p.media[0].per_tick == 5 and p.media[0].spacing_ns == 8_000_000
    assert p.next_hop("s1", p.links[0])[0] == p.links[1].addr("r1")


@pytest.mark.parametrize("patch,msg", [
    ({"down_jitter": {"dist": "exponential", "mean": "1ms"}}, "access.down_jitter: the testbed cannot honour"),
    ({"down_loss": 0.01}, "access.down_loss"),
    ({"down_queue": {"kind": "sfq"}}, "access.down_queue.kind"),
    ({"bogus": 1}, "access.bogus: unknown key"),
])
def test_refusals_name_the_key(patch, msg):
    sc = {**ACCESS, "access": {**ACCESS["access"], **patch}}
    with pytest.raises(ScenarioError, match=msg):
        plan(sc)


def test_refuses_generic_links_and_conflicting_iw():
    with pytest.raises(ScenarioError, match="links: the testbed builds"):
        plan({"duration": "1s", "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "1ms"}}})
    sc = {**ACCESS, "traffic": [{"kind": "bulk", "from": "server", "to": "client", "size": "1MB", "iw": 3},
                                {"kind": "bulk", "from": "server", "to": "client", "size": "1MB", "iw": 10}]}
    with pytest.raises(ScenarioError, match="iw"):
        plan(sc)


def test_not_root_refuses_clearly(monkeypatch):
    from jitterlab import testbed
    from jitterlab.testbed_net import TestbedError

    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(TestbedError, match="needs root"):
        testbed.run(ACCESS)


def test_every_shipped_testbed_scenario_plans(root):
    files = sorted((root / "scenarios" / "testbed").glob("*.toml"))
    assert len(files) >= 5
    for f in files:
        p = plan(scn.load(f))
        assert p.media, f
