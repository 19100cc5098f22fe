"""A local OUT's run logs (issue 31): each process that stores runs appends them to its own log,
OUT/runs/<time opened, ns>-<host>-<pid>.runlog, instead of creating a file a run. Creating a file
cost a run 0.05-0.5 ms of kernel CPU on ext4 (its inode allocator skips recently freed inodes:
`find_get_block`, `recently_deleted`), a third of a tiny run's CPU; appending costs ~4 µs.

An entry: a header of LOG_HEADER bytes (LOG_MAGIC, the run id and the body's length, 8 bytes
each, little-endian, then zeros), the body (what a run file holds: pack, record, trailer;
python/jitterlab/sweep/store.py), zeros to a multiple of LOG_ALIGN (every pack starts LOG_ALIGN-
aligned in the file). Entries are only ever appended, each with one writev under a lock, the log
opened and closed around it (opening costs no inode; closing gives a shared filesystem's readers
the entry); a write cut short is taken back. A run stored twice (done again after its entry was damaged) is read
from its newest entry that verifies."""
from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path
from typing import Iterable

from jitterlab import _fspath

#: A run file's name ends so (OUT/runs/<run_id:06d>.run; store.py has its format).
RUN_FILE = ".run"
#: A local OUT's run log: OUT/runs/<time opened, ns>-<host>-<pid>.runlog, one a process that
#: stores runs. Each entry: a header of LOG_HEADER bytes (LOG_MAGIC, the run id and the body's
#: length, 8 bytes each, little-endian, then zeros), the body (a run file's bytes: pack, record,
#: trailer), zeros to a multiple of LOG_ALIGN (so every pack starts LOG_ALIGN-aligned in the file).
#: Entries are only ever appended; a run stored twice (run again after its entry was damaged) is
#: read from its newest entry that verifies.
LOG_SUFFIX = ".runlog"
LOG_MAGIC = b"JLLOG\x00v1"
LOG_HEADER = 64
LOG_ALIGN = 64


class LogEntry:
    """Run `run_id`'s entry in run log `log` (a local file): its body, what a run file would hold
    (pack, record, trailer), `length` bytes at byte `offset`. Read like a run file (`read_run_pack`,
    `read_run_record`, `verify_run`)."""

    __slots__ = ("log", "run_id", "offset", "length")

    def __init__(self, log: Path, run_id: int, offset: int, length: int):
        self.log, self.run_id, self.offset, self.length = log, run_id, offset, length

    @property
    def name(self) -> str:
        """How a message names it: the run's file name in its log, with the entry's byte offset."""
        return f"{self.run_id:06d}{RUN_FILE} in {self.log.name} (byte {self.offset - LOG_HEADER})"

    def read_bytes(self) -> bytes:
        """The entry's body (fewer bytes when the log was cut short since it was scanned)."""
        with open(self.log, "rb") as f:
            return os.pread(f.fileno(), self.length, self.offset)

    def __repr__(self) -> str:
        return f"LogEntry({str(self.log)!r}, {self.run_id}, {self.offset}, {self.length})"


def _scan_log(p: Path) -> tuple[list[LogEntry], str | None]:
    """The entries of run log `p` in the order they were appended, and why the scan stopped early
    (None: at the end): a header that is not an entry's (a damaged byte: the entries after it
    cannot be found), or an entry cut short (a process killed while appending: the last one).
    Reads the headers only; each entry is checked when it is read (`_verify_run`)."""
    got: list[LogEntry] = []
    with open(p, "rb") as f:
        fd = f.fileno()
        size = os.fstat(fd).st_size
        pos = 0
        while pos < size:
            hdr = os.pread(fd, LOG_HEADER, pos)
            if len(hdr) < LOG_HEADER or hdr[:len(LOG_MAGIC)] != LOG_MAGIC:
                why = "ends in a partial entry" if len(hdr) < LOG_HEADER and LOG_MAGIC.startswith(hdr[:len(LOG_MAGIC)]) else "is damaged"
                return got, f"{p.name} {why} at byte {pos}"
            rid = int.from_bytes(hdr[8:16], "little")
            n = int.from_bytes(hdr[16:24], "little")
            if pos + LOG_HEADER + n > size:
                return got, f"{p.name} ends in a partial entry at byte {pos}"
            got.append(LogEntry(p, rid, pos + LOG_HEADER, n))
            pos += LOG_HEADER + n + (-n % LOG_ALIGN)
    return got, None


def _log_entries(out: Path | _fspath.FsPath, names: Iterable[str]) -> dict[int, list[LogEntry]]:
    """Each run's entries in OUT/runs/'s run logs (`names`: the directory's listing), the newest
    first (logs are named by the time they were opened; within one, the later entry). A log
    whose scan stopped early says so on stderr (the runs whose entries it lost are run again)."""
    if isinstance(out, _fspath.FsPath):
        return {}
    got: dict[int, list[LogEntry]] = {}
    for n in sorted((n for n in names if n.endswith(LOG_SUFFIX)), reverse=True):
        try:
            entries, why = _scan_log(out / "runs" / n)
        except OSError as err:
            entries, why = [], f"{n} cannot be read ({err.strerror})"
        if why is not None:
            print(f"{out}: runs/{why}; the runs whose entries follow are run again", file=sys.stderr)
        for e in reversed(entries):
            got.setdefault(e.run_id, []).append(e)
    return got


class _Log:
    """This process's run log in one OUT: its path and where its next entry goes."""

    __slots__ = ("path", "pos")

    def __init__(self, path: str):
        self.path, self.pos = path, 0


#: This process's run logs by OUT (a kept worker serves many sweeps; at most 16 kept); the lock
#: orders appends from several threads (a Dask worker's), each entry written whole before the next.
_LOGS: dict[str, _Log] = {}
_LOGS_LOCK = threading.Lock()
_APPEND = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


def _open_log(runs: str) -> tuple[_Log, int]:
    """This process's run log in directory `runs`, open for appending: the one it has, unless it
    is gone or holds other than what this process appended (OUT deleted and made again between two
    sweeps of a kept worker), else a new one (and `runs` made)."""
    log = _LOGS.get(runs)
    if log is not None:
        try:
            fd = os.open(log.path, _APPEND)
            if os.fstat(fd).st_size == log.pos:
                return log, fd
            os.close(fd)
        except FileNotFoundError:
            pass
    import time

    # named by the time it is opened (readers take the newest entry of a run first), this
    # machine and process: no two writers share a log, even through a shared filesystem
    host = re.sub(r"[^A-Za-z0-9_-]", "_", os.uname().nodename)[:64] or "host"  # no dot: never "*.tmp*"
    path = os.path.join(runs, f"{time.time_ns():020d}-{host}-{os.getpid()}{LOG_SUFFIX}")
    try:
        fd = os.open(path, _APPEND | os.O_CREAT | os.O_EXCL, 0o666)
    except FileNotFoundError:  # the sweep's first run: runs/ made now
        os.makedirs(runs, exist_ok=True)
        fd = os.open(path, _APPEND | os.O_CREAT | os.O_EXCL, 0o666)
    if len(_LOGS) >= 16:
        _LOGS.pop(next(iter(_LOGS)))
    log = _LOGS[runs] = _Log(path)
    return log, fd


def _append(runs: str, run_id: int, body: list[bytes]) -> tuple[str, int, int]:
    """Appends run `run_id`'s entry (header, `body`, padding) to this process's log in `runs` with
    one writev; returns the log's name and the body's offset and length. The log is opened and
    closed around each entry (no inode is allocated for it after the first: the cost is the
    file's creation, not its opening), so a reader on another machine of a shared filesystem sees
    the entry once the receipt arrives (NFS' close-to-open consistency). A write cut short (a full
    disk) is taken back (the log truncated to where the entry began) and raised."""
    n = sum(len(b) for b in body)
    hdr = LOG_MAGIC + run_id.to_bytes(8, "little") + n.to_bytes(8, "little") + bytes(LOG_HEADER - 24)
    bufs = [hdr, *body, bytes(-n % LOG_ALIGN)]
    total = LOG_HEADER + n + (-n % LOG_ALIGN)
    with _LOGS_LOCK:
        log, fd = _open_log(runs)
        try:
            start = log.pos
            try:
                _write_all(fd, bufs)
            except OSError:
                try:
                    os.ftruncate(fd, start)
                except OSError:  # the partial entry stays (it ends the log's readable part): a new log next time
                    _LOGS.pop(runs, None)
                raise
            log.pos = start + total
        finally:
            os.close(fd)
    return os.path.basename(log.path), start + LOG_HEADER, n


def close_logs() -> None:
    """Forgets this process's run logs (the next run starts a new one)."""
    with _LOGS_LOCK:
        _LOGS.clear()


def _write_all(fd: int, bufs: list[bytes]) -> None:
    """Writes `bufs` to `fd` one after another: one writev unless the kernel writes less (or the
    platform has no writev)."""
    n = os.writev(fd, bufs) if hasattr(os, "writev") else 0
    if n < sum(len(b) for b in bufs):
        rest = memoryview(b"".join(bufs))[n:]
        while rest:
            rest = rest[os.write(fd, rest):]
