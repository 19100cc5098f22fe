"""Type stubs of the native module (kept true by tests/test_stubs.py)."""

from typing import Any, Callable

__version__: str

class JitterlabError(Exception): ...
class ScenarioError(JitterlabError): ...
class TableError(JitterlabError): ...
class CaptureError(JitterlabError): ...


def analyze_pair(
    sender: str,
    receiver: str,
    media: str = "auto",
    clock_offset_ns: int = 0,
    t0_ns: int | None = None,
    tcp_start_ns: int | None = None,
    clock_rate: int | None = None,
    spike_ns: int = 3000000000,
    loss_run: int = 50,
    reorder_min: int = 1,
    duplicate_min: int = 1,
    progress: Callable[[str, int, int], Any] | None = None,
) -> dict[str, Any]: ...

class PcapWriter:
    def __init__(self, path: str, snaplen: int = 65535, nanos: bool = True) -> None: ...
    def write_rtp(
        self, ts_ns: int, src: str, dst: str, sport: int, dport: int, ssrc: int, seq: int, rtp_ts: int,
        ip_len: int, payload_type: int = 0, marker: bool = False, ecn: int = 0,
    ) -> None: ...
    def write_udp(self, ts_ns: int, src: str, dst: str, sport: int, dport: int, payload: bytes, ecn: int = 0) -> None: ...
    def write_tcp(
        self, ts_ns: int, src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int,
        payload_len: int = 0, window: int = 65535, ecn: int = 0, mss: int | None = None,
        wscale: int | None = None, sack_permitted: bool = False, timestamps: tuple[int, int] | None = None,
        sack: list[tuple[int, int]] = ...,
    ) -> None: ...
    @property
    def frames(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> PcapWriter: ...
    def __exit__(self, *args: object) -> bool: ...
