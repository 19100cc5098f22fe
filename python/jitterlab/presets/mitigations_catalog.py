"""The mitigations preset's catalogue: each mitigation as deployed (the scenario keys it sets and
the registry entries it needs), the workloads' constants, and which mitigations this build can
run (`availability`). Shared by the simulator's study (`presets.mitigations`) and its testbed
column (`presets.mitigations_testbed`), which import it and not each other."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from jitterlab.presets import pam2013

#: Replications per (link, workload, mitigation). 10 keep the whole study under 2 minutes on 2
#: cores (docs/performance.md); the IQRs of the ranking are over these.
REPS = 10
LINKS = ("fixed", "cellular")
BULK_SIZE = pam2013.BULK_SIZE
WEB_TOTAL = pam2013.WEB_TOTAL
START = pam2013.START
JBS = pam2013.JBS
HOST = "mobile"
BUFFER = "500pkt"  # the links' buffer; every AQM gets the same hard limit
BUDGET = "20kB"  # the WiBrA slides' RWND budget
TABLES = ("media_packets", "tcp_flows", "runs")
SEED = 2013
BASELINE = "DropTail"


@dataclass(frozen=True)
class Mitigation:
    """One mitigation: the scenario keys it sets (on top of the workload; traffic[1] is the TCP
    traffic), and the registry entries it needs."""

    name: str
    where: str  # network | receiver | sender | baseline
    what: str
    sets: Mapping[str, Any] = field(default_factory=dict)
    queue: str = "droptail"
    cc: str = "cubic"
    #: keys that depend on the link (CAKE's shaper rate), added to `sets` per link
    per_link: Callable[[pam2013.Link], dict[str, Any]] | None = None

    def keys(self, ln: pam2013.Link | None = None) -> dict[str, Any]:
        """The scenario keys on link ``ln`` (without a link: the fixed ones only)."""
        return {**self.sets, **(self.per_link(ln) if self.per_link and ln is not None else {})}


# DualPI2 as documented: tc-dualpi2(8)'s defaults (step_thresh 1 ms) with RFC 9332 A.1's minimum
# marking threshold in packets (Th_len = 1 packet: no step mark while L holds less, so a slow link,
# where one packet's serialisation exceeds the 1 ms step, does not mark every packet; Linux's
# min_qlen_step, default 0)
DUALPI2_STEP = {"step_thresh": "1ms", "min_qlen_step": 1}
RED = {"kind": "red", "limit": BUFFER, "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": True}


#: tc-cake(8): "most people will only need to set the bandwidth parameter"; the shaper goes slightly
#: below the bottleneck's rate so that the queue forms in CAKE, not in the link (95 %, the common
#: guidance for a link of known rate; docs/mitigations.md).
CAKE_SHARE = 0.95
CAKE_MEM = "750kB"  # 500 × 1500 B: the other queues' 500 packets


def cake_bandwidth_bps(ln: pam2013.Link) -> float:
    """CAKE's shaper rate as deployed on link ``ln``: `CAKE_SHARE` of the fixed rate; on the
    cellular model (whose rate varies) `CAKE_SHARE` of the model's minimum rate, a rate the link always
    has (CAKE's own answer there, autorate-ingress behind the radio, left the queue in the radio:
    docs/mitigations.md, "CAKE on the cellular link"); on a trace, of its mean."""
    from jitterlab import _native

    acc = ln.access
    if "down_rate" in acc:
        return CAKE_SHARE * float(_native.parse_rate_bps(str(acc["down_rate"])))
    cell = acc.get("down_cellular")
    if isinstance(cell, dict) and "min_rate" in cell:
        return CAKE_SHARE * float(_native.parse_rate_bps(str(cell["min_rate"])))
    return CAKE_SHARE * float(ln.mean_bps)


def cake_queue_key(ln: pam2013.Link) -> str:
    """Where the shaped CAKE sits on link ``ln``: the bottleneck's own queue on a fixed-rate link
    (a shaper below a fixed rate is all the link sees); on the cellular model in front of the radio,
    on the core link into the RNC (`access.core_queue`: both of its directions, the reverse carrying
    only ACKs far below the shaper's rate), the radio keeping its own buffer. There a
    shaper below the radio's rate is what it is deployed as (tc-cake(8): the queue forms in CAKE), and
    the radio's HARQ/RLC holds, which the model's delivery opportunities put before the radio
    queue's dequeue, are not CAKE's sojourn (docs/mitigations.md, "CAKE on the cellular link")."""
    cell = ln.access.get("down_cellular")
    return "access.core_queue" if isinstance(cell, dict) else "access.down_queue"


def _at(ln: pam2013.Link) -> dict[str, Any]:
    """On the core link CAKE is a middlebox's queue in front of the RNC, not the server's own qdisc
    (`core_queue_at = "network"`): the server's TCP Small Queues do not see it, as in a network
    (and in the testbed, whose userspace link runs it beside the server)."""
    return {"access.core_queue_at": "network"} if cake_queue_key(ln) == "access.core_queue" else {}


def _cake_shaped(ln: pam2013.Link) -> dict[str, Any]:
    return {cake_queue_key(ln): {"kind": "cake", "memlimit": CAKE_MEM, "bandwidth": f"{int(round(cake_bandwidth_bps(ln) / 1e3))}kbit"},
            **_at(ln)}


def cake_autorate_table(ln: pam2013.Link) -> dict[str, Any] | None:
    """cake-autorate's `autorate` table on link ``ln`` (None where its rate does not vary): on the
    cellular model min = base = the model's `min_rate` (README v3.2.2: the minimum is "the lowest
    possible observed bufferbloat-free bandwidth", the baseline "likely optimally either the minimum
    bandwidth or somewhere close thereto"), max = its `max_rate` ("the maximum bandwidth the
    connection can provide"); the script runs on the mobile's side and pings reflectors on the
    Internet (the server); every other setting is defaults.sh's."""
    cell = ln.access.get("down_cellular")
    if not (isinstance(cell, dict) and "min_rate" in cell and "max_rate" in cell):
        return None
    from jitterlab import _native

    kbit = lambda k: f"{int(_native.parse_rate_bps(str(cell[k])) // 1000)}kbit"  # noqa: E731
    return {"pinger": ln.access.get("client", "client"), "reflector": ln.access.get("server", "server"),
            "min": kbit("min_rate"), "base": kbit("min_rate"), "max": kbit("max_rate")}


def _cake_deployed(ln: pam2013.Link) -> dict[str, Any]:
    """CAKE as deployed on ``ln``: with cake-autorate where the rate varies (the cellular model),
    else the fixed shaper (`_cake_shaped`)."""
    t = cake_autorate_table(ln)
    if t is None:
        return _cake_shaped(ln)
    return {cake_queue_key(ln): {"kind": "cake", "memlimit": CAKE_MEM, "autorate": t}, **_at(ln)}


def _q(kind: str, **kw: Any) -> dict[str, Any]:
    return {"access.down_queue": {"kind": kind, "limit": BUFFER, **kw}}


MITIGATIONS: tuple[Mitigation, ...] = (
    Mitigation(BASELINE, "baseline", f"the link's own {BUFFER} drop-tail buffer"),
    Mitigation("RED", "network", "RED, thresholds 5 / 15 packets, w 0.002, max_p 0.1, gentle (the rwnd preset's)", _q("red", **{k: v for k, v in RED.items() if k not in ("kind", "limit")}), "red"),
    Mitigation("CoDel", "network", "CoDel, target 5 ms, interval 100 ms (RFC 8289 defaults)", _q("codel"), "codel"),
    Mitigation("FQ-CoDel", "network", "FQ-CoDel, 1024 flow queues, quantum 1514 B (RFC 8290 defaults)", _q("fq_codel"), "fq_codel"),
    Mitigation("CAKE", "network", "CAKE as deployed: fixed link: its shaper at 95 % of the link's rate, as the bottleneck's queue; "
               "cellular: its shaper set by cake-autorate (lynxthecat/cake-autorate v3.2.2's rules and defaults; min = base = the "
               "model's minimum rate, max = its maximum; probes from the mobile to the server), in front of the radio on the core "
               "link, the radio keeping its own buffer; its defaults otherwise (COBALT, triple isolation), memory "
               "limit 750 kB = the other queues' 500 packets of 1500 B", queue="cake", per_link=_cake_deployed),
    Mitigation("CAKE fixed shaper", "network", "an extra row: CAKE with a fixed shaper at 95 % of the link's rate (the cellular "
               "model's minimum rate, in front of the radio), as the study deployed it before cake-autorate; on the fixed link "
               "the same scenario as CAKE", queue="cake", per_link=_cake_shaped),
    Mitigation("CAKE unshaped", "network", "CAKE without its shaper (`bandwidth unlimited`, its default; the link's rate limits), "
               "which its documentation does not recommend at a bottleneck it does not own: an extra row",
               {"access.down_queue": {"kind": "cake", "memlimit": CAKE_MEM}}, "cake"),
    Mitigation("PIE", "network", "PIE, target 15 ms (RFC 8033 defaults)", _q("pie"), "pie"),
    Mitigation("DualPI2 + CUBIC", "network", "DualPI2 (RFC 9332) with classic CUBIC in its C queue; Linux's defaults (tc-dualpi2(8): "
               "target 15 ms, step 1 ms) with RFC 9332 A.1's 1-packet minimum for the step (min_qlen_step = 1)",
               _q("dualpi2", **DUALPI2_STEP), "dualpi2"),
    Mitigation("DualPI2 + DCTCP", "network", "DualPI2 as above with DCTCP senders (ECN with ECT(1), DCTCP's default: the L queue); "
               "the 1 ms step is shorter than one packet's serialisation here (3.6 ms at 3.3 Mbit/s), which the 1-packet "
               "minimum of RFC 9332 A.1 is for",
               {**_q("dualpi2", **DUALPI2_STEP), "traffic[1].cc": "dctcp"}, "dualpi2", "dctcp"),
    Mitigation("DualPI2 + DCTCP, 2-pkt step", "network", "an extra row: DualPI2 + DCTCP with the step in packets (2), which docs/l4s.md "
               "measured to let DCTCP use a few-Mbit/s link (tc-dualpi2(8) accepts the step in packets)",
               {**_q("dualpi2", step_thresh="2pkt"), "traffic[1].cc": "dctcp"}, "dualpi2", "dctcp"),
    Mitigation("RWND after SYN", "receiver", f"{BUDGET} advertised-window budget at the mobile host, split between its flows, from the first ACK after the SYN",
               {f"hosts.{HOST}.rwnd": {"budget": BUDGET, "from_syn": False}}),
    Mitigation("RWND from SYN", "receiver", f"the same {BUDGET} budget already in the SYN-ACK (caps the initial-window burst too)",
               {f"hosts.{HOST}.rwnd": {"budget": BUDGET, "from_syn": True}}),
    Mitigation("IW3", "sender", "initial window 3 instead of the workload's (no change where the workload is IW3 already)", {"traffic[1].iw": 3}),
    Mitigation("paced IW", "sender", "the initial window spread evenly over one SYN RTT (`pace_iw = true`: segments SRTT/IW apart), "
               "unpaced from the first ACK of data on (Linux's own pacing leaves the first 10 segments unpaced)", {"traffic[1].pace_iw": True}),
    Mitigation("BBR", "sender", "BBR (v1, as Linux's tcp_bbr.c) instead of CUBIC", {"traffic[1].cc": "bbr"}, cc="bbr"),
)


def availability(registry: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Per mitigation: whether this build can run it, from the simulator's registries (queue kinds
    and congestion controls, `_native.sim_registry()`), and why not."""
    if registry is None:
        from jitterlab import _native

        registry = _native.sim_registry()
    queues, ccs = set(registry.get("queues", ())), set(registry.get("cc", ()))
    rows = []
    for m in MITIGATIONS:
        missing = [f"queue kind {m.queue!r}" for _ in [0] if m.queue not in queues] + [f"congestion control {m.cc!r}" for _ in [0] if m.cc not in ccs]
        rows.append({"mitigation": m.name, "where": m.where, "available": not missing,
                     "status": "available" if not missing else "not available in this build (" + ", ".join(missing) + " not in the simulator's registry)"})
    return pd.DataFrame(rows)


#: Mitigations are deployed today: the hosts are today's Linux (docs/tcp.md, "Stack profiles").
STACK = "linux-6.18"


def _tcp(kind: str, **kw: Any) -> dict[str, Any]:
    return pam2013._tcp(kind, stack=STACK, **kw)


#: The mixed workload: an 8 MB download (IW3) from U(10, 12) s and, at 20 s, when the download's
#: queue has built up on every link, a 372 kB web page over 6 IW10 flows; 50 s leave room for a
#: mitigation that halves the download's rate.
MIXED_BULK = "8MB"
MIXED_PAGE_FLOWS = 6
MIXED_PAGE_START = "20s"
MIXED_DURATION = "50s"
WORKLOADS = ("bulk", "n=1 IW3", "n=1 IW10", "n=2 IW3", "n=2 IW10", "n=6 IW3", "n=6 IW10", "mixed")
