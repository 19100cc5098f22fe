"""Table handling: validation errors name the column; dtypes accepted; duplicates; 16-bit wrap."""
import numpy as np
import pandas as pd
import pytest

import jitterlab
from jitterlab import metrics as jm
from _metrics_fixtures import MS, cbr, media, runs


def test_missing_column_is_named():
    df = media(cbr([5, 5])).drop(columns=["send_ns"])
    with pytest.raises(jitterlab.TableError, match="'send_ns'"):
        jm.owd(df, runs({1: (None, None)}))
    with pytest.raises(jitterlab.TableError, match="runs: missing column 'tcp_end_ns'"):
        jm.owd(media(cbr([5])), runs({1: (None, None)}).drop(columns=["tcp_end_ns"]))


def test_wrong_dtype_is_named():
    df = media(cbr([5, 5]))
    df["send_ns"] = df["send_ns"].astype("float64")
    with pytest.raises(jitterlab.TableError, match="'send_ns' must have an integer dtype"):
        jm.owd(df, runs({1: (None, None)}))
    df = media(cbr([5, 5]))
    df["recv_ns"] = df["recv_ns"].astype(str)
    with pytest.raises(jitterlab.TableError, match="'recv_ns'"):
        jm.owd(df, runs({1: (None, None)}))
    df = media(cbr([5]))
    df["seq"] = pd.array([None], dtype="Int64")
    with pytest.raises(jitterlab.TableError, match="'seq' has null"):
        jm.owd(df, runs({1: (None, None)}))


def test_negative_delay_is_named():
    df = media([(1, 1, 0, 10, 5)])
    with pytest.raises(jitterlab.TableError, match="recv_ns.*negative one-way delay at row 0"):
        jm.owd(df, runs({1: (None, None)}))


def test_unknown_run_and_bad_runs_table():
    with pytest.raises(jitterlab.TableError, match="'run_id' value 2 is not in the runs table"):
        jm.owd(media(cbr([5], run=2)), runs({1: (None, None)}))
    with pytest.raises(jitterlab.TableError, match="tcp_end_ns"):
        jm.jb_loss(media(cbr([5])), runs({1: (100, 50)}))
    r = pd.concat([runs({1: (None, None)})] * 2)
    with pytest.raises(jitterlab.TableError, match="'run_id' has duplicate"):
        jm.owd(media(cbr([5])), r)


def test_float_recv_with_nan_and_string_run_ids_match_int64():
    rows = cbr([10, None, 30])
    a = media(rows)
    b = a.copy()
    b["recv_ns"] = b["recv_ns"].astype("float64")  # NA -> NaN
    assert np.isnan(b["recv_ns"].iloc[1])
    r = runs({1: (None, None)})
    assert jm.owd(a, r)["owd_ns"].tolist() == [10 * MS, 30 * MS]
    assert jm.owd(b, r)["owd_ns"].tolist() == [10 * MS, 30 * MS]
    c = media([("r-a", *x[1:]) for x in rows], run_dtype="str")
    out = jm.owd(c, runs({"r-a": (None, None)}))
    assert out["run_id"].tolist() == ["r-a", "r-a"]
    # runs may be omitted for whole-stream metrics
    assert jm.owd(a)["owd_ns"].tolist() == [10 * MS, 30 * MS]


def test_duplicates_counted_once_first_copy():
    # seq 1 captured twice (recv 40 then 35 ms) and seq 2 once lost once received.
    df = media([(1, 1, 0, 0, 10), (1, 1, 1, 20, 40), (1, 1, 1, 20, 35), (1, 1, 2, 40, None), (1, 1, 2, 40, 60)])
    p = jm.prepare(df, runs({1: (None, None)}))
    assert p.duplicates == 2
    o = jm.owd(p, window="all")
    assert o["seq"].tolist() == [0, 1, 2]
    assert o["owd_ns"].tolist() == [10 * MS, 15 * MS, 20 * MS]
    assert jm.rtp_summary(p, window="all")[["sent", "received"]].iloc[0].tolist() == [3, 3]


def test_sequence_numbers_that_wrap():
    # 16-bit RTP numbers 65534, 65535, 0, 1 with 65535 lost: one loss period of length 1 in
    # the middle, not at the ends.
    rows = [(1, 1, 65534, 0, 5), (1, 1, 65535, 20, None), (1, 1, 0, 40, 45), (1, 1, 1, 60, 65)]
    p = jm.prepare(media(rows), runs({1: (None, None)}), unwrap16=True)
    per = jm.loss_periods(p)
    assert per[["start_seq", "length"]].values.tolist() == [[65535, 1]]
    assert jm.ipdv(p, window="all")["seq"].tolist() == [65537]
    with pytest.raises(jitterlab.TableError, match="'seq'"):
        jm.prepare(media([(1, 1, 70000, 0, 5)]), runs({1: (None, None)}), unwrap16=True)


def test_bad_parameters_raise_value_error():
    df, r = media(cbr([5] * 3)), runs({1: (0, 40)})
    with pytest.raises(ValueError, match="window"):
        jm.owd(df, r, window="everything")
    with pytest.raises(ValueError, match="jbs_ms"):
        jm.jb_loss(df, r, jbs_ms=[])
    with pytest.raises(TypeError, match="jbs"):   # the unit is in the name: the old keyword is refused
        jm.jb_loss(df, r, jbs=[40])
    with pytest.raises(ValueError, match="codec"):
        jm.emodel_mos(df, r, codec="opus")
    with pytest.raises(ValueError, match="interval"):
        jm.loss_levels(df, r, interval_ms=0)


def test_overlap_without_any_tcp_start_warns_and_selects_nothing():
    with pytest.warns(jm.MetricsWarning, match="no run has tcp_start_ns"):
        o = jm.owd(media(cbr([5, 5])), runs({1: (None, None)}), window="overlap")
    assert len(o) == 0


def test_overlap_window_table():
    w = jm.overlap_window(runs({1: (100, 300), 2: (None, None), 3: (50, None)}))
    assert w["start_ns"].tolist()[0] == 100 * MS and w["end_ns"].tolist()[0] == 300 * MS
    assert w["duration_s"].iloc[0] == pytest.approx(0.2)
    assert w["start_ns"].isna().tolist() == [False, True, False]
    assert np.isnan(w["duration_s"].iloc[2])


def test_one_unit_rule_for_every_returned_table():
    """docs/tables.md: per-packet / one-packet columns integer ns (*_ns), summaries float seconds
    (*_s), shares fractions in [0, 1]; no millisecond or percent column comes back."""
    df = media(cbr([10] * 5 + [10, 60, None, 10, 10, 10, 10, 10, 10, 10]))
    r = runs({1: (100, 280, {"iw": 3})})
    p = jm.prepare(df, r)
    tables = {
        "overlap_window": jm.overlap_window(r), "owd": jm.owd(p), "owd_cdf": jm.owd_cdf(p),
        "ipdv": jm.ipdv(p), "interarrival_jitter": jm.interarrival_jitter(p), "jitter_final": jm.jitter_final(p),
        "base_delay": jm.base_delay(p), "jb_loss": jm.jb_loss(p), "jb_loss_summary": jm.jb_loss_summary(p, by="iw"),
        "loss_levels": jm.loss_levels(p), "loss_periods": jm.loss_periods(p), "loss_period_stats": jm.loss_period_stats(p),
        "levels_over_time": jm.levels_over_time(p), "acceptable_over_time": jm.acceptable_over_time(p),
        "rtp_summary": jm.rtp_summary(p), "emodel_mos": jm.emodel_mos(p), "best_jb": jm.best_jb(p),
    }
    fractions = {"loss_rate", "loss_fraction", "packet_error_rate", "median", "p25", "p75"}
    for name, t in tables.items():
        for c in t.columns:
            assert not c.endswith(("_ms", "_us", "_pct")) and c != "ppl", f"{name}.{c}: not the stated unit"
            if c.endswith("_ns") and (name, c) != ("interarrival_jitter", "jitter_ns"):   # J: float ns
                assert pd.api.types.is_integer_dtype(t[c].dtype), f"{name}.{c}: ns columns are integer"
            if c.endswith("_s"):
                assert pd.api.types.is_float_dtype(t[c].dtype), f"{name}.{c}: seconds are float"
            if c in fractions:
                v = t[c].dropna()
                assert ((v >= 0) & (v <= 1)).all(), f"{name}.{c}: a fraction"
    # The values in seconds: base 10 ms, JB 40 ms (default first), Ta = 10 + 40 + 20 ms.
    e = tables["emodel_mos"].iloc[0]
    assert (e.jb_s, e.base_owd_s, e.ta_s) == (0.040, 0.010, pytest.approx(0.070))
    # window: packets 5..14 (10); seq 6 late (60 > 10 + 40), seq 7 pure → 2 of 10
    assert e.loss_fraction == pytest.approx(0.2)
    assert tables["jb_loss"]["jb_s"].tolist() == [j / 1000 for j in jm.DEFAULT_JBS_MS]
    assert tables["loss_periods"]["duration_s"].tolist() == [0.02]   # pure loss only: seq 7, 1 × 20 ms


def test_media_chunks_of_unequal_columns_are_named_by_both_native_readers():
    # the one chunk check (crates/py/src/chunks.rs) behind MediaSet.from_chunks and run_share:
    # chunk 1's recv_ns is a row short
    from jitterlab import _native

    a, short, ok = np.arange(3, dtype=np.int64), np.arange(2, dtype=np.int64), np.ones(3, dtype=bool)
    cols = ([a, a], [a, a], [a, a], [a, short], [ok, ok], [a, a])
    with pytest.raises(jitterlab.TableError, match="media_packets: the columns of chunk 1 differ in length"):
        _native.run_share(*cols, None, None, "all", 0, [40_000_000], 0.0, 10.0, 0.0, None)
    t, v = np.zeros(1, dtype=np.int64), np.ones(1, dtype=bool)
    with pytest.raises(jitterlab.TableError, match="media_packets: the columns of chunk 1 differ in length"):
        _native.MediaSet.from_chunks([0, 0], *cols, t, v, t, v)
