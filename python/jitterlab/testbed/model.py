"""What the testbed builds for a run: its plan (`Plan`): namespaces, links of two channels each,
their queues, the media and TCP flows, and the addresses and routes derived from them. Made by
`jitterlab.testbed.plan.plan` from a scenario, read by `jitterlab.testbed.net` and the driver."""
from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from jitterlab._native import ScenarioError


@dataclass
class Queue:
    kind: str  # a queue kind of the simulator's registry (droptail, red, codel, fq_codel, pie, ...)
    limit: int
    unit: str  # pkt | B
    params: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    table: dict[str, Any] | None = None  # the table as the user wrote it (None: the default queue)

    def qdisc(self) -> str:
        """The Linux qdisc this queue needs (drop-tail), or the simulator discipline's name (any
        other kind runs in the userspace link)."""
        if self.kind == "droptail":
            return "pfifo" if self.unit == "pkt" else "bfifo"
        return self.kind

    @property
    def in_kernel(self) -> bool:
        """Whether a kernel qdisc (HTB + pfifo/bfifo) can be this queue: drop-tail only. Every other
        kind is the simulator's own discipline in the userspace link (these kernels have none of
        the AQM qdiscs, and a kernel's CoDel would not be the simulator's CoDel anyway)."""
        return self.kind == "droptail"


@dataclass
class Channel:
    name: str
    src: str
    dst: str
    rate_bps: int  # the rate, or the mean rate of a trace / the cellular model
    delay_ns: int
    queue: Queue
    capacity: str = "rate"  # rate | trace | cellular
    capacity_key: str = ""  # the key the user wrote (access.down_trace, ...)
    overhead: int = 0
    burst: int | None = None  # the link's `burst` (HTB's burst and cburst), bytes; None: not given
    opportunities_ms: list[int] | None = None  # trace / cellular: the delivery opportunities
    jitter: dict[str, Any] | None = None  # the simulator's distribution, parameters in seconds
    loss: float = 0.0
    loss_burst_ns: int | None = None
    reorder: bool = False
    key_prefix: str = ""
    sim_name: str = ""  # the simulator's name of this channel (names its random streams)
    #: a fixed-rate drop-tail channel with jitter leaving the delay router: its queue runs in the
    #: userspace link (the simulator's drop-tail at the rate), so that its jitter comes after its
    #: queue as in the simulator; a kernel HTB there would queue after the delay step (set by plan)
    jitter_after_queue: bool = False
    #: the scenario's `queue_at`: "host" (the sending node's own qdisc, which its TCP Small Queues
    #: count) or "network" (a middlebox's in front of the link)
    queue_at: str = "host"

    @property
    def userspace(self) -> bool:
        """Whether the userspace link (not a kernel qdisc) is this channel's queue: a trace or
        cellular capacity, a queue discipline other than drop-tail, or `jitter_after_queue`."""
        return self.capacity != "rate" or not self.queue.in_kernel or self.jitter_after_queue

    @property
    def userspace_key(self) -> str:
        """The key that puts this channel in the userspace link (for errors)."""
        return self.capacity_key if self.capacity != "rate" else f"{self.queue.key}.kind"


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
    # adaptive media (`cc`): the controller's and feedback's settings (plan._adaptive); None: CBR
    rtc: dict[str, Any] | None = None


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
    #: Per namespace, the sysctls its TCP stack gets (the entries' stack switches).
    sysctls: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Route attributes per (from, to) host pair: rto_min (ms), initrwnd (segments).
    route_attrs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

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
