"""From a scenario (the simulator's TOML, docs/scenarios.md) to a testbed plan: namespaces, links,
addresses, routes, qdiscs, delays and workloads. Pure Python, no system calls, so it is tested
without root. Keys the testbed cannot honour are refused with an error naming the key.

The links come from the scenario as the Rust core expands it (`jitterlab.scenario.expand`: every
key, unit and default interpreted once, as in the simulator). Topology: the `[access]` and
`[dumbbell]` shorthands (generic `[links.*]` are refused for now). Every link is a veth pair between
two namespaces; the queue and rate of a fixed-rate drop-tail channel a -> b sit on a's veth (HTB at
the rate, pfifo/bfifo as its leaf). One userspace link (TUN, Rust) in a router that every
host-to-host path crosses adds each channel's propagation delay, jitter and loss, and is the queue
of every channel whose capacity is a trace or the cellular model (Mahimahi's link semantics) or whose
queue is not drop-tail (the simulator's own CoDel, FQ-CoDel, PIE, RED, ... from its registry, at the
channel's rate), so such a channel must start or end at that router.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, overload

from jitterlab import _native
from jitterlab._native import ScenarioError
# the plan's types (they stay importable from here)
from jitterlab.testbed.model import Channel, Link, Media, Plan, Queue, TcpFlow  # noqa: F401

# ---------------------------------------------------------------------------------------------
# scenario -> plan

def queue_kinds() -> list[str]:
    """The queue kinds a testbed scenario may name: the simulator's registry (drop-tail as a kernel
    qdisc, every other kind as the simulator's own code in the userspace link)."""
    return list(_native.sim_registry()["queues"])


def _check_keys(d: Iterable[str], allowed: set[str], where: str) -> None:
    for k in d:
        if k not in allowed:
            raise ScenarioError(f"{where}{k}: unknown key (known: {', '.join(sorted(allowed))})")


# The TCP stack (docs/tcp.md, "Stack profiles"). The testbed's hosts run the machine's kernel, so a
# TCP entry must be the `linux-6.18` profile; a switch it overrides is applied where Linux lets it
# be set for one namespace, route or socket, and refused otherwise.
TESTBED_STACK = "linux-6.18"

_TCP_KEYS = ("kind", "name", "from", "to", "size", "flows", "start", "stop", "stack", "series")
_NOT_A_KERNEL = {
    "linux-3.2": "its RACK-TLP, TCP Small Queues, slow-start counting and receive-window rules are built into the kernel and cannot be switched back to 2012's",
    "ns2-sack1": "ns-2's Agent/TCP/Sack1 is a simulator's TCP, not a kernel's",
}
# Switches Linux lets the testbed set: where each goes. "both" = the sender's and the receiver's
# namespaces, "rcv" / "snd" = one of them. Values as the expanded form's `tcp` gives them.
_SYSCTL: dict[str, tuple[str, str, Any]] = {
    "timestamps": ("both", "net.ipv4.tcp_timestamps", lambda v: "1" if v else "0"),
    "recovery": ("both", "net.ipv4.tcp_sack", lambda v: "1" if v == "sack" else "0"),
    "wscale": ("both", "net.ipv4.tcp_window_scaling", lambda v: "1" if v else "0"),
    "rack": ("snd", "net.ipv4.tcp_recovery", lambda v: "1" if v else "0"),
    "tlp": ("snd", "net.ipv4.tcp_early_retrans", lambda v: "3" if v else "0"),
    "frto": ("snd", "net.ipv4.tcp_frto", lambda v: "2" if v else "0"),
    "ecn": ("snd", "net.ipv4.tcp_ecn", lambda v: "1" if v == "ect0" else "2"),
    "tcp_moderate_rcvbuf": ("rcv", "net.ipv4.tcp_moderate_rcvbuf", lambda v: "1" if v else "0"),
}
# Applied elsewhere: iw (route initcwnd), cc (TCP_CONGESTION), mss (TCP_MAXSEG), so_rcvbuf
# (SO_RCVBUF), tcp_rmem_default / tcp_rmem_max (net.ipv4.tcp_rmem of the receiver), min_rto (route
# rto_min), init_rcv_wnd (route initrwnd of the receiver).
_APPLIED = {"iw", "cc", "mss", "so_rcvbuf", "tcp_rmem_default", "tcp_rmem_max", "min_rto", "init_rcv_wnd", *_SYSCTL}


def _stack_switches() -> dict[str, Any]:
    import json

    prof = json.loads(_native.stack_profiles())
    return next(p["switches"] for p in prof["profiles"] if p["name"] == TESTBED_STACK)


def _size_b(v: Any) -> int:
    return int(str(v).rstrip("B"))


def _tcp_stack(t: dict, where: str, kernel: dict[str, Any]) -> dict[str, Any]:
    """The entry's stack switches as the testbed applies them; refuses a profile or switch the kernel
    cannot be. Returns the switches (the expanded form's `tcp`)."""
    stack = t.get("stack", TESTBED_STACK)
    if stack != TESTBED_STACK:
        why = _NOT_A_KERNEL.get(stack, "it is not the kernel's")
        raise ScenarioError(f"{where}stack: the testbed runs real Linux ({TESTBED_STACK}); it cannot be {stack!r}: {why}")
    tcp = t.get("tcp") or {}
    if tcp.get("ecn") == "ect1":
        raise ScenarioError(f"{where}ecn: the kernel's TCP sends ECT(0) only (no L4S without Prague/AccECN)")
    for k, v in tcp.items():
        # `lost_retransmit` appears only with rack = false (RACK's detection replaces it otherwise)
        if k in _APPLIED or v == kernel.get(k) or k not in kernel:
            continue
        if k == "linux_rcvbuf" or k == "rcvbuf":
            raise ScenarioError(f"{where}rcvbuf: a fixed receive window is not something Linux has; give so_rcvbuf "
                                "(SO_RCVBUF, the kernel doubles it) or a host's [hosts.NAME.rwnd] budget")
        if k == "rmem_max":
            raise ScenarioError(f"{where}rmem_max: net.core.rmem_max is host-wide, not per namespace; the testbed keeps "
                                f"the host's ({kernel.get(k)})")
        raise ScenarioError(f"{where}{k}: the testbed's Linux cannot be given {v!r} (its value is {kernel.get(k)!r}, "
                            "and no sysctl, route attribute or socket option sets it per connection)")
    if "so_rcvbuf_bytes" in t and t["so_rcvbuf_bytes"] <= 0:
        raise ScenarioError(f"{where}so_rcvbuf: must be > 0")
    return tcp


def _set_sysctl(plan_sysctls: dict[str, dict[str, str]], owner: dict[tuple[str, str], str], node: str, key: str,
                val: str, where: str) -> None:
    have = plan_sysctls.setdefault(node, {})
    if have.get(key, val) != val:
        raise ScenarioError(f"{where.rstrip('.')}: needs {key} = {val} on host {node!r}, where {owner[(node, key)]} needs "
                            f"{have[key]}: a namespace has one value")
    have[key] = val
    owner.setdefault((node, key), where.rstrip("."))


def _start_ns(v: Any, key: str, rng: Any) -> int:
    """A start time, or a distribution table drawn with the run's seed (as the simulator does,
    though not with the same random numbers)."""
    if not isinstance(v, dict):
        return int(v)
    d = v.get("dist")
    w = key + "."
    if d == "uniform":
        lo, hi = _x_ns(v, "min", w, 0), _x_ns(v, "max", w)
        if hi is None or hi < lo:
            raise ScenarioError(f"{key}.max: must be given and >= min")
        return int(lo + (hi - lo) * rng.random())
    if d == "exponential":
        return int(rng.exponential(_x_ns(v, "mean", w, 0)))
    if d == "normal":
        return max(0, int(rng.normal(_x_ns(v, "mean", w, 0), _x_ns(v, "sd", w, 0))))
    raise ScenarioError(f"{key}.dist: must be uniform, exponential or normal, got {d!r}")


# Readers of the expanded form (`jitterlab.scenario.expand`): the Rust core has parsed every unit
# once; a value with a unit appears as KEY_ns, KEY_bytes / KEY_pkts or KEY_bps.

def _user_keys(t: dict) -> set[str]:
    """The keys as the user wrote them (KEY_ns -> KEY), for the testbed's own key checks."""
    out = set()
    for k in t:
        base, _, suffix = k.rpartition("_")
        out.add(base if base and suffix in ("ns", "bytes", "pkts", "bps") else k)
    return out


@overload
def _x_ns(t: dict, key: str, where: str, default: int) -> int: ...
@overload
def _x_ns(t: dict, key: str, where: str, default: None = None) -> int | None: ...
def _x_ns(t: dict, key: str, where: str, default: int | None = None) -> int | None:
    if f"{key}_ns" in t:
        return int(t[f"{key}_ns"])
    if key in t:
        raise ScenarioError(f"{where}{key}: expected a duration like '20ms', got {t[key]!r}")
    return default


def _x_size(t: dict, key: str, where: str) -> tuple[int, str] | None:
    if f"{key}_bytes" in t:
        return int(t[f"{key}_bytes"]), "B"
    if f"{key}_pkts" in t:
        return int(t[f"{key}_pkts"]), "pkt"
    if key in t:
        raise ScenarioError(f"{where}{key}: expected a size like '80B' or '500pkt', got {t[key]!r}")
    return None


@overload
def _x_bytes(t: dict, key: str, where: str, default: int) -> int: ...
@overload
def _x_bytes(t: dict, key: str, where: str, default: None = None) -> int | None: ...
def _x_bytes(t: dict, key: str, where: str, default: int | None = None) -> int | None:
    v = _x_size(t, key, where)
    if v is None:
        return default
    if v[1] != "B":
        raise ScenarioError(f"{where}{key}: expected a size in bytes like '372kB', got {v[0]} packets")
    return v[0]


def _x_bps(t: dict, key: str, where: str, default: int) -> int:
    if f"{key}_bps" in t:
        return int(t[f"{key}_bps"])
    if key in t:
        raise ScenarioError(f"{where}{key}: expected a rate like '4Mbit', got {t[key]!r}")
    return default


def _user_table(sc: dict, key: str) -> dict | None:
    """The table at dotted `key` of the scenario as written (None when absent)."""
    t: Any = sc
    for part in key.split("."):
        if not isinstance(t, dict) or part not in t:
            return None
        t = t[part]
    return t if isinstance(t, dict) else None


def _x_queue(q: dict, key: str, table: dict | None = None) -> Queue:
    """A link direction's queue from the expanded form; `key` is the one the user wrote, `table`
    the user's own table there."""
    kind = q.get("kind", "droptail")
    kinds = queue_kinds()
    if kind not in kinds:
        raise ScenarioError(f"{key}.kind: the testbed knows {', '.join(sorted(kinds))}, got {kind!r}")
    if "limit_pkts" in q:
        limit, unit = int(q["limit_pkts"]), "pkt"
    else:
        limit, unit = int(q.get("limit_bytes", 1000 * 1500)), "B"
    params = {k: v for k, v in q.items() if k not in ("kind", "limit_pkts", "limit_bytes")}
    if "autorate" in params:
        # the controller is the simulator's agent (probes, timers), not part of the discipline
        raise ScenarioError(f"{key}.autorate: the testbed does not run cake-autorate (the simulator's controller, "
                            "crates/sim/src/cake_autorate.rs); give the CAKE a fixed bandwidth")
    return Queue(kind, limit, unit, params, key, table)


def _jitter_secs(j: dict | None) -> dict | None:
    """The expanded form's jitter (ns) as the userspace link takes it (seconds, the simulator's
    `Jitter` parameters)."""
    if not j:
        return None
    out: dict[str, Any] = {"dist": j["dist"]}
    for k, v in j.items():
        if k.endswith("_ns"):
            out[k[:-3]] = v / 1e9
        elif k != "dist":
            out[k] = v
    return out


def plan(sc: dict[str, Any], seed: int = 1) -> Plan:
    import numpy as np

    rng = np.random.default_rng(seed)
    if sc.get("links"):
        raise ScenarioError("links: the testbed builds the [access] and [dumbbell] shorthands only; generic [links.*] are not supported yet")
    # The Rust core parses, validates (every key, unit and default) and expands the scenario; the
    # links come from that expanded form, so a key means what it means in the simulator.
    from jitterlab import scenario as _scn

    exp = _scn.expand(sc)
    duration = int(exp["duration_ns"])
    links, hosts, delay_router = _topology(sc, exp, seed)
    nodes: list[str] = []
    for l in links:
        for x in (l.a, l.b):
            if x not in nodes:
                nodes.append(x)
    tr = _Traffic(hosts, duration, rng)
    for i, t in enumerate(exp["traffic"]):
        tr.add(i, t)
    tcp = tr.tcp
    # one initial window per (sender, receiver): it is a route attribute
    iws: dict[tuple[str, str], int] = {}
    for f in tcp:
        if iws.setdefault((f.src, f.dst), f.iw) != f.iw:
            raise ScenarioError(f"traffic: iw: flows from {f.src} to {f.dst} ask for different initial windows "
                                f"({iws[(f.src, f.dst)]} and {f.iw}); the testbed sets IW per route (initcwnd)")
    budgets = _rwnd_budgets(exp, hosts, tcp)
    qsi, queues = _sampling(exp, links)
    pl = Plan(sc.get("name", "scenario"), duration, nodes, links, tr.media, tcp, budgets, delay_router, hosts)
    pl.queue_sample_ns = qsi
    pl.sampled_queues = list(queues) if qsi else []
    pl.sysctls = tr.sysctls
    pl.route_attrs = tr.route_attrs
    return pl


def _topology(sc: dict[str, Any], exp: dict[str, Any], seed: int) -> tuple[list[Link], list[str], str]:
    """The links of the scenario's [access] or [dumbbell] shorthand (each channel from its expanded
    form), its hosts, and the router where the userspace link sits."""
    from jitterlab import scenario as _scn

    links: list[Link] = []
    hosts: list[str] = []
    by_ends: dict[tuple[str, str], dict] = {}
    for l in exp["links"]:
        by_ends[(l["from"], l["to"])] = l["forward"]
        by_ends[(l["to"], l["from"])] = l["reverse"]

    def chan(name: str, src: str, dst: str, qkey: str, prefix: str) -> Channel:
        e = by_ends[(src, dst)]
        q = _x_queue(e["queue"], qkey, _user_table(sc, qkey))
        cap = e["capacity"]
        kind = cap.get("kind", "rate")
        rate = cap["bps"] if kind == "rate" else cap["mean_bps"]
        c = Channel(name, src, dst, int(round(rate)), int(e["delay_ns"]), q, capacity=kind,
                    capacity_key=f"{prefix}{'rate' if kind == 'rate' else kind}", overhead=int(cap.get("overhead_bytes") or 0),
                    jitter=_jitter_secs(e.get("jitter")), loss=float(e.get("loss") or 0.0), reorder=bool(e.get("reorder")),
                    key_prefix=prefix, loss_burst_ns=e.get("loss_burst_ns"), sim_name=e["channel"],
                    burst=e.get("burst_bytes"), queue_at=e.get("queue_at", "host"))
        if kind != "rate":
            c.opportunities_ms, _period = _native.channel_opportunities(_scn.to_json(sc), seed, e["channel"])
        return c

    if "access" in sc and "dumbbell" in sc:
        raise ScenarioError("dumbbell: the testbed builds one topology per run; give [access] or [dumbbell], not both")
    if "access" in sc:
        a = sc["access"]
        ing = sorted(k for k in a if k.startswith("ingress_") or k == "cpe")
        if ing:
            raise ScenarioError(f"access.{ing[0]}: the testbed does not build the receiver's ingress link (cpe → client) yet")
        s, r, c = a.get("server", "server"), a.get("router", "router"), a.get("client", "client")
        core_q, down_q = "access.core_queue", "access.down_queue"
        up_q = "access.up_queue" if "up_queue" in a else "access.down_queue"
        links.append(Link("core", s, r, chan("core", s, r, core_q, "access.core_"), chan("core.rev", r, s, core_q, "access.core_")))
        links.append(Link("bottleneck", r, c, chan("bottleneck", r, c, down_q, "access.down_"),
                          chan("bottleneck.rev", c, r, up_q, "access.up_")))
        hosts = [s, c]
        delay_router = r
    elif "dumbbell" in sc:
        d = sc["dumbbell"]
        n = d.get("pairs")
        if not isinstance(n, int) or not 1 <= n <= 20:
            raise ScenarioError(f"dumbbell.pairs: expected a whole number 1..20 for the testbed, got {n!r}")
        q = "dumbbell.queue"
        rq = "dumbbell.reverse_queue" if "reverse_queue" in d else q
        aq = "dumbbell.access_queue"
        links.append(Link("bottleneck", "r1", "r2", chan("bottleneck", "r1", "r2", q, "dumbbell.bottleneck_"),
                          chan("bottleneck.rev", "r2", "r1", rq, "dumbbell.bottleneck_")))
        for i in range(1, n + 1):
            for h, rt in ((f"s{i}", "r1"), (f"d{i}", "r2")):
                nm = f"{h}-{rt}"
                links.append(Link(nm, h, rt, chan(nm, h, rt, aq, "dumbbell.access_"), chan(nm + ".rev", rt, h, aq, "dumbbell.access_")))
            hosts += [f"s{i}", f"d{i}"]
        delay_router = "r1"
    else:
        raise ScenarioError("access: the testbed needs an [access] or [dumbbell] topology")
    # hosts that send TCP data: their TCP Small Queues count what waits in their own qdisc
    senders = {t.get("from") for t in sc.get("traffic", []) if t.get("kind") in _TCP_KINDS} & set(hosts)
    for l in links:
        for ch in (l.fwd, l.rev):
            if ch.jitter and ch.capacity == "rate" and ch.queue.in_kernel and ch.src == delay_router:
                # HTB on the router's egress would queue after the userspace delay step: the jitter
                # would reach the queue, which re-spaces it, instead of the receiver (issue 26: BBR's
                # ACK clock sees the simulator's order, 109-113 ms audio median, or this, 48-53 ms)
                if ch.burst is not None:
                    raise ScenarioError(f"{ch.key_prefix}burst: a jittered channel leaving {delay_router!r} runs its queue in the "
                                        f"testbed's userspace link (so that the jitter follows the queue), which has no token "
                                        f"bucket; drop `burst` or the jitter")
                ch.jitter_after_queue = True
            if ch.src in senders and ch.userspace != (ch.queue_at == "network"):
                # a kernel qdisc sits on the host's own interface (its TSQ counts what waits there);
                # the userspace link sits beside it, in the network (TSQ sees none of it)
                where = "in its userspace link, in the network" if ch.userspace else "on the host's own interface"
                raise ScenarioError(f"{ch.key_prefix}queue_at: the testbed runs {ch.name}'s queue {where}; give "
                                    f"{ch.key_prefix}queue_at = {'network' if ch.userspace else 'host'!r} (got {ch.queue_at!r})")
            if ch.userspace and delay_router not in (ch.src, ch.dst):
                what = f"a {ch.capacity}-driven link" if ch.capacity != "rate" else f"a {ch.queue.kind} queue (the simulator's, in userspace)"
                raise ScenarioError(f"{ch.userspace_key}: the testbed runs {what} only on a channel "
                                    f"to or from {delay_router!r} (where its userspace link sits); {ch.name} is not")
    for i, l in enumerate(links):
        l.index = i
    return links, hosts, delay_router


#: the traffic kinds that are TCP connections
_TCP_KINDS = ("bulk", "web", "ftp")

# An adaptive source's keys; defaults as the simulator's (crates/sim/src/traffic/adaptive.rs).
# (`feedback_via` only checks, in the simulator's expansion, that the reverse path crosses a channel.)
_RTC_KEYS = {"kind", "name", "from", "to", "start", "stop", "ecn", "cc", "min_rate", "max_rate", "start_rate", "mtu", "feedback",
             "feedback_interval", "feedback_via", "pause"}


def _adaptive(t: dict, where: str, kind: str) -> tuple[int, int, dict[str, Any]]:
    """An adaptive (`cc`) media entry as the testbed's rtc sender runs it: (mtu, interval, the
    sender's and receiver's settings). The simulator's expansion has checked the values."""
    video = kind == "video"
    _check_keys(_user_keys(t), _RTC_KEYS | ({"frame_interval", "key_interval"} if video else {"interval"}), where)
    lo, hi = (150_000, 1_500_000) if video else (6_000, 64_000)
    mn, mx = _x_bps(t, "min_rate", where, lo), _x_bps(t, "max_rate", where, hi)
    interval = _x_ns(t, "frame_interval", where, 33_333_333) if video else _x_ns(t, "interval", where, 20_000_000)
    mtu = _x_bytes(t, "mtu", where, 1200)
    if not 56 <= mtu <= 1500:
        raise ScenarioError(f"{where}mtu: the testbed sends 56..1500-byte IP packets (RTP + sequence + send time), got {mtu}")
    rtc = {"cc": t["cc"], "min_bps": mn, "max_bps": mx, "start_bps": _x_bps(t, "start_rate", where, mn), "video": video,
           "mtu": mtu, "format": t.get("feedback", "rfc8888"), "fb_interval_ns": _x_ns(t, "feedback_interval", where, 100_000_000),
           "key_interval_ns": _x_ns(t, "key_interval", where),
           # checked by the simulator's expansion (in order, within start..stop)
           "pauses_ns": [[_native.parse_duration_ns(a), _native.parse_duration_ns(b)] for a, b in t.get("pause") or []]}
    return mtu, interval, rtc


@dataclass
class _Traffic:
    """The plan's flows as they are built from the scenario's traffic entries, in order (flow ids,
    ports and default names follow that order), and the sysctls and route attributes their TCP
    stacks ask for."""

    hosts: list[str]
    duration: int
    rng: Any
    media: list[Media] = field(default_factory=list)
    tcp: list[TcpFlow] = field(default_factory=list)
    kernel: dict[str, Any] = field(default_factory=lambda: _stack_switches())
    sysctls: dict[str, dict[str, str]] = field(default_factory=dict)
    owners: dict[tuple[str, str], str] = field(default_factory=dict)
    route_attrs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    fid: int = 0
    counters: dict[str, int] = field(default_factory=dict)

    def add(self, i: int, t: Any) -> None:
        """Traffic entry `i` of the expanded scenario."""
        where = f"traffic[{i}]."
        if not isinstance(t, dict):
            raise ScenarioError(f"traffic[{i}]: expected a table")
        kind = t.get("kind")
        src, dst = t.get("from"), t.get("to")
        for k, v in (("from", src), ("to", dst)):
            if v not in self.hosts:
                raise ScenarioError(f"{where}{k}: must name a host of the topology ({', '.join(self.hosts)}), got {v!r}")
        src, dst = str(src), str(dst)  # host names (checked above)
        start = _x_ns(t, "start", where, 0) if kind in ("audio", "video") else 0
        stop = _x_ns(t, "stop", where, self.duration)
        name = t.get("name")
        if kind in ("audio", "video"):
            self._media(t, where, kind, src, dst, start, stop, name)
        elif kind in _TCP_KINDS:
            self._tcp(t, where, kind, src, dst, stop, name)
        else:
            raise ScenarioError(f"{where}kind: the testbed runs audio, video, bulk, web, ftp, got {kind!r}")

    def _media(self, t: dict, where: str, kind: str, src: str, dst: str, start: int, stop: int, name: Any) -> None:
        """A constant-rate audio or video flow, or an adaptive one (`cc`: `_adaptive`)."""
        rtc = None
        if "cc" in t:
            ip_size, interval, rtc = _adaptive(t, where, kind)
            per_tick, spacing = 1, 0
        elif kind == "audio":
            _check_keys(_user_keys(t), {"kind", "name", "from", "to", "size", "interval", "start", "stop", "ecn"}, where)
            ip_size = _x_bytes(t, "size", where, 80)
            interval = _x_ns(t, "interval", where, 20_000_000)
            per_tick, spacing = 1, 0
        else:
            _check_keys(_user_keys(t), {"kind", "name", "from", "to", "rate", "frame_interval", "packet_size", "mode", "start", "stop",
                                        "ecn"}, where)
            ip_size = _x_bytes(t, "packet_size", where, 1000)
            interval = _x_ns(t, "frame_interval", where, 40_000_000)
            b = _x_bps(t, "rate", where, 1_000_000)
            per_tick = max(1, round(b * interval / 1e9 / (8 * ip_size)))
            mode = t.get("mode", "bursty")
            if mode not in ("bursty", "paced"):
                raise ScenarioError(f"{where}mode: must be bursty or paced, got {mode!r}")
            spacing = interval // per_tick if mode == "paced" else 0
        if rtc is None and not 56 <= ip_size <= 1500:
            raise ScenarioError(f"{where}size: the testbed sends 56..1500-byte IP packets (RTP + sequence + send time), got {ip_size}")
        if interval <= 0:
            raise ScenarioError(f"{where}interval: must be > 0")
        n = self.counters.get(kind, 0)
        self.counters[kind] = n + 1
        self.media.append(Media(self.fid, name or f"{kind}{n}", kind, src, dst, ip_size, interval, per_tick, spacing, start, stop,
                           2 if t.get("ecn") else 0, 5004 + 2 * len(self.media), rtc))
        # the simulator numbers an adaptive flow's feedback flow (NAME.feedback) next
        self.fid += 1 if rtc is None else 2

    def _tcp(self, t: dict, where: str, kind: str, src: str, dst: str, stop: int, name: Any) -> None:
        """A bulk, web or ftp entry: its flows, and what its TCP stack sets in the namespaces and routes."""
        _check_keys(_user_keys(t), set(_TCP_KEYS) | set(t.get("stack_overrides") or ()) | {"stack_overrides", "tcp"}, where)
        sw = _tcp_stack(t, where, self.kernel)
        if t.get("series"):
            raise ScenarioError(f"{where}series: the testbed does not record tcp_series (the kernel's cwnd is not sampled)")
        for key, (side, sysctl, conv) in _SYSCTL.items():  # not `name`: that is the flow's
            for node in {"both": (src, dst), "snd": (src,), "rcv": (dst,)}[side]:
                _set_sysctl(self.sysctls, self.owners, node, sysctl, conv(sw.get(key, self.kernel.get(key))), where + key)
        rmem = f"4096 {_size_b(sw.get('tcp_rmem_default', self.kernel['tcp_rmem_default']))} {_size_b(sw.get('tcp_rmem_max', self.kernel['tcp_rmem_max']))}"
        _set_sysctl(self.sysctls, self.owners, dst, "net.ipv4.tcp_rmem", rmem, where + "tcp_rmem_max")
        if sw.get("min_rto", self.kernel["min_rto"]) != self.kernel["min_rto"]:
            ms = _x_ns(t, "min_rto", where, 200_000_000) / 1e6
            self.route_attrs.setdefault((src, dst), {})["rto_min"] = f"{ms:g}ms"
        if sw.get("init_rcv_wnd", 0):
            self.route_attrs.setdefault((dst, src), {})["initrwnd"] = str(int(sw["init_rcv_wnd"]))
        flows = t.get("flows", 1)
        if not isinstance(flows, int) or not 1 <= flows <= 64:
            raise ScenarioError(f"{where}flows: expected a whole number 1..64, got {flows!r}")
        if kind == "ftp":
            if "size" in _user_keys(t):
                raise ScenarioError(f"{where}size: an ftp flow sends until its stop time; give stop, not size")
            total = None
        else:
            total = _x_bytes(t, "size", where)
            if total is None:
                raise ScenarioError(f"{where}size: missing (bytes to transfer, e.g. \"28MB\")")
        iw = sw.get("iw", 10)
        if not isinstance(iw, int) or not 1 <= iw <= 100:
            raise ScenarioError(f"{where}iw: expected segments 1..100, got {iw!r}")
        cc = sw.get("cc", "cubic")
        if cc not in ("reno", "cubic", "bbr", "newreno"):
            raise ScenarioError(f"{where}cc: the testbed offers reno, cubic, bbr, got {cc!r}")
        cc = "reno" if cc == "newreno" else cc
        mss = t["mss"] if isinstance(t.get("mss"), int) else _x_bytes(t, "mss", where)
        rcvbuf = _x_bytes(t, "so_rcvbuf", where)  # SO_RCVBUF, set before connect
        start = _start_ns(t.get("start", t.get("start_ns", 0)), where + "start", self.rng)
        n = self.counters.get(kind, 0)
        self.counters[kind] = n + 1
        for j in range(flows):
            part = None if total is None else (total // flows + (1 if j < total % flows else 0))
            nm = (name or f"{kind}{n}") + (f".{j}" if flows > 1 else "")
            self.tcp.append(TcpFlow(self.fid, nm, kind, src, dst, part, iw, cc, start, stop, mss, rcvbuf, 6000 + len(self.tcp)))
            self.fid += 1


def _rwnd_budgets(exp: dict[str, Any], hosts: list[str], tcp: list[TcpFlow]) -> dict[str, int]:
    """Per host, the advertised-window budget of its [hosts.<host>.rwnd] table (the receive
    buffers of its flows are then the moderation's, not their own)."""
    budgets: dict[str, int] = {}
    # The simulator's moderation table, [hosts.<host>.rwnd] (docs/tcp.md); the kernel can honour an
    # equal split applied from the SYN (SO_RCVBUF before connect), so other options are refused.
    hosts_tbl = exp.get("hosts") or {}
    if not isinstance(hosts_tbl, dict):
        raise ScenarioError("hosts: expected a table of hosts, e.g. [hosts.client.rwnd]")
    for h, htbl in hosts_tbl.items():
        if not isinstance(htbl, dict):
            raise ScenarioError(f"hosts.{h}: expected a table")
        _check_keys(htbl, {"rwnd"}, f"hosts.{h}.")
        if h not in hosts:
            raise ScenarioError(f"hosts.{h}: no host of that name ({', '.join(hosts)})")
        rw = htbl.get("rwnd")
        if rw is None:
            continue
        where = f"hosts.{h}.rwnd."
        if not isinstance(rw, dict):
            raise ScenarioError(f"hosts.{h}.rwnd: expected a table like {{ budget = \"20kB\" }}")
        _check_keys(_user_keys(rw), {"budget", "split", "from_syn", "only_with_media", "media_idle", "enabled", "weights", "mechanism"}, where)
        if rw.get("enabled", True) is False:
            continue
        fixed: tuple[tuple[str, object], ...] = (("split", "equal"), ("from_syn", True), ("only_with_media", False),
                                                ("mechanism", "so_rcvbuf"))
        for key, only in fixed:
            if key in rw and rw[key] != only:
                raise ScenarioError(f"{where}{key}: the testbed supports only {key} = {only!r} (SO_RCVBUF set before connect), got {rw[key]!r}")
        if "weights" in rw:
            raise ScenarioError(f"{where}weights: the testbed splits the budget equally only")
        b_ = _x_bytes(rw, "budget", where)
        if b_ is None:
            raise ScenarioError(f"{where}budget: missing (bytes of advertised window shared by the host's flows, e.g. \"20kB\")")
        budgets[h] = b_
        for f in tcp:
            if f.dst == h:
                f.rcvbuf = None  # the moderation sets the receive buffers of this host's flows
    return budgets


def _sampling(exp: dict[str, Any], links: list[Link]) -> tuple[int, list[str]]:
    """The queue sampling interval (0: none) and the channels sampled, from [output]."""
    out = exp.get("output") or {}
    _check_keys(_user_keys(out), {"queue_sample_interval", "queues", "pcap"}, "output.")
    qsi = _x_ns(out, "queue_sample_interval", "output.", 0)
    if qsi and qsi < 20_000_000:
        raise ScenarioError("output.queue_sample_interval: the testbed samples the kernel qdiscs with `tc`; use 20ms or more")
    names = [c.name for l in links for c in (l.fwd, l.rev)]
    queues = out.get("queues", [l.fwd.name for l in links])
    for i, q in enumerate(queues):
        if q not in names:
            raise ScenarioError(f"output.queues[{i}]: no channel {q!r} (channels: {', '.join(names)})")
    return qsi, queues
