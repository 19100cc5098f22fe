"""Network namespaces, veth links and qdiscs for the testbed (needs root).

Every namespace this module creates is named `jl-<pid>-<rand>-<node>` (the run prefix carries the
driver's pid, so `cleanup()` can tell leftovers of dead runs from live ones), and every interface
`<ifprefix><link><a|b>` inside them. Links are created directly between two of our namespaces
(`ip -n A link add ... peer ... netns B`), so no interface ever appears in the host's namespace,
and all traffic stays inside our namespaces.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

from jitterlab.testbed.model import Channel, Plan, Queue

NS_PREFIX = "jl-"
_NS_RE = re.compile(r"^jl-(\d+)-([0-9a-f]{4})-")


class TestbedError(Exception):
    """The testbed cannot run here (not root, missing tool or qdisc, setup failure)."""


# Bytes HTB counts on a veth beyond the IP packet (the Ethernet header; qdisc_pkt_len = skb->len).
ETH_HEADER = 14


def sh(*args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise TestbedError(f"`{' '.join(args)}` failed: {(p.stderr or p.stdout).strip()}")
    return p


def require_root() -> None:
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces, qdiscs, tcpdump); run it with sudo, "
                           "or use `jitterlab simulate` which needs no privileges")
    for tool in ("ip", "tc", "tcpdump"):
        if shutil.which(tool) is None:
            raise TestbedError(f"the testbed needs `{tool}` (iproute2 / tcpdump) on PATH")
    if not Path("/dev/net/tun").exists():
        raise TestbedError("the testbed needs /dev/net/tun (TUN support) for its delay line")


def list_namespaces() -> list[str]:
    p = sh("ip", "netns", "list", check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_ns_processes(ns: str, sig: int = signal.SIGKILL) -> None:
    p = sh("ip", "netns", "pids", ns, check=False)
    for tok in p.stdout.split():
        try:
            os.kill(int(tok), sig)
        except (ProcessLookupError, ValueError):
            pass


def delete_namespace(ns: str) -> None:
    """Kills what still runs inside (our workers, tcpdump: an open TUN keeps a namespace alive),
    then deletes it; its veths and TUN go with it."""
    kill_ns_processes(ns, signal.SIGKILL)
    for _ in range(50):
        if sh("ip", "netns", "pids", ns, check=False).stdout.strip() == "":
            break
        time.sleep(0.02)
    sh("ip", "netns", "del", ns, check=False)


def cleanup(all_runs: bool = False) -> list[str]:
    """Removes the namespaces of testbed runs whose driver is no longer alive (all jl- namespaces
    with all_runs). Returns the names removed."""
    removed = []
    for ns in list_namespaces():
        m = _NS_RE.match(ns)
        if not m:
            continue
        if not all_runs and int(m.group(1)) != os.getpid() and _pid_alive(int(m.group(1))):
            continue
        delete_namespace(ns)
        removed.append(ns)
    return removed


# ---------------------------------------------------------------------------------------------
# qdisc detection

_QDISC_CACHE: dict[str, bool] = {}
_PROBE_ARGS = {"red": ["red", "limit", "400000", "min", "30000", "max", "90000", "avpkt", "1000", "burst", "55",
                       "bandwidth", "10mbit", "probability", "0.1"]}


def qdisc_available(kind: str, probe_ns: str) -> bool:
    """Whether the kernel has qdisc `kind`: tries to attach it to a dummy device in `probe_ns`
    (one of our namespaces)."""
    if kind in _QDISC_CACHE:
        return _QDISC_CACHE[kind]
    # our own namespace's loopback; an unknown kind fails with "unknown", a known one may fail
    # for missing parameters (red), which still proves it exists
    args = _PROBE_ARGS.get(kind, [kind])
    p = sh("ip", "netns", "exec", probe_ns, "tc", "qdisc", "replace", "dev", "lo", "root", *args, check=False)
    err = (p.stderr + p.stdout).lower()
    ok = p.returncode == 0 or ("unknown" not in err and "no such file" not in err)
    sh("ip", "netns", "exec", probe_ns, "tc", "qdisc", "del", "dev", "lo", "root", check=False)
    _QDISC_CACHE[kind] = ok
    return ok


def available_cc() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


# ---------------------------------------------------------------------------------------------
# the network of one run

class Network:
    """The namespaces and links of one plan. `build()` sets everything up; `teardown()` removes it
    (idempotent)."""

    def __init__(self, plan: Plan, delay: str = "auto"):
        if delay not in ("auto", "netem", "tun"):
            raise TestbedError(f"delay: must be auto, netem or tun, got {delay!r}")
        self.plan = plan
        self.delay_request = delay
        self.delay_mode = "tun"
        self.tag = secrets.token_hex(2)
        self.prefix = f"{NS_PREFIX}{os.getpid()}-{self.tag}-"
        self.ifprefix = f"jl{self.tag}"
        self.ns = {n: self.prefix + n for n in plan.nodes}
        self.created: list[str] = []
        self.tun = f"{self.ifprefix}tun"

    def ifname(self, link_index: int, node: str) -> str:
        l = self.plan.links[link_index]
        return f"{self.ifprefix}{link_index}{'a' if node == l.a else 'b'}"

    def ip(self, node: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "-n", self.ns[node], *args, check=check)

    def exec(self, node: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", self.ns[node], *args, check=check)

    def sysctl(self, node: str, key: str, val: str) -> None:
        self.exec(node, "sysctl", "-qw", f"{key}={val}")

    # -- build ---------------------------------------------------------------------------------
    def build(self) -> None:
        for n in self.plan.nodes:
            sh("ip", "netns", "add", self.ns[n])
            self.created.append(self.ns[n])
            self.ip(n, "link", "set", "lo", "up")
        # Each host's TCP stack as its entries' profile and overrides say (per-namespace sysctls).
        for n, kv in self.plan.sysctls.items():
            for k, v in sorted(kv.items()):
                self.sysctl(n, k, v)
        self._check_features()
        ethtool = shutil.which("ethtool")
        for l in self.plan.links:
            ia, ib = self.ifname(l.index, l.a), self.ifname(l.index, l.b)
            self.ip(l.a, "link", "add", ia, "type", "veth", "peer", "name", ib, "netns", self.ns[l.b])
            for node, dev in ((l.a, ia), (l.b, ib)):
                self.ip(node, "addr", "add", f"{l.addr(node)}/24", "dev", dev)
                self.ip(node, "link", "set", dev, "up")
                if ethtool:
                    # MTU-sized packets on the wire: no segmentation or receive offloads
                    self.exec(node, ethtool, "-K", dev, "gso", "off", "tso", "off", "gro", "off", "tx", "off", "rx", "off", check=False)
        for n in self.plan.nodes:
            if len(self.plan.neighbours(n)) > 1:
                self.sysctl(n, "net.ipv4.ip_forward", "1")
            for k in ("all", "default"):
                self.sysctl(n, f"net.ipv4.conf.{k}.rp_filter", "0")
            for _, l in self.plan.neighbours(n):
                self.sysctl(n, f"net.ipv4.conf.{self.ifname(l.index, n)}.rp_filter", "0")
        # static routes along shortest-hop paths
        for n in self.plan.nodes:
            for l in self.plan.links:
                hop = self.plan.next_hop(n, l)
                if hop is None:
                    continue
                gw, via = hop
                self.ip(n, "route", "add", str(l.subnet()), "via", gw, "dev", self.ifname(via.index, n))
        for c in self.plan.channels():
            if not c.userspace:  # a trace / cellular channel's queue is the userspace link's
                self._shape(c)
        if self.delay_mode == "netem":
            self._netem_delays()
        else:
            self._delay_line_routing()
        self._initcwnd()

    def _check_features(self) -> None:
        for c in self.plan.channels():
            if not c.userspace and 0 < c.overhead < ETH_HEADER:
                raise TestbedError(f"{c.key_prefix}overhead: HTB on the testbed's veth counts each frame's {ETH_HEADER}-byte Ethernet header "
                                   f"itself; give 0 or at least {ETH_HEADER} B (got {c.overhead} B)")
        probe = self.plan.nodes[0]
        has_netem = qdisc_available("netem", self.ns[probe])
        if self.delay_request == "netem" and not has_netem:
            raise TestbedError("--delay netem: the kernel has no `netem` qdisc (sch_netem); use --delay tun (the userspace delay line)")
        self.delay_mode = "netem" if (self.delay_request == "netem" or (self.delay_request == "auto" and has_netem)) else "tun"
        kernel = [c for c in self.plan.channels() if not c.userspace]
        needs_userspace = [c for c in self.plan.channels() if c.userspace or c.jitter or c.loss or c.reorder]
        if needs_userspace:
            if self.delay_request == "netem":
                c = needs_userspace[0]
                key = c.capacity_key if c.userspace else c.key_prefix + ("jitter" if c.jitter else "loss" if c.loss else "reorder")
                raise TestbedError(f"{key}: needs the userspace link; use --delay tun (or auto)")
            self.delay_mode = "tun"
        needed = {"htb"} | {c.queue.qdisc() for c in kernel}
        for q in sorted(needed):
            if not qdisc_available(q, self.ns[probe]):
                keys = sorted({c.queue.key for c in kernel if c.queue.qdisc() == q}) or ["(rate limiting)"]
                raise TestbedError(f"{keys[0]}: the kernel has no `{q}` qdisc (sch_{q}); "
                                   f"run this scenario on the simulator or on a kernel with sch_{q}")
        have = available_cc()
        for f in self.plan.tcp:
            if f.cc not in have:
                raise TestbedError(f"traffic {f.name}: cc = {f.cc!r}: the kernel offers {', '.join(have)}")

    def _dev(self, c: Channel) -> tuple[str, str]:
        l = next(l for l in self.plan.links if {l.a, l.b} == {c.src, c.dst})
        return c.src, self.ifname(l.index, c.src)

    def _shape(self, c: Channel) -> None:
        node, dev = self._dev(c)
        # The scenario's `burst` (the simulator's token bucket, the same bytes); without one, HTB
        # still needs some: about 1 ms at the rate, at least one packet, so that a late qdisc
        # watchdog does not cost link time (the simulator then serialises exactly).
        burst = c.burst if c.burst is not None else max(1600, c.rate_bps // 8 // 1000)
        tc = ("ip", "netns", "exec", self.ns[node], "tc")
        sh(*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1", "r2q", "1")
        # `overhead`: bytes the simulator adds to each IP packet. HTB on a veth already counts each
        # frame's 14-byte Ethernet header, so tc gets the rest (below 14 B is refused in
        # _check_features; 0 = not given, where the testbed counts 14 B more than the simulator).
        ovh = ["overhead", str(c.overhead - ETH_HEADER)] if c.overhead > ETH_HEADER else []
        sh(*tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", f"{c.rate_bps}bit",
           "ceil", f"{c.rate_bps}bit", "burst", f"{burst}b", "cburst", f"{burst}b", "quantum", "1514", *ovh)
        sh(*tc, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *leaf_qdisc(c.queue, c.rate_bps))

    def _delay_line_routing(self) -> None:
        """Policy routing in the delay router: everything arriving on a veth goes into the TUN; what
        the delay line writes back arrives on the TUN and follows the main table."""
        r = self.plan.delay_router
        self.ip(r, "tuntap", "add", "dev", self.tun, "mode", "tun")
        self.ip(r, "link", "set", self.tun, "txqueuelen", "10000")
        self.ip(r, "link", "set", self.tun, "up")
        self.sysctl(r, f"net.ipv4.conf.{self.tun}.rp_filter", "0")
        self.sysctl(r, f"net.ipv4.conf.{self.tun}.accept_local", "1")
        self.ip(r, "route", "add", "default", "dev", self.tun, "table", "100")
        for _, l in self.plan.neighbours(r):
            self.ip(r, "rule", "add", "iif", self.ifname(l.index, r), "lookup", "100", "pref", "100")

    def _netem_delays(self) -> None:
        """netem present: each channel a -> b gets its delay on b's ingress, redirected (u32 + mirred)
        to an IFB device whose root qdisc is `netem delay D` (after the queue, as in the simulator).
        Not exercised on the development kernel, which has no netem."""
        for l in self.plan.links:
            for c in (l.fwd, l.rev):
                if c.delay_ns <= 0:
                    continue
                node = c.dst
                dev = self.ifname(l.index, node)
                ifb = dev + "i"
                self.ip(node, "link", "add", ifb, "type", "ifb")
                self.ip(node, "link", "set", ifb, "up")
                tc = ("ip", "netns", "exec", self.ns[node], "tc")
                sh(*tc, "qdisc", "add", "dev", ifb, "root", "netem", "delay", f"{c.delay_ns / 1000:.3f}us", "limit", "1000000")
                sh(*tc, "qdisc", "add", "dev", dev, "handle", "ffff:", "ingress")
                sh(*tc, "filter", "add", "dev", dev, "parent", "ffff:", "protocol", "all", "u32", "match", "u32", "0", "0",
                   "action", "mirred", "egress", "redirect", "dev", ifb)

    def link_config(self, seed: int) -> dict:
        """The userspace link's configuration (jitterlab_testbed::delayline): every channel with its
        delay, jitter, loss, reordering, (trace / cellular) opportunities and buffer or the
        simulator's queue discipline; one path class per (source host, destination host) with a
        step per channel crossed: [link, delay] for a channel whose queue is the userspace link,
        [delay] otherwise (its queue is the kernel qdisc on the veth)."""
        import ipaddress

        chans = self.plan.channels()
        index = {c.name: i for i, c in enumerate(chans)}
        cfg_ch = []
        for c in chans:
            trace = qdisc = None
            if c.userspace and c.queue.in_kernel and c.capacity != "rate":  # drop-tail on opportunities: Mahimahi's queue
                trace = {"schedule_ms": c.opportunities_ms,
                         "limit_pkts": c.queue.limit if c.queue.unit == "pkt" else None,
                         "limit_bytes": c.queue.limit if c.queue.unit == "B" else None}
            elif c.userspace:  # the simulator's discipline from the user's own table (drop-tail: jitter_after_queue)
                table = c.queue.table or {"kind": c.queue.kind, **({"limit": f"{c.queue.limit}{'pkt' if c.queue.unit == 'pkt' else 'B'}"}
                                                                   if c.queue.in_kernel else {})}
                qdisc = {"table": table, "path": c.queue.key, "rate_bps": c.rate_bps,
                         "overhead": c.overhead, "schedule_ms": c.opportunities_ms if c.capacity != "rate" else None}
            cfg_ch.append({"name": c.name, "sim_name": c.sim_name, "delay_ns": c.delay_ns, "jitter": c.jitter, "reorder": c.reorder,
                           "loss": c.loss, "loss_burst_ns": c.loss_burst_ns, "trace": trace, "qdisc": qdisc})
        classes: list[list] = [[]]
        rules = []
        for s in self.plan.hosts:
            for d in self.plan.hosts:
                if s == d:
                    continue
                p = self.plan.path(s, d)
                steps: list = []
                for x, y in zip(p, p[1:]):
                    c = self.plan.channel(x, y)
                    if c.userspace:
                        steps.append(["link", index[c.name]])
                    steps.append(["delay", index[c.name]])
                classes.append(steps)
                sa = int(ipaddress.IPv4Address(self.plan.host_addr(s)))
                da = int(ipaddress.IPv4Address(self.plan.host_addr(d)))
                rules.append([sa, 0xFFFFFFFF, da, 0xFFFFFFFF, len(classes) - 1])
        return {"tun": self.tun, "rules": rules, "classes": classes, "channels": cfg_ch, "seed": seed}

    def _initcwnd(self) -> None:
        """IW per (sender, receiver) as the route's initcwnd, on a /32 route in the sender, with the
        entries' rto_min; a receiver's initrwnd on its /32 route back to the sender."""
        done = set()
        pairs = [(f.src, f.dst, {"initcwnd": str(f.iw)}) for f in self.plan.tcp]
        pairs += [(a, b, {}) for (a, b) in self.plan.route_attrs]
        for src, dst, attrs in pairs:
            if (src, dst) in done:
                continue
            done.add((src, dst))
            attrs = {**attrs, **self.plan.route_attrs.get((src, dst), {})}
            addr = self.plan.host_addr(dst)
            p = self.plan.path(src, dst)
            link = next(l for m, l in self.plan.neighbours(src) if m == p[1])
            gw = link.addr(p[1])
            extra = [x for kv in sorted(attrs.items()) for x in kv]
            self.ip(src, "route", "replace", f"{addr}/32", "via", gw, "dev", self.ifname(link.index, src), *extra)

    # -- stats ---------------------------------------------------------------------------------
    def qdisc_stats(self, c: Channel) -> dict:
        node, dev = self._dev(c)
        p = self.exec(node, "tc", "-s", "-j", "qdisc", "show", "dev", dev, check=False)
        try:
            qs = json.loads(p.stdout or "[]")
        except json.JSONDecodeError:
            return {}
        for q in qs:
            if q.get("handle") == "10:":
                return q
        return {}

    # -- teardown ------------------------------------------------------------------------------
    def teardown(self) -> None:
        for ns in list(self.created):
            delete_namespace(ns)
            self.created.remove(ns)


def leaf_qdisc(q: Queue, rate_bps: int) -> list[str]:
    """The tc arguments of the queue behind the rate limiter (drop-tail: every other kind runs in
    the userspace link, plan.Queue.in_kernel)."""
    if q.kind == "droptail":
        return ["pfifo", "limit", str(q.limit)] if q.unit == "pkt" else ["bfifo", "limit", str(q.limit)]
    raise TestbedError(f"{q.key}.kind: {q.kind!r} is not a kernel qdisc here (it runs in the userspace link)")


class QueueSampler:
    """Samples the sampled channels' leaf qdiscs (`tc -s -j qdisc show`) every
    output.queue_sample_interval in a thread of the driver (one `tc` process per channel and
    sample: coarse, 20 ms at best)."""

    def __init__(self, net: Network, pl: Plan, t0: int, end: int):
        import threading

        self.net, self.pl, self.t0, self.end = net, pl, t0, end
        self.samples: list[tuple[int, str, int, int, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> None:
        if self.pl.queue_sample_ns and self.pl.sampled_queues:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        chans = {c.name: c for c in self.pl.channels()}
        k = 0
        while not self._stop.is_set():
            t = self.t0 + k * self.pl.queue_sample_ns
            if t >= self.end:
                return
            d = t - time.clock_gettime_ns(time.CLOCK_REALTIME)
            if d > 0 and self._stop.wait(d / 1e9):
                return
            for name in self.pl.sampled_queues:
                st = self.net.qdisc_stats(chans[name])
                now = time.clock_gettime_ns(time.CLOCK_REALTIME) - self.t0
                self.samples.append((now, name, int(st.get("qlen", 0)), int(st.get("backlog", 0)), int(st.get("drops", 0)),
                                     int(st.get("ecn_mark", st.get("marked", 0)))))
            k += 1
