"""OWD, IPDV (Table 1) and RFC 3550 jitter on hand-computed vectors."""
import numpy as np
import pytest

from jitterlab import metrics as jm
from _metrics_fixtures import MS, cbr, media, runs


def test_owd_overlap_window_edges_inclusive():
    # sends 0..100 ms, overlap [20, 60]: packets at 20, 40, 60 (OWD 12, 14, 16).
    df = media(cbr([10, 12, 14, 16, 18, 20]))
    o = jm.owd(df, runs({1: (20, 60)}), window="overlap")
    assert o["send_ns"].tolist() == [20 * MS, 40 * MS, 60 * MS]
    assert o["owd_ns"].tolist() == [12 * MS, 14 * MS, 16 * MS]
    o = jm.owd(df, runs({1: (20, 60)}), window=(40 * MS, 100 * MS))
    assert o["seq"].tolist() == [2, 3, 4, 5]


def test_owd_percentiles_and_cdf_pooled_over_runs():
    # run 1 OWDs 10, 20 ms; run 2 OWDs 30, 40 ms → pooled 10..40: median 25 ms, p25 17.5 ms.
    rows = cbr([10, 20], run=1) + cbr([30, 40], run=2)
    r = runs({1: (None, None), 2: (None, None)})
    t = jm.owd_percentiles(media(rows), r, window="all")
    assert list(t.columns) == jm.TABLE1_COLUMNS
    assert t["min_s"].iloc[0] == pytest.approx(0.010)
    assert t["p25_s"].iloc[0] == pytest.approx(0.0175)
    assert t["p50_s"].iloc[0] == pytest.approx(0.025)
    assert t["max_s"].iloc[0] == pytest.approx(0.040)
    # other quantiles, by run: the group column first, as in every other metric table
    t = jm.owd_percentiles(media(rows), r, window="all", by="run_id", q=[0.5, 0.999])
    assert list(t.columns) == ["run_id", "p50_s", "p99.9_s"] and t.run_id.tolist() == [1, 2]
    assert t.p50_s.tolist() == pytest.approx([0.015, 0.035])
    c = jm.owd_cdf(media(rows), r, window="all", points=3)
    assert c["p"].tolist() == [0.0, 0.5, 1.0]
    assert c["owd_s"].tolist() == pytest.approx([0.010, 0.025, 0.040])


def test_ipdv_table_has_exactly_table1_columns_and_hand_values():
    # OWDs 10, 30, 10, 10, 20 ms → IPDV +20, −20, 0, +10 ms.
    # sorted [−0.02, 0, 0.01, 0.02]: 25% = −0.005, 50% = 0.005, 75% = 0.0125, 90% = 0.017.
    df = media(cbr([10, 30, 10, 10, 20]))
    t = jm.ipdv_table(df, runs({1: (None, None)}), window="all")
    assert list(t.columns) == ["min_s", "p25_s", "p50_s", "p75_s", "p90_s", "p95_s", "p96_s", "p97_s", "p98_s", "p99_s", "max_s"]
    got = t.iloc[0][["min_s", "p25_s", "p50_s", "p75_s", "p90_s", "max_s"]].tolist()
    assert got == pytest.approx([-0.02, -0.005, 0.005, 0.0125, 0.017, 0.02])


def test_ipdv_table_by_parameter_groups():
    rows = cbr([10, 30], run=1) + cbr([10, 15], run=2) + cbr([10, 12], run=3)
    r = runs({1: (None, None, {"iw": 3}), 2: (None, None, {"iw": 10}), 3: (None, None, {"iw": 10})})
    t = jm.ipdv_table(media(rows), r, window="all", by="iw")
    assert t.iw.tolist() == [3, 10] and list(t.columns[:2]) == ["iw", "min_s"]
    t = t.set_index("iw")
    assert t.loc[3, "max_s"] == pytest.approx(0.020)
    assert t.loc[10, "min_s"] == pytest.approx(0.002)
    assert t.loc[10, "max_s"] == pytest.approx(0.005)


def test_ipdv_uses_sequence_order_with_reordered_arrivals_and_skips_losses():
    # seq 1 arrives last (OWD 50 ms); seq 3 lost.
    rows = [(1, 1, 0, 0, 10), (1, 1, 2, 40, 45), (1, 1, 1, 20, 70), (1, 1, 3, 60, None), (1, 1, 4, 80, 90)]
    d = jm.ipdv(media(rows), runs({1: (None, None)}), window="all")
    assert d["seq"].tolist() == [1, 2]
    assert d["ipdv_ns"].tolist() == [40 * MS, -45 * MS]


def test_rfc3550_jitter_arrival_order():
    # Arrival order seq0 (S0 R10), seq2 (S40 R60), seq1 (S20 R70):
    # D = 10 ms → J = 0.625 ms; D = 30 ms → J = 0.625 + (30 − 0.625)/16 = 2.4609375 ms.
    rows = [(1, 1, 0, 0, 10), (1, 1, 1, 20, 70), (1, 1, 2, 40, 60), (1, 1, 3, 60, None)]
    j = jm.interarrival_jitter(media(rows), runs({1: (None, None)}))
    assert j["seq"].tolist() == [0, 2, 1]
    assert j["jitter_ns"].tolist() == [0.0, 625_000.0, 2_460_937.5]
    f = jm.jitter_final(media(rows), runs({1: (None, None)}))
    assert f["jitter_s"].tolist() == [pytest.approx(2_460_937.5e-9, rel=1e-15)]


def test_jitter_all_lost_is_nan():
    f = jm.jitter_final(media(cbr([None, None])), runs({1: (None, None)}))
    assert np.isnan(f["jitter_s"].iloc[0])
