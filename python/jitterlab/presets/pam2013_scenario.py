"""The PAM 2013 study's setup: its links (presets/links/), the base scenario, the TCP stack and round
trip it assumes, its three sweeps (audio alone, bulk, web), and the tables its figures and findings
read (`_data`)."""
from __future__ import annotations

import copy
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from jitterlab import _io
from jitterlab import metrics as M
from jitterlab.sweep import Param, Sweep

BASE = Path(__file__).with_name("pam2013.toml")
JBS = list(M.DEFAULT_JBS_MS)
WEB_TOTAL = "372kB"
BULK_SIZE = "28MB"
START = {"dist": "uniform", "min": "10s", "max": "12s"}


LINKS_DIR = Path(__file__).with_name("links")
LINK_KINDS = "fixed, cellular or trace:PATH"
# The bulk run of the fixed link: 28 MB at 3.3 Mbit/s take ~70 s after a start at 10-12 s
BULK_DURATION_S = 95


def _user_error(msg: str) -> Exception:
    from jitterlab.cli import UserError

    return UserError(msg)


def parse_links(values: Sequence[str] | None) -> list[str]:
    """`--link` values (repeatable, each comma-separated) as a list of link specs, in order.
    Raises UserError naming the bad value."""
    out: list[str] = []
    for v in values or ["fixed"]:
        for part in v.split(","):
            spec = part.strip()
            if not spec:
                raise _user_error(f"--link: empty link in {v!r} (expected {LINK_KINDS})")
            if spec.startswith("trace:"):
                if not spec[len("trace:"):].strip():
                    raise _user_error(f"--link {spec}: give the trace file after 'trace:' (a Mahimahi trace)")
            elif spec not in ("fixed", "cellular"):
                raise _user_error(f"--link: unknown link {spec!r} (expected {LINK_KINDS})")
            if spec in out:
                raise _user_error(f"--link: {spec!r} given twice")
            out.append(spec)
    return out


@dataclass(frozen=True)
class Link:
    """One access link the workloads run over: `spec` as the user wrote it, `label` its output
    directory and report column, `access` the scenario's [access] table."""

    spec: str
    label: str
    access: dict[str, Any]
    mean_bps: float
    source: str


def _mean_bps(access: dict[str, Any], base: Path) -> float:
    """Mean downlink capacity of an [access] table, from the Rust expansion of the scenario (the one
    reader of rates, traces and the cellular model; a bad table fails here, naming its key). A
    relative `down_trace` is relative to `base`."""
    from jitterlab import scenario as _scn

    access = dict(access)
    if isinstance(access.get("down_trace"), str) and not Path(access["down_trace"]).is_absolute():
        access["down_trace"] = str(base / access["down_trace"])
    exp = _scn.expand({**_workloads(), "access": access})
    for ln in exp["links"]:
        cap = ln["forward"]["capacity"]
        if ln["to"] == access.get("client", "mobile"):
            return float(cap.get("mean_bps", cap.get("bps", float("nan"))))
    return float("nan")


def load_link(spec: str, study: bool = False) -> Link:
    """The [access] table of a link spec; UserError (one line) for a missing file. `study`: with
    links/<spec>.pam2013.toml's [access] keys over it where that file exists, the values refitted for
    the study's own stack and round trip (the rmcat and mitigations studies take the link as it is)."""
    if spec.startswith("trace:"):
        path = Path(spec[len("trace:"):]).expanduser()
        if not path.is_file():
            raise _user_error(f"--link {spec}: no such trace file {str(path)!r}")
        access = copy.deepcopy(_link_table(LINKS_DIR / "fixed.toml"))
        # the fixed path with the downlink's capacity from the trace (the scenario model: a link
        # direction has exactly one of rate / trace / cellular)
        access.pop("down_rate", None)
        access["down_trace"] = str(path.resolve())
        label = "trace-" + re.sub(r"[^A-Za-z0-9._-]+", "_", path.name)
        return Link(spec, label, access, _mean_bps(access, path.parent), f"{LINKS_DIR / 'fixed.toml'} with down_trace = {path}")
    if _io.name_problem(spec) is not None:  # a link's name is a directory under OUT and a file name here
        raise _user_error(f"--link {spec}: not a link name (fixed, cellular or trace:PATH)")
    f = LINKS_DIR / f"{spec}.toml"
    if not f.is_file():
        raise _user_error(f"--link {spec}: {f} not found (the {spec} link model is not part of this build)")
    access = _link_table(f)
    fs = f.with_name(f"{spec}.pam2013.toml")
    over = _link_table(fs) if study and fs.is_file() else {}
    access = {**access, **{k: {**access.get(k, {}), **v} if isinstance(v, dict) else v for k, v in over.items()}}
    return Link(spec, spec, access, _mean_bps(access, f.parent), str(f) + (f" with {fs.name} over it" if over else ""))


def _link_table(path: Path) -> dict[str, Any]:
    doc = tomllib.loads(path.read_text())
    if "access" not in doc:
        raise _user_error(f"{path}: has no [access] table")
    return doc["access"]


def _workloads() -> dict[str, Any]:
    return tomllib.loads(BASE.read_text())


def base_scenario(link: str | Link = "fixed") -> dict[str, Any]:
    """The pam2013 scenario (audio only) over `link` (default: the calibrated fixed link)."""
    ln = link if isinstance(link, Link) else load_link(link)
    sc = _workloads()
    sc["access"] = copy.deepcopy(ln.access)
    return sc


#: The TCP stack the study assumes (docs/tcp.md, "Stack profiles"): the experiments ran on 2012
#: Linux servers and phones, so the era's profile — CUBIC with the HyStart of that time, PRR, no
#: RACK-TLP, no TSQ, one MSS per ACK in slow start — not today's kernel.
STACK = "linux-3.2"


def _tcp(kind: str, stack: str = STACK, **kw: Any) -> dict[str, Any]:
    return {"kind": kind, "name": kind, "stack": stack, "from": "server", "to": "mobile", "cc": "cubic", **kw}


#: The end-to-end round trip the study assumes: the Wibra 2012 slides (same group, same HSPA
#: setup): "With 100ms end-to-end RTT the path BDP is 22-42 packets". The PAM paper gives none.
RTT_S = 0.100


def _seconds(v: Any) -> float:
    mt = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|us)\s*", str(v))
    if not mt:
        raise _user_error(f"pam2013: cannot read the delay {v!r} of the link table")
    return float(mt.group(1)) * {"ms": 1e-3, "s": 1.0, "us": 1e-6}[mt.group(2)]


def with_rtt(access: dict[str, Any], rtt_s: float | None = RTT_S) -> dict[str, Any]:
    """The [access] table with `up_delay` set so that the path's fixed delays (core both ways, the
    downlink's delay and mean jitter, the uplink) add up to `rtt_s`: the extra round trip goes on the
    uplink, which carries only ACKs, so the audio's one-way delay (Fig. 2) is unchanged. None: the
    link file's own up_delay."""
    if rtt_s is None:
        return dict(access)
    fixed = 2 * _seconds(access.get("core_delay", "0ms")) + _seconds(access.get("down_delay", "0ms"))
    j = access.get("down_jitter")
    if isinstance(j, dict) and "mean" in j:
        fixed += _seconds(j["mean"])
    up = rtt_s - fixed
    if up < 0:
        raise _user_error(f"pam2013: a round trip of {rtt_s * 1e3:g} ms is shorter than the link's one-way delays ({fixed * 1e3:g} ms)")
    return {**access, "up_delay": f"{up * 1e3:.3f}ms"}


def sweeps(reps: int, reps_fig7: int, link: str | Link = "fixed", stack: str = STACK, rtt_s: float | None = RTT_S) -> dict[str, Sweep]:
    ln = link if isinstance(link, Link) else load_link(link, study=True)
    sc = base_scenario(ln)
    sc["access"] = with_rtt(sc["access"], rtt_s)
    audio = copy.deepcopy(sc)
    # 15 s of audio in a 16 s run: packets still in flight at the end would look lost
    audio["duration"] = "16s"
    audio["traffic"][0]["stop"] = "15s"
    bulk = copy.deepcopy(sc)
    bulk["duration"] = f"{_bulk_duration_s(ln)}s"
    bulk["traffic"].append(_tcp("bulk", stack, size=BULK_SIZE, iw=3, start="10s"))
    web = copy.deepcopy(sc)
    web["duration"] = "25s"
    web["traffic"].append(_tcp("web", stack, size=WEB_TOTAL, flows=1, iw=3, start="10s"))
    return {
        "audio": Sweep("pam2013-audio", audio, seed=2013, replications=reps),
        "bulk": Sweep("pam2013-bulk", bulk, seed=2013, replications=reps, random={"traffic[1].start": START}),
        "web": Sweep("pam2013-web", web, seed=2013, replications=reps_fig7,
                     params=[Param("n", [1, 2, 6], [{"traffic[1].flows": n} for n in (1, 2, 6)]),
                             Param("iw", [3, 10], [{"traffic[1].iw": w} for w in (3, 10)])],
                     random={"traffic[1].start": START}),
    }


def _bulk_duration_s(ln: Link) -> int:
    """95 s on the fixed link. On another link, long enough for 28 MB with 60 % to spare after a
    start at 12 s: from a trace's own opportunities (its rate varies, so its mean would not do),
    else from the link's mean rate."""
    if ln.spec == "fixed" or not ln.mean_bps == ln.mean_bps:
        return BULK_DURATION_S
    need = 1.6 * 28e6 * 1500 / 1448  # bytes on the wire (1448-byte payloads in 1500-byte packets), 60 % to spare for recovery at a 100 ms round trip
    if "down_trace" in ln.access:
        ms = np.array([int(x) for x in Path(ln.access["down_trace"]).read_text().split()], dtype=np.int64)
        period = int(ms[-1])
        t0 = 12_000
        loops = int(np.ceil(need / 1504 / len(ms))) + 2
        stamps = (ms[None, :] + period * np.arange(loops)[:, None]).ravel()
        stamps = stamps[stamps > t0]
        k = int(np.ceil(need / 1504))
        if k <= len(stamps):
            return max(BULK_DURATION_S, int(np.ceil(stamps[k - 1] / 1000 + 5)))
    return max(BULK_DURATION_S, int(np.ceil(12 + need * 8 / ln.mean_bps + 5)))


def _first(res, reps: int):
    """The first `reps` replications of a sweep result (Figs. 4-6 use 50, Fig. 7 uses 150)."""
    runs = res["runs"]
    keep = runs[runs["replication"] < reps]
    ids = set(keep.run_id)
    return res["media_packets"][res["media_packets"].run_id.isin(ids)], keep, res["tcp_flows"][res["tcp_flows"].run_id.isin(ids)]


def _data(res: dict, reps: int) -> dict[str, Any]:
    """The tables the figures and the findings read: each media set cut to its replications,
    validated and indexed once (metrics.prepare) for every metric of both."""
    audio_m, audio_r, _ = _first(res["audio"], reps)
    bulk_m, bulk_r, bulk_t = _first(res["bulk"], reps)
    web_m, web_r, web_t = _first(res["web"], reps)
    web7_m, web7_r = res["web"]["media_packets"], res["web"]["runs"]
    audio_m, bulk_m, web_m, web7_m = (M.prepare(m, r) for m, r in ((audio_m, audio_r), (bulk_m, bulk_r), (web_m, web_r), (web7_m, web7_r)))
    return {"audio_m": audio_m, "audio_r": audio_r, "bulk_m": bulk_m, "bulk_r": bulk_r, "bulk_t": bulk_t, "web_m": web_m,
            "web_r": web_r, "web_t": web_t, "web7_m": web7_m, "web7_r": web7_r}


def parse_stacks(values: Sequence[str] | None) -> list[str]:
    """`--stack` values (repeatable, comma-separated): the study's stack first unless given, each a
    known profile. UserError naming a bad one."""
    from jitterlab import stacks as _stacks

    out: list[str] = []
    for v in values or [STACK]:
        for part in v.split(","):
            name = part.strip()
            if name not in _stacks.names():
                raise _user_error(f"--stack: unknown stack profile {name!r} (known: {', '.join(_stacks.names())})")
            if name in out:
                raise _user_error(f"--stack: {name!r} given twice")
            out.append(name)
    return out
