"""The flows of scripts/uml/aqm-path.sh, run inside user-mode Linux (one kernel, so one clock for
both ends: CLOCK_REALTIME, the receiver's from SO_TIMESTAMPNS).

  recv OUT.json TIMEOUT_S         (client namespace) UDP audio on :5004, one TCP download on :5001
  send DST SIZE PRE_S POST_S      (server namespace) audio every 20 ms from the start; PRE_S later a
                                  CUBIC download of SIZE bytes; audio stops POST_S after it; prints
                                  the download's connect time as JSON
  combine DIR OUT.json            one JSON of every run under DIR (aqm-path.sh's layout)

Audio: 80-byte IP packets (52 B of UDP payload: seq, send time), the pam2013 preset's."""
import json
import os
import select
import socket
import struct
import sys
import threading
import time

AUDIO_PORT, TCP_PORT = 5004, 5001
AUDIO_IP_BYTES, INTERVAL_NS = 80, 20_000_000
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # asm-generic/socket.h
HDR = struct.Struct("!iq")  # seq (-1: end), send time (CLOCK_REALTIME ns)


def recv(out: str, timeout_s: float) -> None:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    u.bind(("0.0.0.0", AUDIO_PORT))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", TCP_PORT))
    ls.listen(1)
    audio, tcp = [], {"bytes": 0, "first_ns": None, "last_ns": None}
    conn, audio_done, tcp_done = None, False, False
    buf = bytearray(1 << 16)
    end = time.time() + timeout_s
    while not (tcp_done and (audio_done or not audio)) and time.time() < end:
        socks = [u] + ([] if tcp_done else [ls] if conn is None else [conn])
        r, _, _ = select.select(socks, [], [], 0.5)
        for s in r:
            if s is u:
                data, anc, _, _ = u.recvmsg(2048, 256)
                rx = next((struct.unpack("qq", d[:16]) for lvl, typ, d in anc
                           if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS), None)
                rx_ns = rx[0] * 1_000_000_000 + rx[1] if rx else time.time_ns()
                seq, sent = HDR.unpack_from(data)
                if seq < 0:
                    audio_done = True
                else:
                    audio.append((seq, sent, rx_ns))
            elif s is ls:
                conn, _ = ls.accept()
            else:
                n = conn.recv_into(buf)
                now = time.time_ns()
                if n == 0:
                    tcp_done = True
                    conn.close()
                    conn = None
                    ls.close()
                else:
                    tcp["bytes"] += n
                    tcp["first_ns"] = tcp["first_ns"] or now
                    tcp["last_ns"] = now
    with open(out, "w") as f:
        json.dump({"audio": audio, "tcp": tcp, "complete": audio_done and tcp_done}, f)


def send(dst: str, size: int, pre_s: float, post_s: float) -> None:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    pad = b"\0" * (AUDIO_IP_BYTES - 28 - HDR.size)
    stop = threading.Event()
    late = []

    def audio() -> None:
        t0, k = time.time_ns() + 100_000_000, 0
        while not stop.is_set():
            due = t0 + k * INTERVAL_NS
            wait = (due - time.time_ns()) / 1e9
            if wait > 0:
                time.sleep(wait)
            now = time.time_ns()
            late.append(now - due)
            u.sendto(HDR.pack(k, now) + pad, (dst, AUDIO_PORT))
            k += 1
        for _ in range(3):
            u.sendto(HDR.pack(-1, 0) + pad, (dst, AUDIO_PORT))

    th = threading.Thread(target=audio, daemon=True)
    if pre_s >= 0:  # a negative PRE_S: the download alone
        th.start()
    time.sleep(max(pre_s, 0.0))
    for _ in range(100):  # the receiver's Python may still be starting (UML on a busy host)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
        t_conn = time.time_ns()
        try:
            s.connect((dst, TCP_PORT))
            break
        except ConnectionRefusedError:
            s.close()
            time.sleep(0.1)
    chunk, left = b"\0" * (1 << 16), size
    while left > 0:
        left -= s.send(chunk[:min(left, len(chunk))])
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # the receiver's close: every byte is in
    t_end = time.time_ns()
    s.close()
    time.sleep(post_s)
    stop.set()
    if th.is_alive():
        th.join()
    late = sorted(late) or [0]
    print(json.dumps({"connect_ns": t_conn, "sender_end_ns": t_end, "size": size, "audio_sent": len(late),
                      "audio_late_ms_p50": late[len(late) // 2] / 1e6, "audio_late_ms_max": late[-1] / 1e6}))


def echo(timeout_s: float) -> None:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", 7))
    u.settimeout(timeout_s)
    try:
        while True:
            data, a = u.recvfrom(2048)
            u.sendto(data, a)
    except socket.timeout:
        pass


def rtt(dst: str, n: int) -> None:
    """n UDP probes of 80 IP bytes 200 ms apart to `echo`: the idle path's round trips (ms)."""
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(2.0)
    out = []
    for k in range(n):
        t = time.time_ns()
        u.sendto(HDR.pack(k, t) + b"\0" * (AUDIO_IP_BYTES - 28 - HDR.size), (dst, 7))
        try:
            u.recvfrom(2048)
            out.append((time.time_ns() - t) / 1e6)
        except socket.timeout:
            pass
        time.sleep(0.2)
    print(json.dumps(out))


def combine(d: str, out: str) -> None:
    runs = {}
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if not os.path.isdir(p):
            continue
        r = {}
        for f in sorted(os.listdir(p)):
            with open(os.path.join(p, f)) as fh:
                txt = fh.read()
            try:
                r[f.rsplit(".", 1)[0]] = json.loads(txt)
            except ValueError:
                r[f.rsplit(".", 1)[0]] = txt
        runs[name] = r
    meta = {}
    mp = os.path.join(d, "meta.json")
    if os.path.exists(mp):
        with open(mp) as fh:
            meta = json.load(fh)
    with open(out, "w") as f:
        json.dump({**meta, "runs": runs}, f)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "recv":
        recv(a[1], float(a[2]))
    elif a[0] == "send":
        send(a[1], int(a[2]), float(a[3]), float(a[4]))
    elif a[0] == "echo":
        echo(float(a[1]))
    elif a[0] == "rtt":
        rtt(a[1], int(a[2]))
    elif a[0] == "combine":
        combine(a[1], a[2])
