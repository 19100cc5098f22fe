"""The testbed's scenario -> plan step (no root needed): topology, addresses, delays, refusals."""
import pytest

from jitterlab import ScenarioError
from jitterlab import scenario as scn
from jitterlab import sim
from jitterlab.testbed.plan import plan
from conftest import UMTS, trace_fallback, trace_mean_bps, umts_or_shipped

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


def test_tcp_flows_keep_the_names_the_scenario_gives():
    """A TCP entry's name (or kind + index, and .j per flow of a web page) names its flows in the
    plan and so in the testbed's `flows` table; the stack's sysctls once overwrote it with the last
    sysctl's name (net.ipv4.tcp_moderate_rcvbuf)."""
    sc = {**ACCESS, "traffic": [*ACCESS["traffic"], {"kind": "bulk", "name": "dl", "from": "server", "to": "client", "size": "1MB"},
                                {"kind": "web", "from": "server", "to": "client", "size": "372kB", "flows": 2, "iw": 10}]}
    p = plan(sc)
    assert [f.name for f in p.tcp] == ["dl", "web0.0", "web0.1"]
    assert [m.name for m in p.media] == ["audio0"]


def test_dumbbell_plan():
    sc = {"duration": "5s", "dumbbell": {"pairs": 2, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms",
                                         "queue": {"kind": "droptail", "limit": "50pkt"}, "access_rate": "100Mbit", "access_delay": "1ms",
                                         "access_delays": ["1ms", "3ms"]},
          "traffic": [{"kind": "video", "from": "s1", "to": "d1", "rate": "1Mbit", "mode": "paced"}]}
    p = plan(sc)
    assert p.path_delay_ns("s1", "d1") == 7_000_000
    assert p.path_delay_ns("s2", "d2") == 11_000_000
    assert p.media[0].per_tick == 5 and p.media[0].spacing_ns == 8_000_000
    assert p.next_hop("s1", p.links[0])[0] == p.links[1].addr("r1")


@pytest.mark.parametrize("patch,msg", [
    ({"down_queue": {"kind": "sfq"}}, "access.down_queue.kind"),
    ({"bogus": 1}, "access.bogus"),
    ({"down_rate": None, "down_trace": "x.trace", "down_cellular": {}}, "down_"),
])
def test_refusals_name_the_key(patch, msg):
    sc = {**ACCESS, "access": {k: v for k, v in {**ACCESS["access"], **patch}.items() if v is not None}}
    with pytest.raises(ScenarioError, match=msg):
        plan(sc)


def test_adaptive_media_plans_with_the_simulators_defaults():
    # crates/sim/src/traffic/adaptive.rs: video 150 kbit/s - 1.5 Mbit/s starting at min_rate, 30 fps
    # (33_333_333 ns), 1200 B MTU, RFC 8888 feedback every 100 ms; the feedback flow takes the next
    # flow id, so the TCP flow after it is flow 2 as in the simulator
    sc = {**ACCESS, "traffic": [{"kind": "video", "from": "server", "to": "client", "cc": "gcc"},
                                {"kind": "bulk", "from": "server", "to": "client", "size": "1MB"}]}
    p = plan(sc)
    (m,) = p.media
    assert m.rtc == {"cc": "gcc", "min_bps": 150_000, "max_bps": 1_500_000, "start_bps": 150_000, "video": True, "mtu": 1200,
                     "format": "rfc8888", "fb_interval_ns": 100_000_000, "key_interval_ns": None, "pauses_ns": []}
    assert (m.flow_id, m.interval_ns, m.ip_size) == (0, 33_333_333, 1200)
    assert p.tcp[0].flow_id == 2
    sim_ids = {f["name"]: f["flow_id"] for f in sim.simulate({**sc, "duration": "1s"}).flows.to_dict("records")}
    assert (sim_ids["video0"], sim_ids["video0.feedback"], sim_ids["bulk0"]) == (0, 1, 2)
    assert m.name == "video0"
    audio = plan({**ACCESS, "traffic": [{"kind": "audio", "from": "server", "to": "client", "cc": "nada", "feedback": "twcc",
                                         "max_rate": "32kbit"}]}).media[0]
    assert audio.rtc["max_bps"] == 32_000 and audio.rtc["min_bps"] == 6_000 and audio.rtc["format"] == "twcc"
    assert audio.interval_ns == 20_000_000 and not audio.rtc["video"]


def test_adaptive_pause_and_key_interval_reach_the_sender():
    sc = {**ACCESS, "traffic": [{"kind": "video", "from": "server", "to": "client", "cc": "gcc", "pause": [["1s", "2.5s"]],
                                 "key_interval": "2s"}]}
    r = plan(sc).media[0].rtc
    assert r["pauses_ns"] == [[1_000_000_000, 2_500_000_000]] and r["key_interval_ns"] == 2_000_000_000
    # the simulator's checks hold on the testbed too: a pause outside start..stop names its key
    sc["traffic"][0]["pause"] = [["4s", "6s"]]
    with pytest.raises(ScenarioError, match=r"^traffic\[0\]\.pause\[0\]"):
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
    from jitterlab.testbed.net import TestbedError

    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(TestbedError, match="needs root"):
        testbed.run(ACCESS)


def test_every_shipped_testbed_scenario_plans(root):
    files = sorted((root / "scenarios" / "testbed").glob("*.toml"))
    assert len(files) >= 5
    for f in files:
        # a trace of ../shared (not shipped: GPL data) absent here: the shipped trace in its place
        p = plan(scn.with_overrides(scn.load(f), trace_fallback(f)))
        assert p.media, f


TRACE = umts_or_shipped()  # Mahimahi's UMTS trace from ../shared, else the shipped one


def test_jitter_loss_and_cellular_go_to_the_userspace_link():
    sc = {**ACCESS, "access": {**ACCESS["access"], "down_jitter": {"dist": "pareto", "mean": "4ms", "shape": 2.5},
                               "down_loss": 0.01, "down_loss_burst": "50ms", "core_reorder": True}}
    p = plan(sc)
    bn = p.channel("router", "client")
    assert bn.jitter == {"dist": "pareto", "mean": 0.004, "shape": 2.5} and bn.loss == 0.01
    # jittered and leaving the router: its drop-tail runs in userspace, so the jitter follows the queue
    assert bn.userspace and bn.jitter_after_queue and not p.channel("client", "router").userspace
    assert bn.loss_burst_ns == 50_000_000 and bn.sim_name == "bottleneck"  # the simulator's loss:<channel> stream
    assert p.channel("server", "router").reorder
    # the cellular model: its opportunities for this seed and channel, as the simulator's
    cell = {**ACCESS, "access": {k: v for k, v in ACCESS["access"].items() if k != "down_rate"} | {"down_cellular": {}}}
    p1, p2 = plan(cell, seed=1), plan(cell, seed=2)
    c1 = p1.channel("router", "client")
    assert c1.userspace and c1.capacity == "cellular" and c1.capacity_key == "access.down_cellular"
    from jitterlab import _native

    want, _ = _native.channel_opportunities(scn.to_json(scn.load(cell)), 1, "bottleneck")
    assert c1.opportunities_ms == want and c1.opportunities_ms != p2.channel("router", "client").opportunities_ms
    # the uplink inherits the downlink's capacity (as in the simulator) unless it has its own rate
    assert p1.channel("client", "router").rate_bps == 1_000_000 and not p1.channel("client", "router").userspace
    # the Iub gate depends on the load: no opportunities to replay, refused naming the key
    gated = {**cell, "access": {**cell["access"], "down_cellular": {"iub_cycle": "40ms"}}}
    with pytest.raises(ScenarioError, match=r"^access.down_cellular: iub_cycle: the Iub flow-control gate depends on the load"):
        plan(gated)


def test_trace_link_plan_and_refusals(root):
    umts = root / "scenarios/testbed/umts-bulk.toml"
    ov = {"access.down_trace": str(TRACE)}
    p = plan(scn.with_overrides(scn.load(umts), ov))
    bn = p.channel("rnc", "mobile")
    assert bn.userspace and bn.capacity == "trace" and (bn.queue.limit, bn.queue.unit) == (500, "pkt")
    assert abs(bn.rate_bps - trace_mean_bps(TRACE)) < 0.01e6  # the trace's mean, not a dummy
    if TRACE == UMTS:
        assert abs(bn.rate_bps - 2.02e6) < 0.01e6  # shared/traces/README.md
    assert bn.opportunities_ms[:3] == [int(x) for x in TRACE.read_text().split()[:3]]
    sc = scn.with_overrides(scn.load(umts), ov)
    # an AQM on a trace: the simulator's discipline on the trace's opportunities, in userspace
    sc["access"]["down_queue"] = {"kind": "red", "limit": "500pkt"}
    from jitterlab.testbed.net import Network

    p = plan(sc)
    ch = Network(p).link_config(1)["channels"]
    bn = next(c for c in ch if c["name"] == "bottleneck")
    assert bn["trace"] is None and bn["qdisc"]["table"] == {"kind": "red", "limit": "500pkt"}
    assert bn["qdisc"]["schedule_ms"][:3] == [int(x) for x in TRACE.read_text().split()[:3]]
    db = {"duration": "5s", "dumbbell": {"pairs": 1, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms",
                                         "access_delay": "1ms", "access_trace": str(TRACE)},
          "traffic": [{"kind": "audio", "from": "s1", "to": "d1"}]}
    with pytest.raises(ScenarioError, match="dumbbell.access_trace: the testbed runs a trace-driven link only"):
        plan(db)


def test_media_receiver_is_listening_when_it_says_ready(tmp_path):
    """The first audio packets were lost in 2 of 4 loaded runs: the receiver bound its port only after
    time zero (after mlockall). Now it is bound before "ready" (no root needed to check)."""
    import json
    import socket
    import subprocess
    import sys
    import time

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    args = tmp_path / "a.json"
    args.write_text(json.dumps({"port": port, "stop_ns": 0, "sync": True, "out": str(tmp_path / "r")}))
    w = subprocess.Popen([sys.executable, "-m", "jitterlab.testbed.worker", "media_recv", str(args)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert w.stdout.readline().strip() == "ready"
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        with pytest.raises(OSError):  # EADDRINUSE: already listening
            s.bind(("0.0.0.0", port))
        s.close()
        w.stdin.write(f"{time.clock_gettime_ns(time.CLOCK_REALTIME)}\n")
        w.stdin.flush()
        assert w.wait(timeout=30) == 0
    finally:
        if w.poll() is None:
            w.kill()


def test_aqm_queues_run_the_simulators_code_in_userspace():
    """A non-drop-tail queue on a fixed-rate channel is the simulator's discipline in the userspace
    link, built from the user's own table (so `target` means what it means in the simulator); the
    kinds come from the simulator's registry; drop-tail stays a kernel pfifo."""
    from jitterlab import _native
    from jitterlab.testbed.net import Network
    from jitterlab.testbed.plan import queue_kinds

    assert queue_kinds() == _native.sim_registry()["queues"] and "codel" in queue_kinds()
    sc = {**ACCESS, "access": {**ACCESS["access"], "down_queue": {"kind": "codel", "target": "5ms", "ecn": True}}}
    p = plan(sc)
    bn = p.channel("router", "client")
    assert bn.userspace and not bn.queue.in_kernel and bn.userspace_key == "access.down_queue.kind"
    cfg = Network(p).link_config(7)
    ch = cfg["channels"]
    i = next(k for k, c in enumerate(ch) if c["name"] == "bottleneck")
    assert ch[i]["qdisc"] == {"table": {"kind": "codel", "target": "5ms", "ecn": True}, "path": "access.down_queue",
                              "rate_bps": 4_000_000, "overhead": 0, "schedule_ms": None}
    assert ch[i]["trace"] is None
    # the server -> client path crosses the link step of the bottleneck, then its delay
    assert any(["link", i] in c and ["delay", i] in c for c in cfg["classes"])
    # the uplink inherits the downlink's queue, as in the simulator (its own CoDel at its 1 Mbit/s)...
    up = next(c for c in ch if c["name"] == "bottleneck.rev")
    assert up["qdisc"]["rate_bps"] == 1_000_000 and up["qdisc"]["path"] == "access.down_queue"
    # ... unless it has its own: a drop-tail uplink is a kernel pfifo, no link step
    sc["access"]["up_queue"] = {"kind": "droptail", "limit": "100pkt"}
    p = plan(sc)
    up = next(c for c in Network(p).link_config(7)["channels"] if c["name"] == "bottleneck.rev")
    assert up["qdisc"] is None and not p.channel("client", "router").userspace and p.channel("client", "router").queue.qdisc() == "pfifo"
    # an unknown kind is refused with the registry's list
    bad = {**ACCESS, "access": {**ACCESS["access"], "down_queue": {"kind": "sfq"}}}
    with pytest.raises(ScenarioError, match="access.down_queue.kind"):
        plan(bad)


def test_aqm_away_from_the_userspace_link_is_refused():
    db = {"duration": "5s", "dumbbell": {"pairs": 1, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms",
                                         "access_delay": "1ms", "access_rate": "100Mbit", "access_queue": {"kind": "codel"}},
          "traffic": [{"kind": "audio", "from": "s1", "to": "d1"}]}
    with pytest.raises(ScenarioError, match=r"dumbbell.access_queue.kind: the testbed runs a codel queue .* only on a channel"):
        plan(db)


def test_htb_gets_the_scenarios_burst_and_the_overhead_beyond_the_ethernet_header(monkeypatch, root):
    """A link's `burst` is HTB's burst and cburst (the simulator's token bucket, same bytes); without
    one HTB keeps max(1600 B, 1 ms at the rate). HTB on a veth counts each frame's 14-byte Ethernet
    header itself, so `overhead` = 14 B (the simulator's IP packet + header) passes nothing to tc
    and 18 B passes 4; an overhead between 0 and 14 B cannot be expressed and is refused."""
    from jitterlab.testbed import net as testbed_net
    from jitterlab.testbed.net import Network, TestbedError

    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(testbed_net, "sh", lambda *a, **k: calls.append(a))

    def htb_class(sc: dict, src: str, dst: str) -> list[str]:
        calls.clear()
        net = Network(plan(sc))
        net._shape(net.plan.channel(src, dst))
        return list(next(c for c in calls if "class" in c))

    sc = scn.load(root / "scenarios/testbed/audio-bulk.toml")
    down = htb_class(sc, "router", "client")
    assert down[down.index("burst") + 1] == "1600b" and down[down.index("cburst") + 1] == "1600b", down
    assert "overhead" not in down, down
    core = htb_class(sc, "server", "router")
    assert core[core.index("burst") + 1] == "12500b", core
    acc = {**ACCESS, "access": {**ACCESS["access"], "down_burst": "3000B", "down_overhead": "18B"}}
    down = htb_class(acc, "router", "client")
    assert down[down.index("burst") + 1] == "3000b" and down[down.index("overhead") + 1] == "4", down
    # no burst given: 1 ms at 100 Mbit/s (12,500 B), at least 1600 B at 4 Mbit/s
    assert "12500b" in htb_class(ACCESS, "server", "router")
    assert "1600b" in htb_class(ACCESS, "router", "client")
    bad = {**ACCESS, "access": {**ACCESS["access"], "down_overhead": "4B"}}
    with pytest.raises(TestbedError, match="access.down_overhead: HTB on the testbed's veth counts"):
        Network(plan(bad))._check_features()


def _tcp_sc(**kw):
    e = {"kind": "bulk", "name": "b", "from": "server", "to": "client", "size": "1MB", **kw}
    return {**ACCESS, "traffic": [*ACCESS["traffic"], e]}


def test_the_testbed_is_linux_6_18_and_applies_its_sysctls():
    """Every TCP entry's host gets the profile's switches as per-namespace sysctls (the stack does not
    depend on the machine's own defaults); the receiver's tcp_rmem is the profile's."""
    p = plan(_tcp_sc())
    assert p.sysctls["client"]["net.ipv4.tcp_rmem"] == "4096 131072 33554432"
    assert p.sysctls["server"]["net.ipv4.tcp_recovery"] == "1" and p.sysctls["server"]["net.ipv4.tcp_early_retrans"] == "3"
    assert p.sysctls["server"]["net.ipv4.tcp_frto"] == "2"
    assert p.sysctls["server"]["net.ipv4.tcp_timestamps"] == "1" == p.sysctls["client"]["net.ipv4.tcp_timestamps"]
    assert p.sysctls["client"]["net.ipv4.tcp_moderate_rcvbuf"] == "1"
    assert p.route_attrs == {}


def test_overrides_linux_can_take_are_applied():
    p = plan(_tcp_sc(timestamps=False, rack=False, tlp=False, frto=False, tcp_rmem_max="1MB", tcp_rmem_default="65536B", min_rto="300ms",
                     init_rcv_wnd=20, ecn=True, so_rcvbuf="20kB"))
    assert p.sysctls["server"]["net.ipv4.tcp_timestamps"] == "0" == p.sysctls["client"]["net.ipv4.tcp_timestamps"]
    assert (p.sysctls["server"]["net.ipv4.tcp_recovery"], p.sysctls["server"]["net.ipv4.tcp_early_retrans"]) == ("0", "0")
    assert p.sysctls["server"]["net.ipv4.tcp_ecn"] == "1"
    assert p.sysctls["server"]["net.ipv4.tcp_frto"] == "0"
    assert p.sysctls["client"]["net.ipv4.tcp_rmem"] == "4096 65536 1000000"
    assert p.route_attrs == {("server", "client"): {"rto_min": "300ms"}, ("client", "server"): {"initrwnd": "20"}}
    assert p.tcp[0].rcvbuf == 20000


@pytest.mark.parametrize("stack, words", [("linux-3.2", "2012"), ("ns2-sack1", "simulator's TCP")])
def test_profiles_the_kernel_cannot_be_are_refused(stack, words):
    with pytest.raises(ScenarioError, match=rf"traffic\[1\]\.stack: the testbed runs real Linux \(linux-6.18\); it cannot be '{stack}'.*{words}"):
        plan(_tcp_sc(stack=stack))
    with pytest.raises(ScenarioError, match=r"^stack: "):  # an unknown one: the simulator's core lists the known ones
        plan({**_tcp_sc(), "stack": "bsd"})


@pytest.mark.parametrize("key, value, msg", [
    ("abc", True, r"traffic\[1\]\.abc: the testbed's Linux cannot be given 2 \(its value is 'all'"),
    ("tsq", False, r"traffic\[1\]\.tsq: the testbed's Linux cannot be given False"),
    ("push_ack", False, r"traffic\[1\]\.push_ack: the testbed's Linux cannot be given False"),
    ("loss_undo", False, r"traffic\[1\]\.loss_undo: the testbed's Linux cannot be given False"),
    ("rto_rack", False, r"traffic\[1\]\.rto_rack: the testbed's Linux cannot be given False"),
    ("frto_response", "rate-halving", r"traffic\[1\]\.frto_response: the testbed's Linux cannot be given 'rate-halving'"),
    ("hystart", False, r"traffic\[1\]\.hystart: the testbed's Linux cannot"),
    ("rwnd", "20pkt", r"traffic\[1\]\.rcvbuf: a fixed receive window is not something Linux has; give so_rcvbuf"),
    ("rmem_max", "1MB", r"traffic\[1\]\.rmem_max: net\.core\.rmem_max is host-wide"),
    ("ecn", "l4s", r"traffic\[1\]\.ecn: the kernel's TCP sends ECT\(0\) only"),
    ("series", True, r"traffic\[1\]\.series: the testbed does not record tcp_series"),
])
def test_switches_linux_cannot_take_are_refused_with_the_reason(key, value, msg):
    with pytest.raises(ScenarioError, match=msg):
        plan(_tcp_sc(**{key: value}))


def test_one_namespace_one_value():
    sc = _tcp_sc(timestamps=False)
    sc["traffic"].append({"kind": "bulk", "name": "c", "from": "server", "to": "client", "size": "1MB"})
    with pytest.raises(ScenarioError, match=r"traffic\[2\]\.timestamps: needs net\.ipv4\.tcp_timestamps = 1 on host 'server', where traffic\[1\]\.timestamps needs 0"):
        plan(sc)


def test_jittered_droptail_leaving_the_router_queues_before_its_jitter():
    """The simulator delays (and jitters) a packet after its channel's queue; the testbed's kernel
    HTB on the router's egress would queue after the userspace delay step, so the jitter would be
    re-spaced by the queue instead of reaching the receiver (issue 26: real Linux BBR's audio median
    48-53 ms that way, 107-113 ms in the simulator's order, as the simulator's 108-113). Such a
    channel's drop-tail runs in the userspace link: link step, then delay step; no HTB."""
    from jitterlab.testbed.net import Network

    sc = {**ACCESS, "access": {**ACCESS["access"], "down_jitter": {"dist": "exponential", "mean": "5ms"}}}
    p = plan(sc)
    bn = p.channel("router", "client")
    assert bn.jitter_after_queue and bn.userspace and bn.queue.in_kernel
    cfg = Network(p).link_config(3)
    ch = cfg["channels"]
    i = next(k for k, c in enumerate(ch) if c["name"] == "bottleneck")
    assert ch[i]["qdisc"] == {"table": {"kind": "droptail", "limit": "500pkt"}, "path": "access.down_queue",
                              "rate_bps": 4_000_000, "overhead": 0, "schedule_ms": None}
    assert ch[i]["trace"] is None and ch[i]["jitter"] == {"dist": "exponential", "mean": 0.005}
    assert any(c[c.index(["link", i]) + 1] == ["delay", i] for c in cfg["classes"] if ["link", i] in c)
    # the default queue (no table): the limit the simulator gives it (1000 packets), written out
    del sc["access"]["down_queue"]
    ch = Network(plan(sc)).link_config(3)["channels"]
    assert next(c for c in ch if c["name"] == "bottleneck")["qdisc"]["table"] == {"kind": "droptail", "limit": "1000pkt"}
    # without jitter, or entering the router (its HTB sits before the delay step), HTB as before
    assert not plan(ACCESS).channel("router", "client").userspace
    up = {**ACCESS, "access": {**ACCESS["access"], "up_jitter": {"dist": "exponential", "mean": "5ms"}}}
    assert not plan(up).channel("client", "router").userspace
    # a token bucket cannot follow it into userspace: refused, naming the key
    sc = {**ACCESS, "access": {**ACCESS["access"], "down_jitter": {"dist": "exponential", "mean": "5ms"}, "down_burst": "1600B"}}
    with pytest.raises(ScenarioError, match=r"^access\.down_burst: "):
        plan(sc)


def test_queue_at_is_where_the_testbed_puts_the_queue():
    """A kernel qdisc sits on the sending host's own interface (`queue_at = "host"`: its TCP Small
    Queues count it), the userspace link beside it in the network (`"network"`): a TCP sender's
    first link is planned only where the scenario says the testbed puts its queue."""
    bulk = {"kind": "bulk", "from": "server", "to": "client", "size": "1MB"}

    def sc(core_queue, at=None):
        a = {**ACCESS["access"], "core_queue": core_queue, **({"core_queue_at": at} if at else {})}
        return {**ACCESS, "access": a, "traffic": [*ACCESS["traffic"], bulk]}
    codel = {"kind": "codel"}
    with pytest.raises(ScenarioError, match=r'^access\.core_queue_at: .*give access\.core_queue_at = .network.'):
        plan(sc(codel))
    assert plan(sc(codel, "network")).channel("server", "router").userspace
    fifo = {"kind": "droptail", "limit": "100pkt"}
    assert not plan(sc(fifo)).channel("server", "router").userspace
    with pytest.raises(ScenarioError, match=r'^access\.core_queue_at: .*give access\.core_queue_at = .host.'):
        plan(sc(fifo, "network"))
    # without a TCP sender on the server its queue's place does not matter
    plan({**sc(codel), "traffic": ACCESS["traffic"]})
