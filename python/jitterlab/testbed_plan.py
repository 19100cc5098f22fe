"""From a scenario (the simulator's TOML, docs/scenarios.md) to a testbed plan: namespaces, links,
addresses, routes, qdiscs, delays and workloads. Pure Python, no system calls, so it is tested
without root. Keys the testbed cannot honour are refused with an error naming the key.

Topology: the `[access]` and `[dumbbell]` shorthands (generic `[links.*]` are refused for now).
Every link is a veth pair between two namespaces; the queue and rate of the channel a -> b sit on
a's veth (HTB at the rate, pfifo/bfifo or an AQM as its leaf). Propagation delay is added by one
delay line (TUN, userspace) in a router that every host-to-host path crosses: each (source host,
destination host) pair gets the sum of the link delays along its path.
"""
from __future__ import annotations

import ipaddress
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from jitterlab._native import ScenarioError

# ---------------------------------------------------------------------------------------------
# units (docs/scenarios.md)

_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_RATE = {"bit": 1, "bps": 1, "kbit": 1e3, "kbps": 1e3, "mbit": 1e6, "mbps": 1e6, "gbit": 1e9, "gbps": 1e9}
_TIME = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9}
_SIZE = {"b": 1, "kb": 1e3, "kib": 1024, "mb": 1e6, "mib": 1024**2, "gb": 1e9, "gib": 1024**3}


def _parse(v: Any, units: dict[str, float], key: str, what: str, example: str) -> float:
    if isinstance(v, str):
        m = re.fullmatch(r"\s*" + _NUM + r"\s*([A-Za-zµ]+)(?:/s)?\s*", v)
        if m and m.group(2).lower() in units:
            return float(m.group(1)) * units[m.group(2).lower()]
    raise ScenarioError(f"{key}: expected a {what} like {example!r}, got {v!r}")


def rate_bps(v: Any, key: str) -> int:
    r = int(_parse(v, _RATE, key, "rate", "4Mbit"))
    if r <= 0:
        raise ScenarioError(f"{key}: must be > 0, got {v!r}")
    return r


def time_ns(v: Any, key: str) -> int:
    t = int(round(_parse(v, _TIME, key, "duration", "20ms")))
    if t < 0:
        raise ScenarioError(f"{key}: must be >= 0, got {v!r}")
    return t


def size(v: Any, key: str) -> tuple[int, str]:
    """(value, "pkt"|"B")."""
    if isinstance(v, str) and re.fullmatch(r"\s*[0-9]+\s*pkts?\s*", v):
        return int(re.sub(r"\D", "", v)), "pkt"
    if isinstance(v, int) and not isinstance(v, bool):
        return v, "B"
    return int(_parse(v, _SIZE, key, "size", "80B")), "B"


def size_bytes(v: Any, key: str) -> int:
    n, unit = size(v, key)
    if unit != "B":
        raise ScenarioError(f"{key}: expected a size in bytes like '372kB', got {v!r}")
    return n


# ---------------------------------------------------------------------------------------------
# the plan

@dataclass
class Queue:
    kind: str  # droptail, red, codel, fq_codel, pie, cake
    limit: int
    unit: str  # pkt | B
    params: dict[str, Any] = field(default_factory=dict)
    key: str = ""

    def qdisc(self) -> str:
        """The Linux qdisc this queue needs."""
        if self.kind == "droptail":
            return "pfifo" if self.unit == "pkt" else "bfifo"
        return self.kind


@dataclass
class Channel:
    name: str
    src: str
    dst: str
    rate_bps: int
    delay_ns: int
    queue: Queue


@dataclass
class Link:
    name: str
    a: str
    b: str
    fwd: Channel
    rev: Channel
    index: int = 0

    def subnet(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(f"10.{100 + self.index // 250}.{self.index % 250}.0/24")

    def addr(self, node: str) -> str:
        base = self.subnet().network_address
        return str(base + (1 if node == self.a else 2))


@dataclass
class Media:
    flow_id: int
    name: str
    kind: str  # audio | video
    src: str
    dst: str
    ip_size: int
    interval_ns: int
    per_tick: int
    spacing_ns: int
    start_ns: int
    stop_ns: int
    tos: int
    port: int


@dataclass
class TcpFlow:
    flow_id: int
    name: str
    role: str  # bulk | web | ftp
    src: str  # data sender (listens)
    dst: str  # data receiver (connects)
    size: int | None  # bytes; None = until stop (ftp)
    iw: int
    cc: str
    start_ns: int
    stop_ns: int
    mss: int | None
    rcvbuf: int | None
    port: int


@dataclass
class Plan:
    name: str
    duration_ns: int
    nodes: list[str]
    links: list[Link]
    media: list[Media]
    tcp: list[TcpFlow]
    rwnd_budget: dict[str, int]  # receiving host -> budget in bytes
    delay_router: str
    hosts: list[str]
    queue_sample_ns: int = 0
    sampled_queues: list[str] = field(default_factory=list)

    def channels(self) -> list[Channel]:
        return [c for l in self.links for c in (l.fwd, l.rev)]

    def neighbours(self, n: str) -> list[tuple[str, Link]]:
        out = []
        for l in self.links:
            if l.a == n:
                out.append((l.b, l))
            elif l.b == n:
                out.append((l.a, l))
        return out

    def path(self, src: str, dst: str) -> list[str]:
        prev: dict[str, str | None] = {src: None}
        q = deque([src])
        while q:
            n = q.popleft()
            for m, _ in sorted(self.neighbours(n)):
                if m not in prev:
                    prev[m] = n
                    q.append(m)
        if dst not in prev:
            raise ScenarioError(f"traffic: no path from {src!r} to {dst!r}")
        p = [dst]
        while prev[p[-1]] is not None:
            p.append(prev[p[-1]])  # type: ignore[arg-type]
        return p[::-1]

    def channel(self, a: str, b: str) -> Channel:
        for l in self.links:
            if l.a == a and l.b == b:
                return l.fwd
            if l.b == a and l.a == b:
                return l.rev
        raise KeyError((a, b))

    def path_delay_ns(self, src: str, dst: str) -> int:
        p = self.path(src, dst)
        return sum(self.channel(x, y).delay_ns for x, y in zip(p, p[1:]))

    def host_addr(self, n: str) -> str:
        return self.neighbours(n)[0][1].addr(n)

    def next_hop(self, n: str, subnet_link: Link) -> tuple[str, Link] | None:
        """(gateway address, link to use) for reaching `subnet_link`'s subnet from node n; None if
        n is on it."""
        if n in (subnet_link.a, subnet_link.b):
            return None
        p = self.path(n, subnet_link.a)
        p2 = self.path(n, subnet_link.b)
        if len(p2) < len(p):
            p = p2
        nxt = p[1]
        link = next(l for m, l in self.neighbours(n) if m == nxt)
        return link.addr(nxt), link


# ---------------------------------------------------------------------------------------------
# scenario -> plan

_UNSUPPORTED_LINK = {"jitter": "random per-packet delay is not emulated; remove it or use the simulator",
                     "trace": "capacity traces are not emulated; use the simulator",
                     "trace_data": "capacity traces are not emulated; use the simulator",
                     "loss": "random link loss is not emulated; use the simulator",
                     "reorder": "reordering is not emulated; use the simulator"}

QUEUE_KINDS = {"droptail", "red", "codel", "fq_codel", "pie", "cake"}


def _queue(v: Any, key: str, default_limit: int = 1000) -> Queue:
    if v is None:
        return Queue("droptail", default_limit, "pkt", key=key)
    if not isinstance(v, dict):
        raise ScenarioError(f"{key}: expected a table like {{ kind = \"droptail\", limit = \"500pkt\" }}")
    kind = v.get("kind", "droptail")
    if kind not in QUEUE_KINDS:
        raise ScenarioError(f"{key}.kind: the testbed knows {', '.join(sorted(QUEUE_KINDS))}, got {kind!r}")
    limit, unit = size(v.get("limit", f"{default_limit}pkt"), f"{key}.limit")
    params = {k: x for k, x in v.items() if k not in ("kind", "limit")}
    if kind == "droptail" and params:
        raise ScenarioError(f"{key}.{sorted(params)[0]}: unknown key for a droptail queue (use kind, limit)")
    return Queue(kind, limit, unit, params, key)


def _no_netem_keys(d: dict, keys: list[str], where: str) -> None:
    for k in keys:
        if k in d and d[k] not in (None, False, 0, 0.0):
            base = k.split("_", 1)[1] if "_" in k and k.split("_", 1)[0] in ("core", "down", "up", "access", "bottleneck") else k
            why = _UNSUPPORTED_LINK.get(base, "not supported by the testbed")
            raise ScenarioError(f"{where}{k}: the testbed cannot honour this key ({why})")


def _check_keys(d: dict, allowed: set[str], where: str) -> None:
    for k in d:
        if k not in allowed:
            raise ScenarioError(f"{where}{k}: unknown key (known: {', '.join(sorted(allowed))})")


# TCP keys of the simulator (docs/tcp.md) the testbed honours, and those it accepts only at the
# value real Linux TCP has anyway (Linux's slow start adds the segments each ACK covers: ABC, L = 2
# with delayed ACKs).
_TCP_KEYS = ("kind", "name", "from", "to", "size", "flows", "iw", "cc", "start", "stop", "mss", "rcvbuf", "rwnd")
_TCP_DEFAULT_ONLY: dict[str, tuple] = {
    "recovery": ("sack",), "limited_transmit": (True,), "delack": ("40ms",), "wscale": (True,), "ecn": (False,),
    "pacing": (False,), "abc": (True, 2), "series": (False,), "min_rto": ("200ms",),
    "hystart_round_fix": (True,),
}


def _start_ns(v: Any, key: str, rng: Any) -> int:
    """A start time, or a distribution table drawn with the run's seed (as the simulator does,
    though not with the same random numbers)."""
    if not isinstance(v, dict):
        return time_ns(v, key)
    d = v.get("dist")
    if d == "uniform":
        lo, hi = time_ns(v.get("min"), key + ".min"), time_ns(v.get("max"), key + ".max")
        if hi < lo:
            raise ScenarioError(f"{key}.max: must be >= min")
        return int(lo + (hi - lo) * rng.random())
    if d == "exponential":
        return int(rng.exponential(time_ns(v.get("mean"), key + ".mean")))
    if d == "normal":
        return max(0, int(rng.normal(time_ns(v.get("mean"), key + ".mean"), time_ns(v.get("sd"), key + ".sd"))))
    raise ScenarioError(f"{key}.dist: must be uniform, exponential or normal, got {d!r}")


def plan(sc: dict[str, Any], seed: int = 1) -> Plan:
    import numpy as np

    rng = np.random.default_rng(seed)
    _check_keys(sc, {"name", "description", "duration", "access", "dumbbell", "links", "traffic", "output", "hosts"}, "")
    if "duration" not in sc:
        raise ScenarioError("duration: missing (required)")
    duration = time_ns(sc["duration"], "duration")
    if sc.get("links"):
        raise ScenarioError("links: the testbed builds the [access] and [dumbbell] shorthands only; generic [links.*] are not supported yet")
    links: list[Link] = []
    hosts: list[str] = []
    if "access" in sc and "dumbbell" in sc:
        raise ScenarioError("dumbbell: the testbed builds one topology per run; give [access] or [dumbbell], not both")
    if "access" in sc:
        a = sc["access"]
        _check_keys(a, {"server", "router", "client", "core_rate", "core_delay", "core_queue", "core_jitter", "core_loss",
                        "down_rate", "down_delay", "down_queue", "down_jitter", "down_trace", "down_trace_data", "down_loss",
                        "down_reorder", "up_rate", "up_delay", "up_queue", "up_jitter", "up_trace", "up_trace_data", "up_loss",
                        "up_reorder"}, "access.")
        _no_netem_keys(a, ["core_jitter", "core_loss", "down_jitter", "down_trace_data", "down_loss", "down_reorder",
                           "up_jitter", "up_trace_data", "up_loss", "up_reorder"], "access.")
        s, r, c = a.get("server", "server"), a.get("router", "router"), a.get("client", "client")
        for k in ("core_rate", "core_delay", "down_rate", "down_delay"):
            if k not in a:
                raise ScenarioError(f"access.{k}: missing (required)")
        core_rate = rate_bps(a["core_rate"], "access.core_rate")
        core_delay = time_ns(a["core_delay"], "access.core_delay")
        core_q = _queue(a.get("core_queue"), "access.core_queue")
        down_rate = rate_bps(a["down_rate"], "access.down_rate")
        down_delay = time_ns(a["down_delay"], "access.down_delay")
        down_q = _queue(a.get("down_queue"), "access.down_queue")
        up_rate = rate_bps(a["up_rate"], "access.up_rate") if "up_rate" in a else down_rate
        up_delay = time_ns(a["up_delay"], "access.up_delay") if "up_delay" in a else down_delay
        up_q = _queue(a["up_queue"], "access.up_queue") if "up_queue" in a else _queue(a.get("down_queue"), "access.down_queue")
        links.append(Link("core", s, r, Channel("core", s, r, core_rate, core_delay, core_q),
                          Channel("core.rev", r, s, core_rate, core_delay, core_q)))
        links.append(Link("bottleneck", r, c, Channel("bottleneck", r, c, down_rate, down_delay, down_q),
                          Channel("bottleneck.rev", c, r, up_rate, up_delay, up_q)))
        hosts = [s, c]
        delay_router = r
    elif "dumbbell" in sc:
        d = sc["dumbbell"]
        _check_keys(d, {"pairs", "bottleneck_rate", "bottleneck_delay", "queue", "reverse_queue", "access_rate",
                        "access_delay", "access_queue", "access_delays"}, "dumbbell.")
        n = d.get("pairs")
        if not isinstance(n, int) or not 1 <= n <= 20:
            raise ScenarioError(f"dumbbell.pairs: expected a whole number 1..20 for the testbed, got {n!r}")
        for k in ("bottleneck_rate", "bottleneck_delay", "access_rate", "access_delay"):
            if k not in d and not (k == "access_delay" and "access_delays" in d):
                raise ScenarioError(f"dumbbell.{k}: missing (required)")
        br = rate_bps(d["bottleneck_rate"], "dumbbell.bottleneck_rate")
        bd = time_ns(d["bottleneck_delay"], "dumbbell.bottleneck_delay")
        q = _queue(d.get("queue"), "dumbbell.queue")
        rq = _queue(d["reverse_queue"], "dumbbell.reverse_queue") if "reverse_queue" in d else q
        ar = rate_bps(d["access_rate"], "dumbbell.access_rate")
        aq = _queue(d.get("access_queue"), "dumbbell.access_queue")
        if "access_delays" in d:
            ads = d["access_delays"]
            if not isinstance(ads, list) or len(ads) != n:
                raise ScenarioError(f"dumbbell.access_delays: expected a list of {n} delays")
            adl = [time_ns(x, f"dumbbell.access_delays[{i}]") for i, x in enumerate(ads)]
        else:
            adl = [time_ns(d["access_delay"], "dumbbell.access_delay")] * n
        links.append(Link("bottleneck", "r1", "r2", Channel("bottleneck", "r1", "r2", br, bd, q),
                          Channel("bottleneck.rev", "r2", "r1", br, bd, rq)))
        for i in range(1, n + 1):
            for h, rt in ((f"s{i}", "r1"), (f"d{i}", "r2")):
                nm = f"{h}-{rt}"
                links.append(Link(nm, h, rt, Channel(nm, h, rt, ar, adl[i - 1], aq), Channel(nm + ".rev", rt, h, ar, adl[i - 1], aq)))
            hosts += [f"s{i}", f"d{i}"]
        delay_router = "r1"
    else:
        raise ScenarioError("access: the testbed needs an [access] or [dumbbell] topology")
    for i, l in enumerate(links):
        l.index = i
    nodes: list[str] = []
    for l in links:
        for x in (l.a, l.b):
            if x not in nodes:
                nodes.append(x)

    media: list[Media] = []
    tcp: list[TcpFlow] = []
    fid = 0
    counters: dict[str, int] = {}
    for i, t in enumerate(sc.get("traffic") or []):
        where = f"traffic[{i}]."
        if not isinstance(t, dict):
            raise ScenarioError(f"traffic[{i}]: expected a table")
        kind = t.get("kind")
        src, dst = t.get("from"), t.get("to")
        for k, v in (("from", src), ("to", dst)):
            if v not in hosts:
                raise ScenarioError(f"{where}{k}: must name a host of the topology ({', '.join(hosts)}), got {v!r}")
        src, dst = str(src), str(dst)  # host names (checked above)
        start = time_ns(t.get("start", "0s"), where + "start") if kind in ("audio", "video") else 0
        stop = time_ns(t["stop"], where + "stop") if "stop" in t else duration
        name = t.get("name")
        if kind in ("audio", "video"):
            if kind == "audio":
                _check_keys(t, {"kind", "name", "from", "to", "size", "interval", "start", "stop", "ecn"}, where)
                ip_size = size_bytes(t.get("size", "80B"), where + "size")
                interval = time_ns(t.get("interval", "20ms"), where + "interval")
                per_tick, spacing = 1, 0
            else:
                _check_keys(t, {"kind", "name", "from", "to", "rate", "frame_interval", "packet_size", "mode", "start", "stop", "ecn"}, where)
                ip_size = size_bytes(t.get("packet_size", "1000B"), where + "packet_size")
                interval = time_ns(t.get("frame_interval", "40ms"), where + "frame_interval")
                b = rate_bps(t.get("rate", "1Mbit"), where + "rate")
                per_tick = max(1, round(b * interval / 1e9 / (8 * ip_size)))
                mode = t.get("mode", "bursty")
                if mode not in ("bursty", "paced"):
                    raise ScenarioError(f"{where}mode: must be bursty or paced, got {mode!r}")
                spacing = interval // per_tick if mode == "paced" else 0
            if not 56 <= ip_size <= 1500:
                raise ScenarioError(f"{where}size: the testbed sends 56..1500-byte IP packets (RTP + sequence + send time), got {ip_size}")
            if interval <= 0:
                raise ScenarioError(f"{where}interval: must be > 0")
            n = counters.get(kind, 0)
            counters[kind] = n + 1
            media.append(Media(fid, name or f"{kind}{n}", kind, src, dst, ip_size, interval, per_tick, spacing, start, stop,
                               2 if t.get("ecn") else 0, 5004 + 2 * len(media)))
            fid += 1
        elif kind in ("bulk", "web", "ftp"):
            _check_keys(t, set(_TCP_KEYS) | set(_TCP_DEFAULT_ONLY), where)
            for k, ok in _TCP_DEFAULT_ONLY.items():
                if k in t and t[k] not in ok:
                    raise ScenarioError(f"{where}{k}: the testbed cannot honour {t[k]!r} (real Linux TCP: only "
                                        f"{' / '.join(repr(x) for x in ok)})")
            flows = t.get("flows", 1)
            if not isinstance(flows, int) or not 1 <= flows <= 64:
                raise ScenarioError(f"{where}flows: expected a whole number 1..64, got {flows!r}")
            if kind == "ftp":
                if "size" in t:
                    raise ScenarioError(f"{where}size: an ftp flow sends until its stop time; give stop, not size")
                total = None
            else:
                if "size" not in t:
                    raise ScenarioError(f"{where}size: missing (bytes to transfer, e.g. \"28MB\")")
                total = size_bytes(t["size"], where + "size")
            iw = t.get("iw", 10)
            if not isinstance(iw, int) or not 1 <= iw <= 100:
                raise ScenarioError(f"{where}iw: expected segments 1..100, got {iw!r}")
            cc = t.get("cc", "cubic")
            if cc not in ("reno", "cubic", "bbr", "newreno"):
                raise ScenarioError(f"{where}cc: the testbed offers reno, cubic, bbr, got {cc!r}")
            cc = "reno" if cc == "newreno" else cc
            mss = size_bytes(t["mss"], where + "mss") if "mss" in t else None
            if "rcvbuf" in t and "rwnd" in t:
                raise ScenarioError(f"{where}rwnd: give either rcvbuf or rwnd, not both")
            rcvbuf = None
            for rk in ("rcvbuf", "rwnd"):
                if rk in t:
                    n_, unit = size(t[rk], where + rk)
                    rcvbuf = n_ * (mss or 1448) if unit == "pkt" else n_
            start = _start_ns(t.get("start", "0s"), where + "start", rng)
            n = counters.get(kind, 0)
            counters[kind] = n + 1
            for j in range(flows):
                part = None if total is None else (total // flows + (1 if j < total % flows else 0))
                nm = (name or f"{kind}{n}") + (f".{j}" if flows > 1 else "")
                tcp.append(TcpFlow(fid, nm, kind, src, dst, part, iw, cc, start, stop, mss, rcvbuf, 6000 + len(tcp)))
                fid += 1
        else:
            raise ScenarioError(f"{where}kind: the testbed runs audio, video, bulk, web, ftp, got {kind!r}")
    # one initial window per (sender, receiver): it is a route attribute
    iws: dict[tuple[str, str], int] = {}
    for f in tcp:
        if iws.setdefault((f.src, f.dst), f.iw) != f.iw:
            raise ScenarioError(f"traffic: iw: flows from {f.src} to {f.dst} ask for different initial windows "
                                f"({iws[(f.src, f.dst)]} and {f.iw}); the testbed sets IW per route (initcwnd)")
    budgets: dict[str, int] = {}
    # The simulator's moderation table, [hosts.<host>.rwnd] (docs/tcp.md); the kernel can honour an
    # equal split applied from the SYN (SO_RCVBUF before connect), so other options are refused.
    hosts_tbl = sc.get("hosts") or {}
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
        _check_keys(rw, {"budget", "split", "from_syn", "only_with_media", "media_idle", "enabled", "weights"}, where)
        if rw.get("enabled", True) is False:
            continue
        fixed: tuple[tuple[str, object], ...] = (("split", "equal"), ("from_syn", True), ("only_with_media", False))
        for key, only in fixed:
            if key in rw and rw[key] != only:
                raise ScenarioError(f"{where}{key}: the testbed supports only {key} = {only!r} (SO_RCVBUF set before connect), got {rw[key]!r}")
        if "weights" in rw:
            raise ScenarioError(f"{where}weights: the testbed splits the budget equally only")
        if "budget" not in rw:
            raise ScenarioError(f"{where}budget: missing (bytes of advertised window shared by the host's flows, e.g. \"20kB\")")
        budgets[h] = size_bytes(rw["budget"], f"{where}budget")
        for f in tcp:
            if f.dst == h:
                f.rcvbuf = None  # the moderation sets the receive buffers of this host's flows
    out = sc.get("output") or {}
    _check_keys(out, {"queue_sample_interval", "queues", "pcap"}, "output.")
    qsi = time_ns(out["queue_sample_interval"], "output.queue_sample_interval") if "queue_sample_interval" in out else 0
    if qsi and qsi < 20_000_000:
        raise ScenarioError("output.queue_sample_interval: the testbed samples the kernel qdiscs with `tc`; use 20ms or more")
    names = [c.name for l in links for c in (l.fwd, l.rev)]
    queues = out.get("queues", [l.fwd.name for l in links])
    for i, q in enumerate(queues):
        if q not in names:
            raise ScenarioError(f"output.queues[{i}]: no channel {q!r} (channels: {', '.join(names)})")
    pl = Plan(sc.get("name", "scenario"), duration, nodes, links, media, tcp, budgets, delay_router, hosts)
    pl.queue_sample_ns = qsi
    pl.sampled_queues = list(queues) if qsi else []
    return pl
