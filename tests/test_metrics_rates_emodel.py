"""RTP/TCP summaries (Chodorek) and the G.107 E-model."""
import numpy as np
import pandas as pd
import pytest

import jitterlab
from jitterlab import metrics as jm
from _metrics_fixtures import MS, cbr, media, runs


def test_rtp_summary_hand_computed():
    # 6 packets of 80 B, one lost. Window [20, 100] ms: 5 sent, 4 received = 320 B in 80 ms.
    df = media(cbr([5, 5, None, 5, 5, 5]))
    s = jm.rtp_summary(df, runs({1: (20, 100)}))
    assert s[["sent", "received", "bytes_received"]].iloc[0].tolist() == [5, 4, 320]
    assert s["duration_s"].iloc[0] == pytest.approx(0.08)
    assert s["throughput_bps"].iloc[0] == pytest.approx(32_000.0)
    assert s["packet_error_rate"].iloc[0] == pytest.approx(0.2)


def _tcp():
    return pd.DataFrame({
        "run_id": [1, 1, 2], "flow_id": [1, 2, 1], "role": ["web", "web", "bulk"], "iw": [3, 3, 10],
        "syn_ns": [0, 1_000_000_000, 0], "first_data_ns": [50 * MS, 1_050 * MS, 50 * MS],
        "end_ns": pd.array([2_000_000_000, 3_000_000_000, None], dtype="Int64"),
        "bytes": [250_000, 125_000, 1_000], "segments_sent": [200, 100, 10], "retransmits": [10, 0, 0],
        "drops": [10, 0, 1], "ecn_marks": [0, 0, 0],
    })


def test_tcp_summary_per_flow_and_run():
    f = jm.tcp_summary(_tcp())
    assert f["completion_s"].tolist()[:2] == [2.0, 2.0]
    assert f["goodput_bps"].tolist()[:2] == [1_000_000.0, 500_000.0]
    assert f["packet_error_rate"].tolist() == pytest.approx([0.05, 0.0, 0.1])
    assert np.isnan(f["completion_s"].iloc[2]) and np.isnan(f["goodput_bps"].iloc[2])
    r = jm.tcp_summary(_tcp(), per="run")
    one = r[r.run_id == 1].iloc[0]
    assert (one.flows, one.bytes, one.completion_s) == (2, 375_000, 3.0)
    assert one.goodput_bps == pytest.approx(1_000_000.0)
    assert one.packet_error_rate == pytest.approx(10 / 300)
    assert np.isnan(r[r.run_id == 2].iloc[0].completion_s)


def test_tcp_summary_bad_table():
    with pytest.raises(jitterlab.TableError, match="'drops'"):
        jm.tcp_summary(_tcp().drop(columns=["drops"]))
    t = _tcp()
    t["bytes"] = t["bytes"].astype(float)
    with pytest.raises(jitterlab.TableError, match="'bytes' must have an integer dtype"):
        jm.tcp_summary(t)


def test_emodel_default_r_and_mos():
    # ITU-T G.107 (06/2015) §7.7: all Table 3 defaults give R = 93.2; Annex B: MOS ≈ 4.41.
    r = jm.emodel_r(0.0, 0.0, 1.0, codec="g711")
    assert float(r) == pytest.approx(93.2, abs=0.05)
    assert float(jm.mos_from_r(r)) == pytest.approx(4.409, abs=0.002)


def test_emodel_no_cliff_above_100ms():
    # Idd is 0 up to 100 ms and ~3 at 200 ms (X = 1): MOS must not collapse after 100 ms.
    r = jm.emodel_r(np.array([100.0, 101.0, 200.0]), codec="g711")
    assert r[0] - r[1] < 0.05
    assert 3.0 < r[1] - r[2] < 8.0
    assert jm.mos_from_r(r).min() > 4.0


def test_emodel_ie_eff_from_g113_values():
    # G.113 App. I: G.711+PLC Bpl = 25.1. 1 % random loss: Ie,eff = 95·1/(1+25.1) = 3.6398.
    d = jm.emodel_r(0.0, 1.0, 1.0, codec="g711_plc") - jm.emodel_r(0.0, 0.0, 1.0, codec="g711_plc")
    assert float(d) == pytest.approx(-3.6398, abs=1e-3)
    # G.729A: Ie = 11 even without loss.
    d = jm.emodel_r(0.0, codec="g729a") - jm.emodel_r(0.0, codec="g711")
    assert float(d) == pytest.approx(-11.0)
    # Advantage factor override
    assert float(jm.emodel_r(0.0, codec="g711", params={"a": 5}) - jm.emodel_r(0.0, codec="g711")) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="'params'"):
        jm.emodel_r(0.0, params={"nope": 1.0})


def test_emodel_mos_from_tables():
    # base 10 ms (pre-TCP); window = packets 5..14, one isolated pure loss (seq 9).
    owds = [10] * 5 + [10, 10, 10, 10, None, 10, 10, 10, 10, 10]
    df = media(cbr(owds))
    e = jm.emodel_mos(df, runs({1: (100, 280)}), jbs_ms=[40], codec="g711_plc")
    row = e.iloc[0]
    assert e.columns.tolist() == ["run_id", "flow_id", "jb_s", "base_owd_s", "loss_fraction", "burst_r", "ta_s", "r", "mos"]
    assert row.jb_s == 0.040 and row.base_owd_s == 0.010 and row.ta_s == pytest.approx(0.070)   # 10 + 40 + 20 (G.711 20 ms)
    assert row.loss_fraction == pytest.approx(0.10)               # 1 of 10 (G.107's Ppl = 10 %)
    # R R R R L R R R R R: p = 1/8, q = 1 → BurstR = 1/(9/8) = 8/9.
    assert row.burst_r == pytest.approx(8 / 9)
    assert row.r == pytest.approx(float(jm.emodel_r(70.0, 10.0, 8 / 9, codec="g711_plc")))
    # Ie,eff = 95·10/(10·9/8 + 25.1) = 26.135 below the loss-free R.
    assert float(jm.emodel_r(70.0, codec="g711_plc")) - row.r == pytest.approx(26.135, abs=1e-3)


def test_best_jb_balances_delay_and_loss():
    # base 10 ms; in the window every OWD is 60 ms (excess 50): JB 40 loses all, JB 60 none,
    # JB 80 adds 20 ms more delay for nothing → best 60.
    df = media(cbr([10] * 5 + [60] * 10))
    b = jm.best_jb(df, runs({1: (100, 280)}), jbs_ms=[40, 60, 80])
    assert b["jb_s"].tolist() == [0.060]
    e = jm.emodel_mos(df, runs({1: (100, 280)}), jbs_ms=[40, 60, 80])
    assert e["loss_fraction"].tolist() == [1.0, 0.0, 0.0]
    assert e["mos"].iloc[0] < e["mos"].iloc[2] < e["mos"].iloc[1]


def test_emodel_nothing_received_is_nan_and_skipped_by_best_jb():
    df = media(cbr([None] * 5))
    e = jm.emodel_mos(df, runs({1: (0, 80)}), jbs_ms=[40])
    assert np.isnan(e["mos"].iloc[0])
    assert len(jm.best_jb(df, runs({1: (0, 80)}), jbs_ms=[40])) == 0
