"""Where Linux's CAKE loses rate in user-mode Linux (scripts/uml_cake_rate.py; docs/mitigations.md,
"What misses, and why"): the lateness arithmetic by hand, the kept kernel runs' numbers the docs quote,
and the simulator's side of the lone download against this build. Booting UML is not tested here
(root, ~3 minutes); the kernel's numbers come from docs/data/uml-cake-rate.json."""
import importlib.util
import json
import subprocess
import sys

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("uml_cake_rate", ROOT / "scripts" / "uml_cake_rate.py")
C = importlib.util.module_from_spec(spec)
spec.loader.exec_module(C)


def test_lateness_is_against_the_configured_schedule_anchored_where_none_is_early():
    # 1500 B at 3000 kbit/s: 4 ms a packet. On time, then one 2 ms late, then back on schedule.
    assert C.lateness([0, 4_000_000, 10_000_000, 12_000_000], rate_kbit=3000) == [0, 0, 2_000_000, 0]
    # the first packet 3 ms late and the shaper catching up: the anchor is the second packet's slot
    assert C.lateness([5_000_000, 6_000_000, 12_000_000], rate_kbit=3000) == [3_000_000, 0, 2_000_000]
    # a shaper that loses the stall stays late from it on
    assert C.lateness([0, 4_000_000, 18_000_000, 22_000_000], rate_kbit=3000) == [0, 0, 10_000_000, 10_000_000]


@pytest.fixture(scope="module")
def text() -> str:
    return C.summary(json.loads(C.KEPT.read_text()))


def test_the_kept_kernel_runs_give_the_docs_numbers(text):
    # docs/mitigations.md quotes these: CAKE's shaper keeps its 3.828 ms gap and catches up, HTB loses
    assert "| 2026-11-27 06:43 UTC (nice 0) | cake_noaqm-2 | 367 | 3.832 | 1.1 / 3.7 / 7.9 |" in text
    assert "| 2026-11-27 06:43 UTC (nice 0) | htb_pfifo-2 | 400 | 3.824 | 22.6 / 38.0 / 46.4 |" in text
    assert "| 2026-11-27 06:47 UTC (nice -15) | cake | 2.940 / 2.935 (median 2.938) | 34 / 38 |" in text
    assert "| 2026-11-27 06:47 UTC (nice -15) | htb_fq_codel | 3.002 / 3.009 (median 3.005) | 54 / 50 |" in text


def test_the_simulators_lone_download_as_the_docs_quote_it(text):
    assert "| simulator (this build) | cake | 3.013 | 26 |" in text
    assert "| simulator (this build) | htb_fq_codel | 2.974 | 51 |" in text


def test_bad_input_is_one_line_and_status_2(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"boots": 3}')
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "uml_cake_rate.py"), "--summary", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "not a kept cake-rate JSON" in r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "uml_cake_rate.py"), "--runs", str(tmp_path / "none"), "--out", str(tmp_path / "o.json")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "not a directory" in r.stderr


spec2 = importlib.util.spec_from_file_location("uml_cake_autorate", ROOT / "scripts" / "uml_cake_autorate.py")
A = importlib.util.module_from_spec(spec2)
spec2.loader.exec_module(A)


def test_autorate_converter_reads_tshark_times_exactly_and_tcs_estimate():
    # 19 significant digits: a float would round the last ones
    assert A._ns("1795764595.175651198") == 1_795_764_595_175_651_198
    assert A._ns("12.5") == 12_500_000_000
    assert A._estimate([{"kind": "cake", "options": {"bandwidth": 671057}, "capacity_estimate": 715795}]) == 715795
    assert A._estimate([{"kind": "pfifo"}]) is None


def test_autorate_converter_bad_input_is_one_line_and_status_2(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "uml_cake_autorate.py"), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "not cake-autorate.sh's output" in r.stderr
