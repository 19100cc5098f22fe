"""A shaper's achieved rate inside user-mode Linux (scripts/uml/cake-rate.sh): `send DST N SIZE`
puts N UDP datagrams of SIZE IP bytes back to back into the path; `recv N TIMEOUT_S [RATE_KBIT]` (port 9)
takes their kernel receive times (SO_TIMESTAMPNS) and prints, as JSON, how many arrived and the
rate between the first and the last: (arrived - 1) * SIZE * 8 / (t_last - t_first), IP bytes,
the median gap, and each packet's lateness against the schedule at RATE_KBIT. Backlogged from the first to the last packet, so a shaper that catches up after a late timer
shows its configured rate, and one that loses the lateness shows less."""
import json
import socket
import struct
import sys
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def recv(n: int, timeout_s: float, rate_kbit: float = 0.0) -> None:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    u.bind(("0.0.0.0", 9))
    u.settimeout(timeout_s)
    ts, size = [], 0
    try:
        while len(ts) < n:
            data, anc, _, _ = u.recvmsg(2048, 256)
            sec, ns = next(struct.unpack("qq", d[:16]) for lvl, typ, d in anc
                           if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS)
            ts.append(sec * 1_000_000_000 + ns)
            size = len(data) + 28
    except socket.timeout:
        pass
    span = (ts[-1] - ts[0]) if len(ts) > 1 else 0
    gaps = sorted(b - a for a, b in zip(ts, ts[1:])) or [0]
    # lateness against the configured schedule (RATE_KBIT of IP bytes), anchored where no packet
    # is early: a shaper that catches up after a stall comes back to 0, one that does not stays late
    late = []
    if rate_kbit and ts:
        d = size * 8 / rate_kbit * 1e6  # ns per packet
        off = [t - i * d for i, t in enumerate(ts)]
        late = sorted(o - min(off) for o in off)
    print(json.dumps({"arrived": len(ts), "ip_bytes": size, "span_s": span / 1e9,
                      "rate_kbps": (len(ts) - 1) * size * 8 / span * 1e6 if span else None,
                      "gap_us_p50": gaps[len(gaps) // 2] / 1e3, "gap_us_max": gaps[-1] / 1e3,
                      "late_ms_mean": sum(late) / len(late) / 1e6 if late else None,
                      "late_ms_p90": late[int(0.9 * (len(late) - 1))] / 1e6 if late else None,
                      "late_ms_max": late[-1] / 1e6 if late else None, "arrival_ns": ts}))


def send(dst: str, n: int, size: int) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"x" * (size - 28)
    for _ in range(n):
        s.sendto(payload, (dst, 9))
        time.sleep(0)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "recv":
        recv(int(a[1]), float(a[2]), float(a[3]) if len(a) > 3 else 0.0)
    else:
        send(a[1], int(a[2]), int(a[3]))
