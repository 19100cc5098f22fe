"""Regenerates the fuzz seed corpus: small captures of every container the reader knows (pcap µs
and ns, pcapng, gzip) and the shipped scenarios as the JSON the simulator receives, shortened to
2 s. Run from the repository root: `.venv/bin/python fuzz/make_corpus.py`."""
import glob
import gzip
import json
import struct
from pathlib import Path

from jitterlab import _native
from jitterlab import scenario as S

root = Path(__file__).resolve().parent / "corpus"
T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def pcaps() -> None:
    d = root / "pcap"
    for nanos in (True, False):
        p = d / f"rtp_{'ns' if nanos else 'us'}.pcap"
        with _native.PcapWriter(str(p), nanos=nanos) as w:
            for i in range(6):
                w.write_rtp(T0 + i * 20 * MS, "10.0.0.1", "10.0.1.1", 5004, 5004, 0x4A4C0000, i, i * 160, 80, payload_type=0)
    p = d / "tcp.pcap"
    with _native.PcapWriter(str(p)) as w:
        w.write_udp(T0, "10.0.0.1", "10.0.1.1", 4000, 4001, b"hello")
        w.write_tcp(T0, "10.0.0.2", "10.0.1.1", 40000, 80, 999, 0, 0x02, mss=1460, wscale=7, sack_permitted=True, timestamps=(1, 0))
        w.write_tcp(T0 + MS, "10.0.1.1", "10.0.0.2", 80, 40000, 5000, 1000, 0x12, mss=1460)
        for i in range(3):
            w.write_tcp(T0 + (2 + i) * MS, "10.0.0.2", "10.0.1.1", 40000, 80, 1000 + i * 100, 5001, 0x18, payload_len=100, sack=[(1, 2)])
    (d / "rtp_ns.pcap.gz").write_bytes(gzip.compress((d / "rtp_ns.pcap").read_bytes(), mtime=0))
    # pcapng: section header, one Ethernet interface, two enhanced packet blocks (from tcp.pcap's frames)
    raw = (d / "rtp_us.pcap").read_bytes()
    frames, off = [], 24
    while off + 16 <= len(raw):
        incl = struct.unpack_from("<I", raw, off + 8)[0]
        frames.append(raw[off + 16: off + 16 + incl])
        off += 16 + incl
    linktype = struct.unpack_from("<I", raw, 20)[0]

    def block(t: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        n = 12 + len(body)
        return struct.pack("<II", t, n) + body + struct.pack("<I", n)

    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", linktype, 0, 65535))
    for i, f in enumerate(frames[:3]):
        ts = (T0 // 1000) + i * 20_000
        out += block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(f), len(f)) + f)
    (d / "rtp.pcapng").write_bytes(out)


def scenarios() -> None:
    d = root / "scenario"
    from jitterlab.presets import pam2013

    files = sorted(glob.glob("scenarios/*.toml") + glob.glob("scenarios/testbed/*.toml")) + ["pam2013"]
    for f in files:
        sc = pam2013.base_scenario("fixed") if f == "pam2013" else S.load(f)
        sc["duration"] = "2s"
        # As the simulator receives it: trace files inlined as {"path", "data"}.
        (d / (Path(f).stem + ".json")).write_text(json.dumps(json.loads(S.to_json(sc)), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    pcaps()
    scenarios()
