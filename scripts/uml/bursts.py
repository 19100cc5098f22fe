"""UDP bursts for scripts/uml/cake-bursts.sh: BURSTS bursts of PER datagrams of SIZE IP bytes, GAP ms
apart, to 10.9.0.2:9; prints how late the bursts left (a late burst shortens the gap after it)."""
import socket
import sys
import time

n, per, gap, size = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1e3, int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"x" * (size - 28)  # IP 20 + UDP 8
t0 = time.monotonic() + 0.2
late = []
for k in range(n):
    while time.monotonic() < t0 + k * gap:
        time.sleep(0.0005)
    late.append(time.monotonic() - (t0 + k * gap))
    for _ in range(per):
        s.sendto(payload, ("10.9.0.2", 9))
late.sort()
print("sent", n * per, "burst lateness median / max (ms)", round(late[len(late) // 2] * 1e3, 2), round(late[-1] * 1e3, 2))
