"""Safe input and output for every command: bounded reads of regular files only, UTF-8 errors with
the byte offset, output directories that jitterlab owns, and files that appear under their final
name only when complete (written to a temporary name, then renamed).

Every refusal is a `jitterlab.JitterlabError` (or `OutputError`) whose message names the file, so
the command line prints it as one line with exit status 2.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Callable, Iterator

from jitterlab import _native
from jitterlab._native import JitterlabError

#: Largest scenario or sweep file read (TOML; the biggest shipped one is a few kB).
MAX_SCENARIO_BYTES = 16 << 20
#: Largest Mahimahi trace read (one line per 1504-byte opportunity: a day at 12 Mbit/s is ~700 MB;
#: longer traces are better cut or looped with the trace's own period).
MAX_TRACE_BYTES = 512 << 20
#: Largest pairs CSV read.
MAX_PAIRS_BYTES = 64 << 20


class InputError(JitterlabError):
    """A file the user named cannot be read as what it should be (device, too big, not UTF-8)."""


class OutputError(JitterlabError):
    """An output place that cannot or must not be written (a file, read-only, full, foreign)."""


#: Longest name that becomes a file or directory name (the Rust side's export::MAX_FILE_NAME).
MAX_NAME = 64
_SAFE_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+-]*")


def name_problem(name: object) -> str | None:
    """Why `name` (a node, a link, a section) cannot become a file or directory name inside the
    output directory, or None. The rule of the Rust side's `export::file_name_problem`: ASCII
    letters, digits, `_ - . +`, not starting with `.` or `-`, at most MAX_NAME bytes; so no
    separator, `..`, NUL, absolute path or Unicode look-alike reaches the filesystem."""
    if not isinstance(name, str) or not name:
        return "is empty" if name == "" else f"is not a string ({type(name).__name__})"
    if len(name.encode()) > MAX_NAME:
        return f"is {len(name.encode())} bytes long (at most {MAX_NAME})"
    bad = next((c for c in name if not (c.isascii() and (c.isalnum() or c in "_-.+"))), None)
    if bad is not None:
        return f"contains {bad!r}; a name written to a file may hold only A-Z a-z 0-9 _ - . +"
    if not _SAFE_NAME.fullmatch(name):
        return "starts with '.' or '-'"
    return None


def safe_name(name: object, key: str) -> str:
    """`name` when it can be a file name (`name_problem`), else an InputError naming `key`."""
    why = name_problem(name)
    if why is not None:
        raise InputError(f"{key}: name {name!r} {why}")
    return str(name)


def read_bytes(path: str | Path, what: str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Devices, FIFOs and sockets are refused
    before anything is read (`/dev/zero` would never end), and a file that grows past the limit
    while read is refused too."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{p}: cannot read {what}: no such {what}") from None
    except OSError as e:
        raise InputError(f"{p}: cannot read {what}: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p}: is a directory, expected a {what}")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise InputError(f"{p}: is {kind}, expected a {what} (a regular file)")
    if st.st_size > limit:
        raise InputError(f"{p}: {what} of {st.st_size:,} bytes exceeds the limit of {limit:,} bytes")
    try:
        with open(p, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise InputError(f"{p}: cannot read {what}: {e.strerror}") from None
    if len(data) > limit:
        raise InputError(f"{p}: {what} exceeds the limit of {limit:,} bytes")
    return data


def decode_utf8(data: bytes, label: str, what: str = "file") -> str:
    """UTF-8 text, or an error naming the byte offset of the first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{label}: {what} is not UTF-8 text: invalid byte 0x{data[e.start]:02x} at byte offset {e.start} (line {line})") from None


def read_text(path: str | Path, what: str, limit: int) -> str:
    return decode_utf8(read_bytes(path, what, limit), str(path), what)


def sha256_file(path: Path) -> str:
    # the native module's SHA-256 (no hashlib: its import loads OpenSSL, ~2.5 ms a process)
    with open(path, "rb") as f:
        return _native.sha256_fd(f.fileno())


def _oserror(path: Path | Any, e: OSError, doing: str) -> OutputError:
    """One line for a failed write, naming the place and the plain reason."""
    why = {errno.ENOSPC: "no space left on the device", errno.EROFS: "read-only file system",
           errno.EDQUOT: "disk quota exceeded"}.get(e.errno or 0, e.strerror or str(e))
    return OutputError(f"{path}: cannot {doing}: {why}")


def write_atomic(path: Path, write: Callable[[Path], Any]) -> None:
    """Calls `write(tmp)` on a temporary name beside `path` and renames it to `path` when it
    returned: a file under its final name is always complete. On failure (ENOSPC, EROFS …) the
    temporary file is removed and an OutputError names the file."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise _oserror(path, e, "write") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_atomic(path, lambda t: t.write_text(text))


#: Names the kind of result a command began writing into a directory (hidden), so that a run
#: cut short (a full disk, a kill) before its manifest leaves a directory the next run of the same
#: kind may write into without --force.
KIND_MARK = ".jitterlab-kind"


def manifest_source(d: Path) -> str | None:
    """The `source` (sim, capture, testbed, sweep) of a directory jitterlab wrote, or None."""
    if (d / "sweep.json").is_file():
        return "sweep"
    try:
        return str(json.loads((d / "manifest.json").read_text()).get("source", "")) or None
    except (OSError, ValueError, AttributeError, RecursionError):
        pass
    try:
        return (d / KIND_MARK).read_text().strip() or None
    except OSError:
        return None


def local_out(out: str | Path, option: str = "--out", what: str = "this command") -> Path:
    """The local directory of `out`: a path, or a ``file://`` URL's path. Any other URL scheme
    (``memory://``, ``s3://`` …) is refused before anything is written: only `sweep` stores its
    results through fsspec, and pathlib would make ``memory:/x`` a local directory."""
    s = str(out)
    if s.startswith("file://"):
        return Path(s.removeprefix("file://") or "/")
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", s):
        raise OutputError(f"{option} {s}: {what} writes local files only; the URL scheme "
                          f"{s.split('://', 1)[0]}:// is not supported here (only sweep --out takes fsspec URLs)")
    return Path(s)


def make_out_dir(out: str | Path, option: str = "--out") -> Path:
    """Creates output directory `out` (refusing a URL, `/`, a file, a place that cannot be created)."""
    d = local_out(out, option)
    if d.resolve() == Path(d.anchor or "/"):
        raise OutputError(f"{option} {d}: is the root directory; choose a directory of its own")
    if d.exists() and not d.is_dir():
        raise OutputError(f"{option} {d}: is a file, expected a directory")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _oserror(d, e, "create the output directory") from None
    return d


def prepare_out(out: str | Path, kind: str, force: bool = False, option: str = "--out", lock: bool = False) -> Path:
    """Checks and creates an output directory for a result of `kind` (sim, capture, sweep).

    Refused: a path that is a file; a place that cannot be created or written; a non-empty
    directory jitterlab did not write (unless `force`); a directory holding another kind of result
    (`analyze` into a `simulate` directory would mix two sources' tables) — also with `force`,
    since the mix is never wanted. A directory of the same kind is fine (overwritten or resumed).
    `lock`: this process holds the directory's lock (`hold_lock`) from before its entries are
    looked at until it ends, so two commands never write one directory at once.
    """
    d = local_out(out, option)
    if d.exists() and not d.is_dir():
        raise OutputError(f"{option} {d}: is a file, expected a directory")
    if lock:
        hold_lock(make_out_dir(d, option), option)
    if d.is_dir():
        try:
            # hidden names are jitterlab's temporaries; a lone pcap/ is what a simulate run that
            # failed before its tables leaves behind
            entries = [e for e in os.listdir(d) if not e.startswith(".")]
            if entries == ["pcap"] and kind == "sim" and all(f.suffix == ".pcap" for f in (d / "pcap").iterdir()):
                entries = []
        except OSError as e:
            raise _oserror(d, e, "list the output directory") from None
        if entries:
            src = manifest_source(d)
            if src is None and not force:
                raise OutputError(f"{option} {d}: is a non-empty directory jitterlab did not write; "
                                  "choose another, empty it, or pass --force to write into it")
            if src is not None and src != kind:
                raise OutputError(f"{option} {d}: holds a {src} result; write this {kind} result to another directory")
    else:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise _oserror(d, e, "create the output directory") from None
    probe = d / f".jitterlab-probe{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise _oserror(d, e, "write into the output directory") from None
    if lock and manifest_source(d) != kind:
        write_text_atomic(d / KIND_MARK, kind + "\n")  # before any result file (see KIND_MARK)
    return d


#: The lock file of an output directory while a command writes it (hidden: `prepare_out` ignores
#: it; removed when the command ends, left behind only by a killed one, where it locks nothing).
LOCK_NAME = ".jitterlab.lock"
#: Directories this process holds the lock of: real path -> [fd] (re-entrant: the command line
#: locks OUT and `sweep.run` locks it again).
_HELD: dict[str, list[int]] = {}


@contextlib.contextmanager
def out_lock(d: str | Path, option: str = "--out") -> Iterator[None]:
    """One writer per output directory: an exclusive flock(2) on `d`/.jitterlab.lock while the
    block runs. A second process is refused at once, in one line naming the holder (refusing, not
    waiting: a sweep can hold its directory for hours, and a silent wait looks like a hang). The
    kernel drops the lock when its holder dies, even by SIGKILL, so a killed run never leaves a
    stale lock. Local directories only (an object store has no locks)."""
    key = os.path.realpath(d)
    held = _HELD.get(key)
    if held is not None:
        try:  # still the lock file there now (not one in a directory removed and made again)
            same = os.fstat(held[0]).st_ino == os.stat(os.path.join(key, LOCK_NAME)).st_ino
        except OSError:
            same = False
        if same:
            yield
            return
    path = Path(key) / LOCK_NAME
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise _oserror(d, e, "lock the output directory") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
            except OSError:
                holder = "unknown"
            os.close(fd)
            raise OutputError(f"{option} {d}: another jitterlab process ({holder}) is writing there; "
                              "wait for it to end or choose another directory") from None
        except OSError as e:
            os.close(fd)
            raise _oserror(d, e, "lock the output directory") from None
        try:  # the holder before us removes the file as it lets go: ours must be the one there now
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    import sys

    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {' '.join(os.path.basename(a) for a in sys.argv[:2]) or 'python'}\n".encode(), 0)
    except OSError:
        pass  # the note is for the message only; the lock holds without it
    _HELD[key] = [fd]
    try:
        yield
    finally:
        if held is None:
            _HELD.pop(key, None)
        else:
            _HELD[key] = held  # the outer holder's (of a directory removed and made again meanwhile)
        try:  # removed while still locked, so the directory is left as the command made it
            path.unlink()
        except OSError:
            pass
        os.close(fd)  # releases the flock


_PROCESS_LOCKS: list[contextlib.AbstractContextManager[None]] = []


def hold_lock(d: str | Path, option: str = "--out") -> None:
    """`out_lock` on `d` until this process ends (for a command: its whole run)."""
    cm = out_lock(d, option)
    cm.__enter__()
    _PROCESS_LOCKS.append(cm)


def release_locks() -> None:
    """Ends every `hold_lock` of this process (`cli.main` on return: a command run in-process, as
    the tests do, must not keep its directory locked)."""
    while _PROCESS_LOCKS:
        _PROCESS_LOCKS.pop().__exit__(None, None, None)
