"""Pure and delay-based loss, RFC 3357 periods, Table 2 levels, Figs. 5–7 aggregates."""
import numpy as np
import pandas as pd
import pytest

from jitterlab import metrics as jm
from _metrics_fixtures import MS, cbr, media, runs


def _three_runs():
    # tcp window [100, 180] ms = packets 5..9. Pre-TCP packets (recv < 100 ms) give base 10 ms.
    r1 = cbr([10, 12, 11, 15, 30, 50, 51, None, 70, 10], run=1)  # excess 40, 41, lost, 60, 0
    r2 = cbr([10] * 5 + [None] * 5, run=2)                      # all lost in the window
    r3 = cbr([10] * 10, run=3)                                  # none lost
    return media(r1 + r2 + r3), runs({1: (100, 180), 2: (100, 180), 3: (100, 180)})


def test_jb_loss_per_replication_hand_computed():
    df, r = _three_runs()
    b = jm.base_delay(df, r)
    assert b["base_owd_ns"].tolist() == [10 * MS] * 3
    assert b["source"].tolist() == ["pre_tcp"] * 3
    out = jm.jb_loss(df, r, jbs_ms=[40, 60, 80])
    one = out[out.run_id == 1]
    assert one["packets"].tolist() == [5, 5, 5]
    assert one["pure"].tolist() == [1, 1, 1]
    assert one["late"].tolist() == [2, 0, 0]        # 41 and 60 > 40; 60 is not > 60 (deadline inclusive)
    assert one["loss_rate"].tolist() == pytest.approx([0.6, 0.2, 0.2])
    assert out[out.run_id == 2]["loss_rate"].tolist() == [1.0, 1.0, 1.0]   # all lost
    assert out[out.run_id == 3]["loss_rate"].tolist() == [0.0, 0.0, 0.0]   # none lost


def test_jb_loss_summary_median_and_quartiles():
    df, r = _three_runs()
    s = jm.jb_loss_summary(df, r, jbs_ms=[40, 60])
    assert s.columns.tolist() == ["jb_s", "replications", "median", "p25", "p75"]
    # JB 40: rates [0.6, 1.0, 0.0] → median 0.6, p25 0.3, p75 0.8.
    row = s[s.jb_s == 0.040].iloc[0]
    assert (row.replications, row["median"], row.p25, row.p75) == (3, pytest.approx(0.6), pytest.approx(0.3), pytest.approx(0.8))
    row = s[s.jb_s == 0.060].iloc[0]   # [0.2, 1.0, 0.0]
    assert (row["median"], row.p25, row.p75) == (pytest.approx(0.2), pytest.approx(0.1), pytest.approx(0.6))


def test_base_delay_fallback_warns():
    df = media(cbr([30, 20, 25]))
    with pytest.warns(jm.MetricsWarning, match="whole stream"):
        b = jm.base_delay(df, runs({1: (0, 40)}))
    assert b["source"].tolist() == ["whole_stream"]
    assert b["base_owd_ns"].tolist() == [20 * MS]
    b = jm.base_delay(media(cbr([None, None])), runs({1: (0, 40)}))
    assert b["source"].tolist() == ["none"] and b["base_owd_ns"].isna().all()


@pytest.mark.parametrize("k,level", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (9, 4), (10, 5)])
def test_level_boundaries(k, level):
    df = media(cbr([5] + [None] * k + [5]))
    lv = jm.loss_levels(df, runs({1: (None, None)}), jb_ms=None, window="all")
    assert lv["level"].tolist() == [0] + [level] * k + [0]
    assert lv["lost"].tolist() == [False] + [True] * k + [False]


def test_levels_generalised_for_10ms_packets():
    # 10 ms packets: 3 lost = 30 ms → level 1, 4 lost = 40 ms → level 2.
    rows = [(1, 1, i, 10 * i, None if 1 <= i <= 3 or 5 <= i <= 8 else 10 * i + 5) for i in range(10)]
    lv = jm.loss_levels(media(rows), runs({1: (None, None)}), jb_ms=None, window="all", interval_ms=10)
    assert lv["level"].tolist() == [0, 1, 1, 1, 0, 2, 2, 2, 2, 0]


def test_delay_based_loss_forms_periods():
    # base 5 ms; JB 40: OWD 50 and 46 are late (excess 45, 41), 45 is on time (excess 40).
    df = media(cbr([5, 50, 46, 45, 5]))
    with pytest.warns(jm.MetricsWarning):  # no tcp_start_ns: base from the whole stream
        lv = jm.loss_levels(df, runs({1: (None, None)}), jb_ms=40, window="all")
    assert lv["level"].tolist() == [0, 2, 2, 0, 0]


def test_period_touching_both_ends_of_window():
    # Stream: 3 lost, 3 received, 2 lost. Window [40, 120] ms = seq 2..6; both periods touch it
    # and keep their whole-stream lengths (3 → level 2, 2 → level 2).
    df = media(cbr([None, None, None, 5, 5, 5, None, None]))
    r = runs({1: (40, 120)})
    lv = jm.loss_levels(df, r, jb_ms=None, window="overlap")
    assert lv["seq"].tolist() == [2, 3, 4, 5, 6]
    assert lv["level"].tolist() == [2, 0, 0, 0, 2]
    per = jm.loss_periods(df, r, window="overlap")
    assert per[["start_seq", "length", "duration_s", "level", "loss_distance"]].values.tolist() == [
        [0, 3, 0.06, 2, 0], [6, 2, 0.04, 2, 4]]
    st = jm.loss_period_stats(df, r, window="overlap")
    assert st[["periods", "lost", "max_length"]].iloc[0].tolist() == [2, 5, 3]
    assert st["mean_length"].iloc[0] == 2.5


def test_all_lost_and_none_lost_periods():
    r = runs({1: (None, None)})
    per = jm.loss_periods(media(cbr([None] * 12)), r)
    assert per[["length", "level"]].values.tolist() == [[12, 5]]
    st = jm.loss_period_stats(media(cbr([5] * 4)), r)
    assert st[["periods", "lost", "max_length"]].iloc[0].tolist() == [0, 0, 0]


def test_periods_by_sequence_with_out_of_order_arrivals():
    # seq 1, 2 lost; arrivals of 0, 3, 4 scrambled in time → one period of 2 (seq order).
    rows = [(1, 1, 3, 60, 300), (1, 1, 0, 0, 400), (1, 1, 4, 80, 90), (1, 1, 1, 20, None), (1, 1, 2, 40, None)]
    per = jm.loss_periods(media(rows), runs({1: (None, None)}))
    assert per[["start_seq", "length"]].values.tolist() == [[1, 2]]


def _time_runs():
    # Run 1: tcp_start 20 ms, seq 2 lost (isolated → level 1). Run 2: tcp [20, 40],
    # seq 1 and 2 have OWD 50 ms (excess 45 over base 5): late for JB 40 (2 in a row → level 2).
    r1 = [(1, 1, i, 20 * i, None if i == 2 else 20 * i + 5) for i in range(5)]
    r2 = [(2, 1, i, 20 * i, 20 * i + (50 if i in (1, 2) else 5)) for i in range(5)]
    return media(r1 + r2), runs({1: (20, None, {"iw": 3}), 2: (20, 40, {"iw": 10})})


def test_levels_over_time_normalised():
    df, r = _time_runs()
    t = jm.levels_over_time(df, r, jb_ms=None, bin_ms=40, span_ms=80)
    # bin 0 (t 0–40 ms): run 1 seq1 L0, seq2 L1; run 2 seq1, seq2 L0 → L0 = 3/2, L1 = 1/2.
    # bin 1 (t 40–80 ms): run 1 seq3, seq4 L0; run 2 ended at 40 ms → L0 = 2/2.
    assert t["t_s"].tolist() == [0.0, 0.04]
    assert t["replications"].tolist() == [2, 2]
    assert t["level_0"].tolist() == [1.5, 1.0]
    assert t["level_1"].tolist() == [0.5, 0.0]
    assert t[["level_2", "level_3", "level_4", "level_5"]].to_numpy().sum() == 0
    t = jm.levels_over_time(df, r, jb_ms=40, bin_ms=40, span_ms=80, by="iw")
    assert t["iw"].tolist() == [3, 3, 10, 10]
    assert t["level_2"].tolist() == [0.0, 0.0, 2.0, 0.0]


def test_acceptable_over_time_per_jb():
    df, r = _time_runs()
    a = jm.acceptable_over_time(df, r, jbs_ms=[40, 60], bin_ms=40, span_ms=80)
    assert a.columns.tolist() == ["jb_s", "t_s", "acceptable"]
    got = {(j, t): v for j, t, v in a.itertuples(index=False)}
    assert got == {(0.04, 0.0): 1.0, (0.04, 0.04): 1.0, (0.06, 0.0): 2.0, (0.06, 0.04): 1.0}


def test_absurd_bin_parameters_are_refused_not_fatal():
    df, r = _time_runs()
    with pytest.raises(ValueError, match="bin"):
        jm.levels_over_time(df, r, jb_ms=None, bin_ms=1e-6, span_ms=1e12)
    with pytest.raises(ValueError, match="bin_ms"):
        jm.levels_over_time(df, r, jb_ms=None, bin_ms=0)


def test_acceptable_over_time_by_group_keeps_order():
    df, r = _time_runs()
    a = jm.acceptable_over_time(df, r, jbs_ms=[40, 60], bin_ms=40, span_ms=80, by="iw")
    got = {(iw, j, t): v for iw, j, t, v in a[["iw", "jb_s", "t_s", "acceptable"]].itertuples(index=False)}
    # iw 3 = run 1 (isolated loss, level 1: acceptable); iw 10 = run 2 (2 late packets at JB 40).
    assert got == {
        (3, 0.04, 0.0): 2.0, (3, 0.04, 0.04): 2.0, (3, 0.06, 0.0): 2.0, (3, 0.06, 0.04): 2.0,
        (10, 0.04, 0.0): 0.0, (10, 0.04, 0.04): 0.0, (10, 0.06, 0.0): 2.0, (10, 0.06, 0.04): 0.0,
    }
