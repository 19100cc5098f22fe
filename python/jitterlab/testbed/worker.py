"""Worker processes of the testbed, started by the driver inside a namespace:

    ip netns exec NS python -m jitterlab.testbed.worker ROLE ARGS.json

ROLE is `delay` (the TUN delay line, Rust), `media_send` / `media_recv` (RTP over UDP, Rust, at
SCHED_FIFO), `rtc_send` / `rtc_recv` (adaptive media: the simulator's controllers over UDP, with
the feedback as UDP packets back, Rust, at SCHED_FIFO), `tcp_send` (listens, sends each flow's bytes with its congestion control) or
`tcp_recv` (connects at each flow's start, reads, applies the receive-window moderation). Each
writes its records to the file named in ARGS (`out`) and exits; SIGTERM ends a worker early and it
still writes what it has. Times are CLOCK_REALTIME ns (shared by all namespaces of the host).
"""
from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

import numpy as np

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def sleep_until(t_ns: int, stop: threading.Event | None = None) -> None:
    while True:
        d = t_ns - now_ns()
        if d <= 0 or (stop is not None and stop.is_set()):
            return
        time.sleep(min(d / 1e9, 0.05))


def tcp_info(s: socket.socket) -> dict[str, int]:
    """The fields of Linux's struct tcp_info (include/uapi/linux/tcp.h) the tables use."""
    b = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 232)
    b = b + bytes(232 - len(b))
    u32 = lambda off: struct.unpack_from("=I", b, off)[0]  # noqa: E731
    u64 = lambda off: struct.unpack_from("=Q", b, off)[0]  # noqa: E731
    return {
        "state": b[0], "unacked": u32(24), "lost": u32(32), "retrans": u32(36), "snd_mss": u32(16),
        "rtt_us": u32(68), "snd_ssthresh": u32(76), "snd_cwnd": u32(80), "total_retrans": u32(100),
        "bytes_acked": u64(120), "bytes_received": u64(128), "segs_out": u32(136), "notsent_bytes": u32(144),
        "data_segs_out": u32(156), "delivered_ce": u32(196), "bytes_sent": u64(200), "bytes_retrans": u64(208),
        "dsack_dups": u32(216),
    }


# ---------------------------------------------------------------------------------------------

def _delay(a: dict) -> None:
    """The userspace link (trace queues, delays, jitter, loss); the run's time zero arrives on
    stdin (config ctl_fd = 0)."""
    from jitterlab import _native

    st = _native.testbed_link(json.dumps({"fifo_prio": 50, **a["config"]}))
    lat = np.asarray(st.pop("lateness_ns"))
    np.save(a["out"] + ".lateness.npy", lat)
    with open(a["out"], "w") as f:
        json.dump(st, f)


def _media_send(a: dict) -> None:
    from jitterlab import _native

    log = _native.testbed_media_send(a["dst"], int(a["port"]), int(a["start_ns"]), int(a["stop_ns"]), int(a["interval_ns"]),
                                     int(a["ip_size"]), per_tick=int(a["per_tick"]), spacing_ns=int(a["spacing_ns"]),
                                     ssrc=int(a["ssrc"]), payload_type=int(a.get("pt", 0)), tos=int(a.get("tos", 0)),
                                     fifo_prio=int(a.get("fifo_prio", 60)))
    cols: dict[str, Any] = {k: np.asarray(v) for k, v in log.items()}
    np.savez(a["out"], **cols)


def _media_recv(a: dict) -> None:
    from jitterlab import _native

    sock = a.pop("_sock", None)
    log = _native.testbed_media_recv(int(a["port"]), int(a["stop_ns"]), fifo_prio=int(a.get("fifo_prio", 60)),
                                     fd=sock.fileno() if sock is not None else None)
    cols: dict[str, Any] = {k: np.asarray(v) for k, v in log.items()}
    np.savez(a["out"], **cols)


def _rtc_send(a: dict) -> None:
    """The adaptive media sender (crates/testbed/src/rtc.rs: the simulator's controller code);
    packets, frames and the controller's series as arrays."""
    from jitterlab import _native

    log = _native.testbed_rtc_send(json.dumps({k: v for k, v in a.items() if k not in ("out", "sync")}))
    cols: dict[str, Any] = {k: np.asarray(v) for k, v in log.items()}
    np.savez(a["out"], **cols)


def _rtc_recv(a: dict) -> None:
    from jitterlab import _native

    sock = a.pop("_sock", None)
    log = _native.testbed_rtc_recv(json.dumps({k: v for k, v in a.items() if k not in ("out", "sync")}),
                                   fd=sock.fileno() if sock is not None else None)
    cols: dict[str, Any] = {k: np.asarray(v) for k, v in log.items()}
    np.savez(a["out"], **cols)


# ---------------------------------------------------------------------------------------------
# TCP workloads

def _tcp_send(a: dict) -> None:
    """One listener per flow; the accepted connection sends the flow's bytes (or until stop) and
    waits until every byte is acknowledged (end_ns)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    results: list[dict] = []
    lock = threading.Lock()
    listeners = []
    for f in a["flows"]:
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["cc"].encode())
        ls.bind(("0.0.0.0", int(f["port"])))
        ls.listen(4)
        ls.settimeout(0.2)
        listeners.append((f, ls))

    def serve(f: dict, ls: socket.socket) -> None:
        r = {"flow_id": f["flow_id"], "accept_ns": None, "first_data_ns": None, "end_ns": None, "sent": 0}
        conn = None
        while not stop.is_set() and now_ns() < f["deadline_ns"]:
            try:
                conn, _ = ls.accept()
                break
            except (socket.timeout, BlockingIOError):
                continue
        if conn is not None:
            r["accept_ns"] = now_ns()
            conn.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["cc"].encode())
            r["cc"] = conn.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
            r["cwnd_at_accept"] = tcp_info(conn)["snd_cwnd"]
            chunk = bytes(65536)
            total = f["size"]
            conn.settimeout(0.2)
            try:
                while not stop.is_set() and now_ns() < f["stop_ns"] and (total is None or r["sent"] < total):
                    n = len(chunk) if total is None else min(len(chunk), total - r["sent"])
                    try:
                        k = conn.send(chunk[:n])
                    except socket.timeout:
                        continue
                    if r["first_data_ns"] is None:
                        r["first_data_ns"] = now_ns()
                    r["sent"] += k
                # last byte acknowledged: poll tcp_info (1 ms)
                while not stop.is_set() and now_ns() < f["deadline_ns"]:
                    ti = tcp_info(conn)
                    if ti["unacked"] == 0 and ti["notsent_bytes"] == 0:
                        r["end_ns"] = now_ns()
                        break
                    time.sleep(0.001)
            except OSError as e:
                r["error"] = str(e)
            r["info"] = tcp_info(conn)
            conn.close()
        ls.close()
        with lock:
            results.append(r)

    sync(a)  # listening before "ready": a client can connect as soon as the schedule starts
    threads = [threading.Thread(target=serve, args=fl, daemon=True) for fl in listeners]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(a["out"], "w") as fh:
        json.dump(results, fh)


class Moderator:
    """RWND moderation (WiBrA 2012 slides): the receiving host's budget of advertised window is split
    equally between its active flows. On Linux the advertised window follows the receive buffer
    when SO_RCVBUF is set before connect (autotuning off for that socket); flows starting at the
    same instant are opened together so each gets budget / (active + starting) from its SYN on."""

    def __init__(self, budget: int | None):
        self.budget = budget
        self.active: list[socket.socket] = []
        self.lock = threading.Lock()

    def share(self, n_new: int) -> int:
        return max(1, self.budget // max(1, len(self.active) + n_new))  # type: ignore[operator]

    def open(self, socks: list[socket.socket]) -> int:
        with self.lock:
            sh = self.share(len(socks))
            for s in socks:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, sh)
            for s in self.active:  # the others shrink as their data is consumed
                _set_rcvbuf(s, sh)
            self.active += socks
            return sh

    def close(self, s: socket.socket) -> None:
        with self.lock:
            if s in self.active:
                self.active.remove(s)
            if self.active:
                sh = self.share(0)
                for o in self.active:
                    _set_rcvbuf(o, sh)


def _set_rcvbuf(s: socket.socket, v: int) -> None:
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, v)
    except OSError:
        pass


def _tcp_recv(a: dict) -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    mod = Moderator(a.get("budget"))
    results: list[dict] = []
    lock = threading.Lock()

    def read(f: dict, s: socket.socket, share: int | None, syn_ns: int, err: int) -> None:
        r = {"flow_id": f["flow_id"], "syn_ns": syn_ns, "connected_ns": None, "first_byte_ns": None, "last_byte_ns": None,
             "bytes": 0, "rcvbuf_share": share}
        try:
            # the SYN left in the group's loop below (non-blocking); wait for the handshake here
            if err not in (0, errno.EINPROGRESS):
                raise OSError(err, os.strerror(err))
            deadline = now_ns() + 10 * 1_000_000_000
            while not select.select([], [s], [], 0.2)[1]:
                if stop.is_set() or now_ns() > deadline:
                    raise OSError(errno.ETIMEDOUT, "connect timed out")
            e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if e:
                raise OSError(e, os.strerror(e))
            s.settimeout(0.2)
            r["connected_ns"] = now_ns()
            r["rcvbuf"] = s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
            while not stop.is_set() and now_ns() < f["stop_ns"]:
                try:
                    b = s.recv(262144)
                except socket.timeout:
                    continue
                if not b:
                    break
                t = now_ns()
                if r["first_byte_ns"] is None:
                    r["first_byte_ns"] = t
                r["last_byte_ns"] = t
                r["bytes"] += len(b)
        except OSError as e:
            r["error"] = str(e)
        finally:
            if mod.budget:
                mod.close(s)
            s.close()
        with lock:
            results.append(r)

    groups: dict[int, list[dict]] = {}
    for f in a["flows"]:
        groups.setdefault(int(f["start_ns"]), []).append(f)
    threads: list[threading.Thread] = []
    for start in sorted(groups):
        sleep_until(start, stop)
        if stop.is_set():
            break
        fs = groups[start]
        socks = []
        for f in fs:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if f.get("mss"):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, int(f["mss"]))
            if f.get("rcvbuf"):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(f["rcvbuf"]))
            socks.append(s)
        share = mod.open(socks) if mod.budget else None
        # Every connection of the group starts now, together, as the scenario says: the SYNs go out
        # from this loop (microseconds apart); starting a thread per connection first put them
        # ~3 ms apart, and six IW10 bursts then queued one after the other (docs/validation.md).
        started = []
        for f, s in zip(fs, socks):
            s.setblocking(False)
            started.append((now_ns(), s.connect_ex((f["server"], int(f["port"])))))
        for (f, s), (syn_ns, err) in zip(zip(fs, socks), started):
            t = threading.Thread(target=read, args=(f, s, share, syn_ns, err), daemon=True)
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    with open(a["out"], "w") as fh:
        json.dump(results, fh)


ROLES = {"delay": _delay, "media_send": _media_send, "media_recv": _media_recv, "rtc_send": _rtc_send, "rtc_recv": _rtc_recv,
         "tcp_send": _tcp_send, "tcp_recv": _tcp_recv}


_TIME_KEYS = ("start_ns", "stop_ns", "deadline_ns", "epoch_ns", "end_ns", "until_ns")


def sync(a: dict) -> None:
    """With `sync` in ARGS, the worker's times are relative: it says "ready" on stdout once loaded
    and reads the run's time zero (CLOCK_REALTIME ns) from stdin, so a slow start (imports on a
    busy machine) never makes it late for its schedule."""
    if not a.get("sync"):
        return
    print("ready", flush=True)
    line = sys.stdin.readline()
    if not line.strip():
        sys.exit(0)  # the driver gave up
    t0 = int(line)
    for d in [a, *a.get("flows", [])]:
        for k in _TIME_KEYS:
            if d.get(k) is not None:
                d[k] = int(d[k]) + t0


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ROLES:
        print(f"usage: python -m jitterlab.testbed.worker {{{'|'.join(ROLES)}}} ARGS.json", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        a = json.load(f)
    from jitterlab import _native  # loaded before "ready"

    # Everything slow happens before "ready": real-time priority and mlockall (which faults in the
    # whole process, tens to hundreds of ms on a busy machine), and the media receiver's socket is
    # bound. (A receiver that bound its port only after time zero lost the first audio packets to
    # ICMP port unreachable in 2 of 4 runs on a loaded machine.) TCP workers run at a lower
    # real-time priority than the media and the link, so that a loaded machine does not make the
    # reader slow (a slow reader shrinks the advertised window) or the sender application-limited.
    prio = {"media_send": 60, "media_recv": 60, "rtc_send": 60, "rtc_recv": 60, "tcp_send": 40, "tcp_recv": 40}.get(argv[0])
    if prio is not None and a.get("fifo_prio", prio) > 0:
        _native.testbed_set_realtime(int(a.get("fifo_prio", prio)))
    if argv[0] in ("media_recv", "rtc_recv"):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", int(a["port"])))
        a["_sock"] = s
    if argv[0] != "tcp_send":
        sync(a)
    ROLES[argv[0]](a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
