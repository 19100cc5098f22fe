"""The testbed: a scenario run with real Linux TCP and real sockets in network namespaces.

`run(scenario, seed, out)` builds one namespace per host and router (veth links, offloads off,
HTB rate + pfifo/bfifo per fixed-rate drop-tail channel, a userspace link over TUN for delay,
jitter, loss, the Mahimahi queues of trace / cellular channels and the simulator's own queue
disciplines (CoDel, FQ-CoDel, PIE, RED, ...) wherever a scenario names one),
starts the workers (RTP sender/receiver at SCHED_FIFO, TCP workloads, tcpdump at the sender and
the receiver), waits for the scenario's duration, tears everything down (also on exceptions and
SIGINT/SIGTERM) and returns the same tables as the simulator (`jitterlab.sim.Result`) with
`source = "testbed"`. The tables come from the workers' own records: the RTP receiver logs the
sequence number and send time carried in each packet and the kernel's receive time; the TCP
workers log connect, first data, last byte acknowledged and TCP_INFO counters. The pcaps stay in
the output directory for the capture analysis and the advertised-window check.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np
import pandas as pd

from jitterlab import _io
from jitterlab import _native
from jitterlab import scenario as _scn
from jitterlab.capture import _null_strings
from jitterlab.sim import Result
from jitterlab.testbed import net as _net
from jitterlab.testbed import rtc
from jitterlab.testbed.net import Network, TestbedError, cleanup, require_root, sh  # noqa: F401
from jitterlab.testbed.plan import Plan, plan as make_plan

START_MARGIN_NS = 200_000_000  # all workers are ready; the schedule begins this much later


class _Interrupted(BaseException):
    pass


def _die_with_parent(parent: int) -> Any:
    """preexec_fn for every child (workers, tcpdump, probes): the kernel sends it SIGKILL when the
    driver dies, even by SIGKILL (prctl PR_SET_PDEATHSIG; kept across `ip netns exec`'s execve as
    no set-user-ID binary is involved; tcpdump runs with `-Z root` so that no credential change
    clears it)."""
    def f() -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the driver died before prctl took effect
            os._exit(1)
    return f


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM (and SIGINT) raise inside the driver so that `finally` tears the network down."""
    def handler(sig: int, _frame: Any) -> None:
        raise _Interrupted(f"signal {sig}")

    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    for s in old:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class _Workers:
    def __init__(self, net: Network, tmp: Path):
        self.net, self.tmp = net, tmp
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.files: list[Any] = []
        self.n = 0

    def start(self, node: str, role: str, args: dict, sync: bool = False, ctl: bool = False) -> tuple[subprocess.Popen, str]:
        self.n += 1
        out = str(self.tmp / f"{self.n:02d}-{role}-{node}")
        a = {**args, "out": out, "sync": sync}
        af = self.tmp / f"{self.n:02d}-{role}-{node}.args.json"
        af.write_text(json.dumps(a))
        err = open(self.tmp / f"{self.n:02d}-{role}-{node}.stderr", "w")
        self.files.append(err)
        p = subprocess.Popen(["ip", "netns", "exec", self.net.ns[node], sys.executable, "-m", "jitterlab.testbed.worker", role, str(af)],
                             stdin=subprocess.PIPE if sync or ctl else subprocess.DEVNULL,
                             stdout=subprocess.PIPE if sync else subprocess.DEVNULL, stderr=err, text=True,
                             preexec_fn=_die_with_parent(os.getpid()))
        self.procs.append((role, p))
        return p, out

    def wait_ready(self, timeout: float = 60) -> None:
        t_end = time.monotonic() + timeout
        for role, p in self.procs:
            if p.stdout is None:
                continue
            import select

            r, _, _ = select.select([p.stdout], [], [], max(0.0, t_end - time.monotonic()))
            line = p.stdout.readline() if r else ""
            if "ready" not in line:
                raise TestbedError(f"the {role} worker did not start (see {self.tmp}/*{role}*.stderr)")

    def go(self, t0: int) -> None:
        for role, p in self.procs:
            if role == "delay" and p.stdin is not None:  # the trace clock's zero; stdin stays open
                p.stdin.write(f"{t0}\n")
                p.stdin.flush()
                continue
            if p.stdin is not None:
                p.stdin.write(f"{t0}\n")
                p.stdin.flush()
                p.stdin.close()

    def stop_all(self) -> None:
        for _, p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for _, p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in self.files:
            f.close()


def _tcpdump(net: Network, node: str, dev: str, path: Path) -> subprocess.Popen:
    p = subprocess.Popen(["ip", "netns", "exec", net.ns[node], "tcpdump", "-i", dev, "-s", "128", "--immediate-mode", "-B", "16384",
                          "-n", "-U", "-Z", "root", "-w", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_die_with_parent(os.getpid()))
    # tcpdump prints "listening on ..." once the capture is open
    t0 = time.monotonic()
    assert p.stderr is not None
    while time.monotonic() - t0 < 5:
        line = p.stderr.readline()
        if "listening on" in line or line == "":
            break
    return p


def _publish_dumps(dumps: list[subprocess.Popen], finals: list[Path]) -> list[str]:
    """Renames each finished capture to its final name; a tcpdump that failed (a full disk:
    "No space left on device") leaves no file under a final name, only its error."""
    errors = []
    for d, final in zip(dumps, finals):
        tmp = final.with_name(f".{final.name}.tmp")
        if d.returncode == 0 and tmp.exists():
            os.replace(tmp, final)
            continue
        why = (d.stderr.read() if d.stderr is not None else "").strip().splitlines()
        errors.append(f"{final}: tcpdump exited with status {d.returncode}" + (f": {why[-1]}" if why else ""))
        tmp.unlink(missing_ok=True)
    return errors


_PROBE_RECV = ("import socket,sys\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\ns.bind(('0.0.0.0',4999))\n"
               "s.settimeout(float(sys.argv[1]))\ntry:\n s.recv(64)\nexcept OSError:\n sys.exit(1)\n")
_PROBE_SEND = ("import socket,sys,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
               "for _ in range(int(sys.argv[2])):\n s.sendto(b'jitterlab probe',(sys.argv[1],4999)); time.sleep(0.05)\n")


def _wait_ready(net: Network, plan: Plan, timeout: float = 10.0) -> None:
    """Waits until every link has carrier (veth carrier comes up asynchronously, up to ~1 s) and
    the delay line holds its TUN open, then checks with UDP datagrams that the first two hosts
    reach each other through the delay line (traffic inside our namespaces only)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        down = [n for n in plan.nodes if "NO-CARRIER" in net.ip(n, "link", "show", check=False).stdout]
        if not down:
            break
        time.sleep(0.05)
    else:
        raise TestbedError(f"links without carrier after {timeout:.0f} s in {', '.join(down)} (is the delay line running?)")
    a, b = plan.hosts[0], plan.hosts[1]
    rx = subprocess.Popen(["ip", "netns", "exec", net.ns[b], "python3", "-c", _PROBE_RECV, "5"], preexec_fn=_die_with_parent(os.getpid()))
    tx = subprocess.Popen(["ip", "netns", "exec", net.ns[a], "python3", "-c", _PROBE_SEND, plan.host_addr(b), "100"],
                          preexec_fn=_die_with_parent(os.getpid()))
    ok = rx.wait() == 0
    tx.kill()
    tx.wait()
    if not ok:
        raise TestbedError(f"no connectivity from {a} to {b} through the delay line")


def run(scenario: str | Path | Mapping[str, Any], seed: int = 1, out: str | Path | None = None, run_id: int = 0,
        overrides: Mapping[str, Any] | None = None, params: Mapping[str, Any] | None = None,
        on_ready: Any = None, delay: str = "auto") -> Result:
    """Runs one scenario on the testbed; writes pcaps and worker records under `out` (a temporary
    directory when None) and returns the tables (`result.testbed` holds the namespaces, qdisc
    counters and delay-line statistics). `delay`: "auto" (netem when the kernel has it), "netem" or
    "tun" (the userspace delay line). `on_ready(network)` is called once the network is built
    (debugging). Needs root; raises TestbedError with one clear line otherwise."""
    sc = _scn.with_overrides(_scn.load(scenario), overrides)
    pl = make_plan(sc, seed)
    for i, n in enumerate(pl.nodes):  # a node's name becomes OUT/<node>.pcap and worker files' names
        _io.safe_name(n, f"nodes[{i}]")
    # through the module: a name bound at import would keep whatever stood there then (a test's stub)
    _net.require_root()
    import tempfile

    # what a killed run left behind (its children died with it; its namespaces stay until removed)
    leftovers = cleanup()

    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="jitterlab-testbed-"))
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "testbed"
    tmp.mkdir(exist_ok=True)
    net = Network(pl, delay)
    workers = _Workers(net, tmp)
    dumps: list[subprocess.Popen] = []
    dump_paths: list[Path] = []
    info: dict[str, Any] = {"namespaces": list(net.ns.values()), "removed_leftovers": leftovers}
    from jitterlab.testbed import realtime

    psi0 = realtime.cpu_pressure()
    with _signals_raise():
        try:
            net.build()
            if on_ready is not None:
                on_ready(net)
            dl = None
            if net.delay_mode == "tun":
                dl, dl_out = workers.start(pl.delay_router, "delay", {"config": {**net.link_config(seed), "ctl_fd": 0}}, ctl=True)
            info["delay"] = net.delay_mode
            _wait_ready(net, pl)
            # captures at the media/TCP sender and receiver hosts
            ends = []
            endpoints: list[Any] = [*pl.media, *pl.tcp]
            for x in endpoints:
                for h in (x.src, x.dst):
                    if h not in ends:
                        ends.append(h)
            for h in ends:
                l = pl.neighbours(h)[0][1]
                # under a temporary name, renamed once tcpdump has closed it (`_publish_dumps`)
                dumps.append(_tcpdump(net, h, net.ifname(l.index, h), out / f".{h}.pcap.tmp"))
                dump_paths.append(out / f"{h}.pcap")
            media_out = []
            for m in pl.media:
                if m.rtc is not None:
                    media_out.append((m, *rtc.start(workers, pl, m, seed)))
                    continue
                _, ro = workers.start(m.dst, "media_recv", {"port": m.port, "stop_ns": pl.duration_ns}, sync=True)
                _, so = workers.start(m.src, "media_send", {"dst": pl.host_addr(m.dst), "port": m.port, "start_ns": m.start_ns,
                                                            "stop_ns": min(m.stop_ns, pl.duration_ns), "interval_ns": m.interval_ns,
                                                            "ip_size": m.ip_size, "per_tick": m.per_tick, "spacing_ns": m.spacing_ns,
                                                            "ssrc": 0x4A4C0000 + m.flow_id, "pt": 0 if m.kind == "audio" else 96,
                                                            "tos": m.tos}, sync=True)
                media_out.append((m, so, ro))
            tcp_out = []
            senders: dict[str, list] = {}
            receivers: dict[str, list] = {}
            for f in pl.tcp:
                senders.setdefault(f.src, []).append({"flow_id": f.flow_id, "port": f.port, "cc": f.cc, "size": f.size,
                                                     "stop_ns": min(f.stop_ns, pl.duration_ns), "deadline_ns": pl.duration_ns})
                receivers.setdefault(f.dst, []).append({"flow_id": f.flow_id, "server": pl.host_addr(f.src), "port": f.port,
                                                       "start_ns": f.start_ns, "stop_ns": pl.duration_ns, "mss": f.mss, "rcvbuf": f.rcvbuf})
            for h, fl in senders.items():
                _, o = workers.start(h, "tcp_send", {"flows": fl}, sync=True)
                tcp_out.append(("send", o))
            for h, fl in receivers.items():
                _, o = workers.start(h, "tcp_recv", {"flows": fl, "budget": pl.rwnd_budget.get(h)}, sync=True)
                tcp_out.append(("recv", o))
            workers.wait_ready()
            t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + START_MARGIN_NS
            end = t0 + pl.duration_ns
            workers.go(t0)
            sampler = _net.QueueSampler(net, pl, t0, end)
            sampler.start()
            # wait for the schedule to end (workers stop themselves at `end`)
            for role, p in workers.procs:
                if role == "delay":
                    continue
                remaining = (end - time.clock_gettime_ns(time.CLOCK_REALTIME)) / 1e9 + 5
                try:
                    p.wait(timeout=max(remaining, 1))
                except subprocess.TimeoutExpired:
                    p.send_signal(signal.SIGTERM)
                    p.wait(timeout=5)
            sampler.stop()
            time.sleep(0.2)
            for d in dumps:
                d.send_signal(signal.SIGTERM)
            for d in dumps:
                d.wait(timeout=5)
            info["capture_errors"] = _publish_dumps(dumps, dump_paths)
            if dl is not None:
                dl.send_signal(signal.SIGTERM)
                dl.wait(timeout=5)
            info["channels"] = {c.name: net.qdisc_stats(c) for c in pl.channels()}
            info["queue_samples"] = sampler.samples
            info["delay_line"] = _delay_stats(dl_out) if dl is not None else {"mode": "netem"}
        except _Interrupted as e:
            raise KeyboardInterrupt(str(e)) from None
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):  # a second signal must not cut the teardown short
                signal.signal(sig, signal.SIG_IGN)
            workers.stop_all()
            for d in dumps:
                if d.poll() is None:
                    d.kill()
            net.teardown()
    errors = []
    for ef in sorted(tmp.glob("*.stderr")):
        txt = ef.read_text().strip()
        if txt:
            errors.append(f"{ef.name}: {txt.splitlines()[-1]}")
    res = _tables(pl, sc, seed, run_id, params or {}, t0, media_out, tcp_out, info)
    # the run's own timing error, kept in the manifest (`write`): a disturbed run says so
    info["cpu_pressure_pct"] = realtime.cpu_pressure_pct(psi0, realtime.cpu_pressure())
    info["accuracy"] = realtime.measure(info, res.flows)
    res.testbed = info  # type: ignore[attr-defined]
    res.capture = _capture_tables(pl, out, t0, run_id, errors)  # type: ignore[attr-defined]
    (tmp / "info.json").write_text(json.dumps({k: v for k, v in info.items() if k != "queue_samples"}, indent=1, default=str))
    errors += info.get("capture_errors", [])
    if errors:
        info["worker_errors"] = errors
    return res


def _capture_tables(pl: Plan, out: Path, t0: int, run_id: int, errors: list[str]) -> dict[str, pd.DataFrame]:
    """The tcpdump pair of each media flow through the capture analysis (the code behind `jitterlab
    analyze`), written to OUT/capture/: media_packets and runs per media flow, and the TCP flows seen
    in the media sender's capture. The worker logs give the main tables; these are the same run as
    the wire shows it (tests cross-check the two). A capture that cannot be read is reported in the
    run's worker errors, not raised: the run's other tables stay."""
    from jitterlab import capture

    tables: dict[str, list[pd.DataFrame]] = {"media_packets": [], "tcp_flows": [], "runs": []}
    for m in pl.media:
        s, r = out / f"{m.src}.pcap", out / f"{m.dst}.pcap"
        try:
            t = capture.analyze(s, r, media=f"rtp:{0x4A4C0000 + m.flow_id}", t0_ns=t0, run_id=run_id)
        except Exception as e:  # a damaged capture must not lose the run
            errors.append(f"capture analysis of {s.name}, {r.name}: {e}")
            continue
        tables["media_packets"].append(t["media_packets"].assign(flow_id=m.flow_id))
        tables["runs"].append(t["runs"].assign(media_flow_id=m.flow_id))
        if not tables["tcp_flows"] and len(t["tcp_flows"]):
            tables["tcp_flows"].append(t["tcp_flows"])
    res = {k: pd.concat(v, ignore_index=True) for k, v in tables.items() if v}
    if res:
        # Written as `jitterlab analyze` writes (canonical Arrow schema, manifest with checksums),
        # so `jitterlab report OUT/capture` and `jitterlab.load` read it like any analyze output.
        capture.write(res, out / "capture", options={"from": "testbed", "t0_ns": t0})
    return res


def _delay_stats(path: str) -> dict[str, Any]:
    try:
        st = json.loads(Path(path).read_text())
        lat = np.load(path + ".lateness.npy")
    except (OSError, ValueError):
        return {"error": "delay line wrote no statistics"}
    if len(lat):
        from jitterlab.testbed import realtime

        st.update(realtime.lateness_figures(lat))
        q = np.percentile(lat, [50, 90, 99, 99.9])
        st.update({"lateness_p50_us": q[0] / 1e3, "lateness_p90_us": q[1] / 1e3, "lateness_p99_us": q[2] / 1e3,
                   "lateness_p999_us": q[3] / 1e3, "lateness_max_us": float(lat.max()) / 1e3,
                   "lateness_mean_us": float(lat.mean()) / 1e3})
    return st


def _nullable(vals: list[int | None]) -> pd.arrays.IntegerArray:
    a = np.array([v if v is not None else 0 for v in vals], dtype=np.int64)
    return pd.arrays.IntegerArray(a, np.array([v is None for v in vals], dtype=bool))


def _tables(pl: Plan, sc: dict, seed: int, run_id: int, params: Mapping[str, Any], t0: int, media_out: list, tcp_out: list,
            info: dict) -> Result:
    # --- media
    parts = []
    flows_rows = []
    frames: list[pd.DataFrame] = []
    series: list[pd.DataFrame] = []
    for m, so, ro in media_out:
        try:
            s = np.load(so + ".npz")
        except OSError:
            raise TestbedError(f"media sender of {m.name} wrote no records") from None
        try:
            r = np.load(ro + ".npz")
            rseq, rrecv = r["seq"], r["recv_ns"]
        except OSError:
            r = {}
            rseq, rrecv = np.array([], dtype=np.int64), np.array([], dtype=np.int64)
        seq = s["seq"].astype(np.int64)
        # first arrival of each sequence number (duplicates are counted in `flows`)
        order = np.argsort(rrecv, kind="stable")
        useq, idx = np.unique(rseq[order], return_index=True)
        first = rrecv[order][idx]
        pos = np.searchsorted(useq, seq)
        pos_c = np.clip(pos, 0, max(len(useq) - 1, 0))
        got = (pos < len(useq)) & (len(useq) > 0) & (useq[pos_c] == seq if len(useq) else False)
        recv = np.where(got, first[pos_c] - t0 if len(first) else 0, 0)
        n = len(seq)
        parts.append(pd.DataFrame({
            "run_id": np.full(n, run_id, dtype=np.int64),
            "flow_id": np.full(n, m.flow_id, dtype=np.int64),
            "seq": seq,
            "send_ns": s["send_ns"].astype(np.int64) - t0,
            "recv_ns": pd.arrays.IntegerArray(recv.astype(np.int64), ~got),
            "size": s["size"].astype(np.int64),
            "lost_where": _null_strings(n),
            "ce": rtc.first_ce(r, order, idx, pos_c, got) if m.rtc is not None and len(rseq) else np.zeros(n, dtype=bool),
        }))
        flows_rows.append({"flow_id": m.flow_id, "name": m.name, "kind": m.kind, "sent_pkts": n, "sent_bytes": int(s["size"].sum()),
                           "delivered_pkts": int(got.sum()), "delivered_bytes": int(s["size"][got].sum()),
                           "dropped_pkts": int(n - got.sum()), "dropped_bytes": int(s["size"][~got].sum()),
                           "duplicates": int(len(rseq) - len(useq)), "sender_realtime": bool(s["realtime"]),
                           "send_late_p99_us": float(np.percentile(s["send_ns"] - s["sched_ns"], 99) / 1e3) if n and "sched_ns" in s else 0.0})
        if m.rtc is not None:
            frames.append(rtc.frames(s, m.flow_id, run_id, t0))
            series.append(rtc.series(s, m.flow_id, run_id, t0))
            flows_rows.append(rtc.feedback_flow(s, r, m))
    media = pd.concat(parts, ignore_index=True) if parts else _empty_media()

    # --- tcp
    send: dict[int, dict] = {}
    recv_r: dict[int, dict] = {}
    for kind, o in tcp_out:
        try:
            rows = json.loads(Path(o).read_text())
        except (OSError, ValueError):
            rows = []
        for r in rows:
            (send if kind == "send" else recv_r)[r["flow_id"]] = r
    trows = []
    for f in pl.tcp:
        s, r = send.get(f.flow_id, {}), recv_r.get(f.flow_id, {})
        ti = s.get("info", {})
        rel = lambda v: None if v is None else int(v) - t0  # noqa: E731
        trows.append({
            "flow_id": f.flow_id, "role": f.role, "iw": f.iw, "cc": s.get("cc", f.cc),
            "syn_ns": rel(r.get("syn_ns")), "first_data_ns": rel(s.get("first_data_ns")), "end_ns": rel(s.get("end_ns")),
            "bytes": int(r.get("bytes", 0)), "bytes_acked": int(ti.get("bytes_acked", 0)), "size": f.size,
            "segments_sent": int(ti.get("data_segs_out", 0)), "retransmits": int(ti.get("total_retrans", 0)),
            # losses the sender repaired (retransmissions not reported spurious by D-SACK): an estimate
            "drops": max(0, int(ti.get("total_retrans", 0)) - int(ti.get("dsack_dups", 0))),
            "ecn_marks": int(ti.get("delivered_ce", 0)), "timeouts": None,
            "cwnd_at_accept": s.get("cwnd_at_accept"), "rcvbuf": r.get("rcvbuf"), "rcvbuf_share": r.get("rcvbuf_share"),
            "last_byte_ns": rel(r.get("last_byte_ns")),
        })
        flows_rows.append({"flow_id": f.flow_id, "name": f.name, "kind": f.role, "sent_pkts": int(ti.get("segs_out", 0)),
                           "sent_bytes": int(ti.get("bytes_sent", 0)), "delivered_pkts": 0, "delivered_bytes": int(r.get("bytes", 0)),
                           "dropped_pkts": 0, "dropped_bytes": int(ti.get("bytes_retrans", 0))})
    tcp = pd.DataFrame({
        "run_id": np.full(len(trows), run_id, dtype=np.int64),
        "flow_id": np.array([t["flow_id"] for t in trows], dtype=np.int64),
        "role": pd.array([t["role"] for t in trows], dtype="string"),
        "iw": np.array([t["iw"] for t in trows], dtype=np.int64),
        "cc": pd.array([t["cc"] for t in trows], dtype="string"),
        "syn_ns": _nullable([t["syn_ns"] for t in trows]),
        "first_data_ns": _nullable([t["first_data_ns"] for t in trows]),
        "end_ns": _nullable([t["end_ns"] for t in trows]),
        **{k: np.array([t[k] for t in trows], dtype=np.int64) for k in ("bytes", "bytes_acked", "segments_sent", "retransmits", "drops", "ecn_marks")},
        "size": _nullable([t["size"] for t in trows]),
        "timeouts": _nullable([None] * len(trows)),
        "cwnd_at_accept": _nullable([t["cwnd_at_accept"] for t in trows]),
        "rcvbuf": _nullable([t["rcvbuf"] for t in trows]),
        "last_byte_ns": _nullable([t["last_byte_ns"] for t in trows]),
    })

    # --- runs
    syn = [t["syn_ns"] for t in trows if t["syn_ns"] is not None]
    ends = [t["end_ns"] if t["end_ns"] is not None else t["last_byte_ns"] for t in trows]
    ends = [e for e in ends if e is not None]
    dls = info.get("delay_line", {})
    row: dict[str, Any] = {
        "run_id": run_id, "scenario": sc.get("name", "scenario"), "seed": seed, "source": "testbed",
        "tcp_start_ns": min(syn) if syn else None, "tcp_end_ns": max(ends) if ends else None, "end_ns": pl.duration_ns,
        "events": 0, "jitterlab_version": _native.__version__, "kernel": os.uname().release, "t0_realtime_ns": t0,
        "delay_line_lateness_p50_us": dls.get("lateness_p50_us"), "delay_line_lateness_p99_us": dls.get("lateness_p99_us"),
        "delay_line_realtime": dls.get("realtime"),
    }
    for k, v in params.items():
        row.setdefault(k, v)
    runs = pd.DataFrame([row])
    for c in ("tcp_start_ns", "tcp_end_ns"):
        runs[c] = _nullable([row[c]])

    # --- channels: configuration plus the kernel qdisc's counters
    crow = []
    ul = {c.get("name"): c for c in info.get("delay_line", {}).get("channels", [])}
    for ch in pl.channels():
        st = info.get("channels", {}).get(ch.name, {})
        u = ul.get(ch.name, {})
        cr = {"run_id": run_id, "name": ch.name, "from": ch.src, "to": ch.dst, "qdisc": ch.queue.qdisc(), "rate_bps": ch.rate_bps,
               "delay_ns": ch.delay_ns, "tx_pkts": int(st.get("packets", 0)), "tx_bytes": int(st.get("bytes", 0)),
               "dropped_pkts": int(st.get("drops", 0)), "overlimits": int(st.get("overlimits", 0)),
               "backlog_pkts": int(st.get("qlen", 0)), "backlog_bytes": int(st.get("backlog", 0)),
               "capacity": ch.capacity, "lost_pkts": int(u.get("lost", 0))}
        if ch.userspace:  # the userspace link's queue: its counters (rate_bps is the mean rate)
            cr.update({"qdisc": "userspace-" + ch.queue.qdisc(), "tx_pkts": int(u.get("dequeued", u.get("accepted", 0))),
                        "tx_bytes": int(u.get("accepted_bytes", 0)), "dropped_pkts": int(u.get("dropped", 0)), "overlimits": 0,
                        "backlog_pkts": 0, "backlog_bytes": 0})
        crow.append(cr)
    channels = pd.DataFrame(crow)
    flows = pd.DataFrame(flows_rows)
    if len(flows):
        flows.insert(0, "run_id", run_id)
    smp = info.get("queue_samples", [])
    qs = pd.DataFrame({"run_id": np.full(len(smp), run_id, dtype=np.int64), "t_ns": np.array([x[0] for x in smp], dtype=np.int64),
                       "queue": pd.array([x[1] for x in smp], dtype="string"),
                       "backlog_pkts": np.array([x[2] for x in smp], dtype=np.int64),
                       "backlog_bytes": np.array([x[3] for x in smp], dtype=np.int64),
                       "drops": np.array([x[4] for x in smp], dtype=np.int64), "marks": np.array([x[5] for x in smp], dtype=np.int64)})
    from jitterlab.tables import to_arrow as arrow  # the Arrow schema every source writes

    tables = {"media_packets": media, "tcp_flows": tcp, "queue_samples": qs, "runs": runs, "channels": channels, "flows": flows}
    if frames:
        tables["rtc_frames"] = pd.concat(frames, ignore_index=True)
        tables["rtc_series"] = pd.concat(series, ignore_index=True)
    return Result({k: arrow(v) for k, v in tables.items()}, sc, seed, {"tcp_start_ns": row["tcp_start_ns"], "tcp_end_ns": row["tcp_end_ns"]},
                  source="testbed")


def _empty_media() -> pd.DataFrame:
    return pd.DataFrame({"run_id": pd.Series([], dtype=np.int64), "flow_id": pd.Series([], dtype=np.int64),
                         "seq": pd.Series([], dtype=np.int64), "send_ns": pd.Series([], dtype=np.int64),
                         "recv_ns": pd.array([], dtype="Int64"), "size": pd.Series([], dtype=np.int64),
                         "lost_where": pd.array([], dtype="string"), "ce": pd.Series([], dtype=bool)})


def reload(scenario: str | Path | Mapping[str, Any], seed: int, out: str | Path, run_id: int = 0) -> Result:
    """The tables `run(scenario, seed, out, run_id)` returned, read back from the records that run
    kept under `out` (its workers' files, info.json, and the capture manifest's t0): a kept run's
    testbed side can be recomputed without running it again. Raises TestbedError naming the file
    that is missing."""
    out = Path(out)
    sc = _scn.load(scenario)
    pl = make_plan(sc, seed)
    tmp = out / "testbed"

    def one(pattern: str, suffix: str = "") -> str:
        hits = sorted(p for p in tmp.glob(pattern + suffix) if suffix or "." not in p.name)
        if not hits:
            raise TestbedError(f"{tmp}: no worker record {pattern}{suffix}")
        return str(hits[0])[:len(str(hits[0])) - len(suffix)]
    try:
        t0 = int(json.loads((out / "capture" / "manifest.json").read_text())["options"]["t0_ns"])
        info = json.loads((tmp / "info.json").read_text())
    except (OSError, KeyError, ValueError) as e:
        raise TestbedError(f"{out}: not a kept testbed run ({e})") from None
    if any(m.rtc is not None for m in pl.media):
        raise TestbedError(f"{out}: reloading a run with adaptive media is not supported")
    media_out = [(m, one(f"*-media_send-{m.src}", ".npz"), one(f"*-media_recv-{m.dst}", ".npz")) for m in pl.media]
    tcp_out = ([("send", one(f"*-tcp_send-{h}")) for h in dict.fromkeys(f.src for f in pl.tcp)]
               + [("recv", one(f"*-tcp_recv-{h}")) for h in dict.fromkeys(f.dst for f in pl.tcp)])
    return _tables(pl, sc, seed, run_id, {}, t0, media_out, tcp_out, info)


def write(result: Result, out: str | Path) -> Path:
    """Tables as Parquet plus manifest.json (source "testbed"), next to the pcaps."""
    from jitterlab import sim

    return sim.write(result, out, source="testbed", extra={"pcaps": sorted(p.name for p in Path(out).glob("*.pcap")),
                                                          "testbed": getattr(result, "testbed", {})})


def accuracy(out: str | Path | None = None, duration: str = "20s") -> dict[str, Any]:
    """Measures the delay line as the testbed uses it, on the PAM 2013-like path (core 100 Mbit/s
    5 ms, downlink 4 Mbit/s 10 ms): (1) audio alone: OWD minus the configured delay (propagation
    + serialisation) and the RFC 3550 interarrival jitter; (2) audio + a bulk download: the delay
    line's release lateness while it carries TCP at up to the core rate."""
    import tempfile

    base = Path(out) if out else Path(tempfile.mkdtemp(prefix="jitterlab-accuracy-"))
    here = Path(__file__).resolve().parents[2] / "scenarios" / "testbed"
    res: dict[str, Any] = {}
    a = run(here / "audio-alone.toml", out=base / "audio", overrides={"duration": duration})
    m = a.media_packets
    owd = ((m.recv_ns - m.send_ns).dropna().astype("int64")).to_numpy()
    expected = 15_000_000 + 80 * 8 * 1e9 / 4e6 + 80 * 8 * 1e9 / 100e6
    err = (owd - expected) / 1e3
    d = np.diff(owd.astype(float))
    j = 0.0
    for x in d:
        j += (abs(x) - j) / 16
    res["audio_alone"] = {"packets": int(len(owd)), "expected_ms": expected / 1e6,
                          "error_us": {k: float(np.percentile(err, q)) for k, q in (("p1", 1), ("p50", 50), ("p99", 99), ("p100", 100))},
                          "rfc3550_jitter_us": j / 1e3, "delay_line": a.testbed["delay_line"]}
    b = run(here / "audio-bulk.toml", out=base / "bulk")
    res["audio_bulk"] = {"delay_line": b.testbed["delay_line"]}
    return res
