"""One writer per sweep output on an object store (``sweep --out s3://…``, ``memory://…``): a lock
object in the store, as `_io.out_lock`'s flock(2) is for a local directory.

The lock is ``OUT/.jitterlab.lock``, a small JSON document: a random owner id, host, pid, the
command, and a heartbeat (wall-clock seconds, UTC) that a thread of the holder rewrites every
HEARTBEAT_S while the sweep runs. Taking it:

1. create it exclusively (fsspec's ``open(path, "xb")``: the local and memory filesystems, and
   s3fs/gcsfs where the store has conditional writes, create it only if absent, atomically);
   a store whose filesystem cannot (``"xb"`` refused) gets a check that nothing is there, a plain
   write, and a pause of SETTLE_S;
2. read it back: a lock that does not hold our owner id was written by another writer in between
   (the last write wins on an object store) and we refuse;
3. a lock found there whose heartbeat is older than STALE_S is stale (its holder was killed: no
   process lives to beat it) and is replaced, with a line on stderr saying so; the read-back then
   waits SETTLE_S, so that of two writers taking over the same stale lock the one whose lock
   stands wins and the other refuses.

A second writer is refused at once in one line naming the holder and how old its heartbeat is
(exit 2 from the command line), never left waiting.

What it guarantees: with an atomic create, one writer at a time, always. Without one, two writers
are both let in only when one of them wrote its lock between the other's check and its read-back
(SETTLE_S later), i.e. when its own check-then-write took longer than SETTLE_S; the heartbeat
thread then notices its lock replaced and says so on stderr. A stale lock is taken over only after
STALE_S without a beat, so clocks of hosts sharing a store may differ by up to STALE_S −
HEARTBEAT_S without one writer evicting a live other.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from typing import Any

from jitterlab._fspath import FsPath
from jitterlab._io import LOCK_NAME, OutputError

#: how often the holder rewrites its heartbeat, seconds
HEARTBEAT_S = 30.0
#: a lock whose heartbeat is older than this (seconds) belongs to a dead writer
STALE_S = 600.0
#: without an atomic create: how long to wait between writing the lock and reading it back
SETTLE_S = 1.0

_HELD: dict[str, StoreLock] = {}


class StoreLock:
    """The lock of one output place on an fsspec filesystem (`acquire`, `release`; re-entrant
    within a process through `hold`)."""

    def __init__(self, out: FsPath, option: str = "--out"):
        self.out, self.option = out, option
        self.path = out / LOCK_NAME
        self.owner = uuid.uuid4().hex
        self.count = 0
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _doc(self) -> bytes:
        return json.dumps({"owner": self.owner, "host": socket.gethostname(), "pid": os.getpid(),
                           "command": " ".join(os.path.basename(a) for a in sys.argv[:2]) or "python",
                           "heartbeat": time.time()}).encode()

    def _read(self) -> dict[str, Any] | None:
        """The lock document there now; None when there is none; {} when it is not one of ours
        (garbage, or a half-written object)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            doc = json.loads(raw)
        except ValueError:
            return {}
        return doc if isinstance(doc, dict) else {}

    def _create(self) -> bool:
        """Writes the lock if absent: True when written, False when one is there."""
        fs = self.out.fs
        try:
            with fs.open(self.path.path, "xb") as f:
                f.write(self._doc())
            return True
        except FileExistsError:
            return False
        except (NotImplementedError, ValueError, TypeError):
            pass  # no exclusive create on this filesystem: check, write, settle, read back
        if self._read() is not None:
            return False
        self.path.write_bytes(self._doc())
        time.sleep(SETTLE_S)
        return True

    def _refuse(self, doc: dict[str, Any] | None) -> OutputError:
        if doc:
            age = time.time() - float(doc.get("heartbeat", 0) or 0)
            holder = f"pid {doc.get('pid', '?')} on {doc.get('host', '?')}: {doc.get('command', '?')}, heartbeat {age:.0f} s ago"
        else:
            holder = "unknown"
        return OutputError(f"{self.option} {self.out}: another jitterlab process ({holder}) is writing there; wait for it "
                           f"to end or choose another place (a lock without a heartbeat for {STALE_S:.0f} s is taken over; "
                           f"remove {self.path} if no process writes there)")

    def acquire(self) -> None:
        took_over = False
        for _ in range(2):  # the second try follows the removal of a stale lock
            if self._create():
                if took_over:
                    # another writer that found the same stale lock may remove ours and write its
                    # own just after: wait, so that its write is what we read back
                    time.sleep(SETTLE_S)
                doc = self._read()
                if not doc or doc.get("owner") != self.owner:
                    raise self._refuse(doc)  # another writer's lock replaced ours meanwhile
                break
            doc = self._read()
            if doc is None:
                continue  # released between our create and our read: try again
            beat = doc.get("heartbeat")
            age = time.time() - float(beat) if isinstance(beat, (int, float)) else float("inf")
            if age <= STALE_S:
                raise self._refuse(doc)
            print(f"{self.out}: taking over a stale lock (pid {doc.get('pid', '?')} on {doc.get('host', '?')}, "
                  f"heartbeat {age:.0f} s ago)", file=sys.stderr)
            self.path.unlink(missing_ok=True)
            took_over = True
        else:
            raise self._refuse(self._read())
        self._thread = threading.Thread(target=self._beat, name="jitterlab-store-lock", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                doc = self._read()
                if not doc or doc.get("owner") != self.owner:
                    self.lost = f"pid {doc.get('pid', '?')} on {doc.get('host', '?')}" if doc else "removed"
                    print(f"{self.out}: warning: this sweep's lock was taken ({self.lost}): two writers may mix their runs",
                          file=sys.stderr)
                    return
                self.path.write_bytes(self._doc())
            except Exception:  # noqa: BLE001 - a store hiccup: the next beat tries again
                continue

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            doc = self._read()
            if doc and doc.get("owner") == self.owner:
                self.path.unlink(missing_ok=True)
        except Exception:  # noqa: BLE001 - the lock goes stale by itself
            pass


class hold:
    """``with hold(out):`` the store lock of `out` for the block (re-entrant in a process)."""

    def __init__(self, out: FsPath, option: str = "--out"):
        self.key = str(out)
        self.out, self.option = out, option

    def __enter__(self) -> StoreLock:
        lk = _HELD.get(self.key)
        if lk is None:
            out = self.out
            out.mkdir(parents=True, exist_ok=True)
            lk = StoreLock(out, self.option)
            lk.acquire()
            _HELD[self.key] = lk
        lk.count += 1
        return lk

    def __exit__(self, *exc: object) -> None:
        lk = _HELD[self.key]
        lk.count -= 1
        if lk.count == 0:
            del _HELD[self.key]
            lk.release()
