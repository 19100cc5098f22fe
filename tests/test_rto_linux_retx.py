"""docs/tcp.md, "The timeout as Linux": the table of retransmissions with and without Linux's
timeout rules is what `scripts/rto_linux_retx.py` gives with this build, and in the runs with a
timeout the rules leave the retransmissions within a few of the network's drops, where going back
over every unSACKed segment (RFC 6675 §5.1) resends far more than was lost."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("rto_linux_retx", ROOT / "scripts" / "rto_linux_retx.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_doc_table_is_this_builds_and_timeouts_resend_what_was_lost():
    mod = _script()
    rs = mod.rows()
    assert mod.doc_block(mod.DOC.read_text()) == mod.table(rs), "regenerate: python scripts/rto_linux_retx.py --doc"
    on = [r for r in rs if r["stack"] == "linux-6.18"]
    off = [r for r in rs if r["stack"] != "linux-6.18"]
    # with the rules, a run with a timeout retransmits at most 5 % (and 2 packets) more than the network dropped
    for r in on:
        assert r["excess_max"] <= 0.05 * r["drops_p50"] + 2, r
        assert all(x <= d * 1.05 + 2 for x, d in zip(r["timeout_retx"], r["timeout_drops"])), r
    # without them, some run with a timeout resends at least half as much again as was dropped
    assert any(x >= 1.5 * d for r in off for x, d in zip(r["timeout_retx"], r["timeout_drops"])), off
