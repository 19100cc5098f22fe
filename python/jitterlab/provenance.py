"""Provenance: what produced a result, recorded in every manifest (simulate, sweep, analyze,
testbed) and shown in every report — Flent's metadata block, for jitterlab.

`collect()` is the one function every writer calls. Its fields:

- ``schema_version``: version of the table layout (docs/tables.md); bumped when a column changes.
- ``jitterlab_version``, ``commit`` (git commit of the source tree when known: a checkout, or the
  commit baked into a wheel at build time; ``null`` otherwise), ``python``.
- ``command_line`` (``sys.argv`` as one shell-quoted string), ``host``, ``kernel`` (``uname -r``),
  ``time_utc`` (ISO 8601, seconds).
- ``seeds`` (the master seed or seeds used; ``[]`` for captures) and ``scenario_sha256`` (SHA-256
  of the scenario as canonical JSON — sorted keys, no spaces — or ``null`` without a scenario).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

#: Version of the table layout described in docs/tables.md; every manifest records it.
SCHEMA_VERSION = 3  # 3: tcp_flows.bytes is what was delivered, tcp_flows.size the planned size


def scenario_hash(scenario: Mapping[str, Any] | None) -> str | None:
    """SHA-256 (hex) of the scenario as canonical JSON: sorted keys, ``(",", ":")`` separators.

    >>> import hashlib
    >>> scenario_hash({"b": 1, "a": "x"}) == hashlib.sha256(b'{"a":"x","b":1}').hexdigest()
    True
    """
    if scenario is None:
        return None
    text = json.dumps(scenario, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    from jitterlab import _native  # its SHA-256: no hashlib (OpenSSL's import, ~2.5 ms a process)

    return _native.sha256_hex(text.encode("utf-8"))


_COMMIT: list[str | None] = []  # computed once (a plain cache: lru_cache's wrapper hides the signature from stubtest)


def commit() -> str | None:
    """The git commit of the source tree this package runs from (computed once); see `_commit`."""
    if not _COMMIT:
        _COMMIT.append(_commit())
    return _COMMIT[0]


def _commit() -> str | None:
    """The git commit of the source tree this package runs from: a file ``_commit.txt`` baked
    into a wheel at build time, else ``git rev-parse HEAD`` when the package sits in a checkout
    (with ``-dirty`` for uncommitted changes), else ``None``."""
    here = Path(__file__).resolve().parent
    baked = here / "_commit.txt"
    if baked.is_file():
        text = baked.read_text().strip()
        return text or None
    # the top level and HEAD in one git process (each costs ~1.5 ms of CPU); fails without a HEAD too
    got = _git(["-C", str(here), "rev-parse", "--show-toplevel", "HEAD"], 5)
    lines = got[1].splitlines() if got is not None else []
    if got is None or got[0] != 0 or len(lines) != 2:
        return None
    if not (Path(lines[0].strip()) / "python" / "jitterlab").resolve() == here:
        return None  # not our checkout (e.g. installed into a venv inside some other repository)
    dirty = _git(["-C", str(here), "status", "--porcelain", "--untracked-files=no"], 10)
    if dirty is None:
        return None
    return lines[1].strip() + ("-dirty" if dirty[1].strip() else "")


def _git(args: list[str], timeout: float) -> tuple[int, str] | None:
    """`git ARGS`: its exit status and standard output (standard error dropped, standard input
    this process's), or None when git cannot start or runs past `timeout` s (then killed).
    Spawned with os.posix_spawnp, not subprocess, whose import (selectors, signal, locale)
    cost ~2.4 ms of CPU in every process writing a manifest."""
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - not POSIX
        import subprocess

        try:
            p = subprocess.run(["git", *args], capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.SubprocessError):
            return None
        return p.returncode, p.stdout
    import select

    r, w = os.pipe()  # both close on exec: the child keeps only its copy of w as its stdout
    try:
        pid = os.posix_spawnp("git", ["git", *args], os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except OSError:
        os.close(r)
        return None
    finally:
        os.close(w)
    out = bytearray()
    end = time.monotonic() + timeout
    poller = select.poll()  # not select.select: a descriptor past 1023 (a process with many files open)
    poller.register(r, select.POLLIN)
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                os.kill(pid, 9)  # SIGKILL: past its time, as subprocess.run's timeout
                os.waitpid(pid, 0)
                return None
            chunk = os.read(r, 65536)
            if not chunk:
                break
            out += chunk
    finally:
        os.close(r)
    status = os.waitpid(pid, 0)[1]
    return os.waitstatus_to_exitcode(status), os.fsdecode(bytes(out))


def version() -> str:
    """The jitterlab version (the native module's, which is the wheel's)."""
    from jitterlab import _native

    return str(_native.__version__)


def collect(seeds: Iterable[int] | int | None = None, scenario: Mapping[str, Any] | None = None,
            **extra: Any) -> dict[str, Any]:
    """The provenance block of one result.

    Parameters
    ----------
    seeds : int or iterable of int, optional
        The master seed(s) of the run(s); ``None`` for inputs without a seed (captures).
    scenario : mapping, optional
        The scenario as run; its canonical-JSON SHA-256 is recorded.
    **extra
        Further fields (e.g. ``sweep_seed``), added as given.

    Returns
    -------
    dict
        JSON-serialisable: schema_version, jitterlab_version, commit, python, command_line, host,
        kernel, time_utc, seeds, scenario_sha256 and the extra fields.
    """
    if seeds is None:
        seed_list: list[int] = []
    elif isinstance(seeds, int):
        seed_list = [int(seeds)]
    else:
        seed_list = [int(s) for s in seeds]
    # os.uname, not platform and socket (~4 ms of imports in every sweep and simulate process):
    # on POSIX platform.uname()'s system and release and socket.gethostname() are these fields
    if hasattr(os, "uname"):
        un = os.uname()
        system, release, host = un.sysname, un.release, un.nodename
    else:  # pragma: no cover - Windows
        import platform
        import socket

        system, release, host = platform.system(), platform.release(), socket.gethostname()
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "jitterlab_version": version(),
        "commit": commit(),
        "python": sys.version.split()[0],  # platform.python_version(): the first word of sys.version
        "command_line": shlex.join([Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:]]),
        "host": host,
        "kernel": f"{system} {release}",
        "time_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seeds": seed_list,
        "scenario_sha256": scenario_hash(scenario),
    }
    stacks = tcp_stacks(scenario)
    if stacks:
        out["tcp_stacks"] = stacks
    out.update(extra)
    return out


def tcp_stacks(scenario: Mapping[str, Any] | None) -> list[str]:
    """What each TCP entry of `scenario` is: "NAME: PROFILE" and, when the entry overrides some of
    the profile's switches, " with KEY = VALUE, …" (the values as the run uses them). Empty for no
    scenario, one without TCP, or one that does not expand (its own error is reported elsewhere)."""
    if not scenario:
        return []
    from jitterlab import _native

    try:
        exp = json.loads(_native.expand_scenario(json.dumps(scenario, default=str)))
    except Exception:  # noqa: BLE001 - a scenario that does not build has no stacks to record
        return []
    out = []
    for i, t in enumerate(exp.get("traffic") or []):
        if not isinstance(t, dict) or "stack" not in t:
            continue
        name = t.get("name") or f"traffic[{i}]"
        tcp = t.get("tcp") or {}
        alias = {"rwnd": "rcvbuf", "sack": "recovery"}

        def value(k: str) -> Any:
            k2 = alias.get(k, k)
            for v in (tcp.get(k2), t.get(k), t.get(f"{k}_bytes"), t.get(f"{k}_pkts"), t.get(f"{k}_ns")):
                if v is not None:
                    return v
            return None
        over = ", ".join(f"{k} = {value(k)}" for k in t.get("stack_overrides") or [])
        out.append(f"{name}: {t['stack']}" + (f" with {over}" if over else ""))
    return out


#: Field order and labels for the report's provenance block.
LABELS = {
    "jitterlab_version": "jitterlab version", "commit": "commit", "schema_version": "table schema version",
    "command_line": "command line", "host": "host", "kernel": "kernel", "python": "Python",
    "time_utc": "time (UTC)", "seeds": "seeds", "scenario_sha256": "scenario SHA-256",
    "tcp_stacks": "TCP stacks (profile and overrides)",
}
