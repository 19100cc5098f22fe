//! One run's share of a sweep's closing summary (`jitterlab.summary.run_part`) in one call: the
//! run's media rows joined into the metrics' prepared table (one stream a flow), then per stream
//! the RTP counts, the E-model's MOS at each jitter buffer and the OWD quantiles (or the OWD
//! values, to pool with the other runs of the point). The same functions, in the same order, as
//! `MediaSet.from_chunks`, `rtp_summary`, `emodel` and `pooled_quantiles` (`owd`): the same bits.
use jitterlab_metrics as jm;
use jm::{delay, emodel, loss, rtp, Media, RunTimes};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::TableError;
use crate::metrics::{emodel_cols, to_py, window};
use crate::native_table::NativeTable;

type Chunk<'a> = (&'a [i64], &'a [i64], &'a [i64], &'a [i64], &'a [bool], &'a [i64]);

/// The distinct flows of the rows (ascending) and the prepared table, each flow its own "run"
/// (its stream), every one with the run's TCP times.
fn prepare(chunks: &[Chunk<'_>], tcp_start_ns: Option<i64>, tcp_end_ns: Option<i64>) -> jm::Result<(Vec<i64>, Media)> {
    let mut flows: Vec<i64> = Vec::new();
    let mut rows = 0usize;
    for c in chunks {
        rows += c.0.len();
        let mut prev = None;
        for &f in c.0 {
            if prev != Some(f) {
                flows.push(f);
                prev = Some(f);
            }
        }
    }
    flows.sort_unstable();
    flows.dedup();
    let mut o = jm::MediaOwned::default();
    for v in [&mut o.flow, &mut o.seq, &mut o.send_ns, &mut o.recv_ns, &mut o.size] {
        v.reserve_exact(rows);
    }
    o.run.reserve_exact(rows);
    o.received.reserve_exact(rows);
    for &(f, q, s, r, ok, z) in chunks {
        let mut lo = 0;
        while lo < f.len() {
            // a stretch of one flow: its stream's code
            let hi = lo + f[lo..].iter().position(|&x| x != f[lo]).unwrap_or(f.len() - lo);
            let code = flows.binary_search(&f[lo]).unwrap_or(0) as u32;
            o.run.resize(o.run.len() + (hi - lo), code);
            lo = hi;
        }
        o.flow.extend_from_slice(f);
        o.seq.extend_from_slice(q);
        o.send_ns.extend_from_slice(s);
        o.recv_ns.extend_from_slice(r);
        o.received.extend_from_slice(ok);
        o.size.extend_from_slice(z);
    }
    let ts = vec![tcp_start_ns; flows.len()];
    let te = vec![tcp_end_ns; flows.len()];
    let m = Media::from_sorted(o, RunTimes { tcp_start_ns: &ts, tcp_end_ns: &te })?;
    Ok((flows, m))
}

/// A run's share of the summary from its media rows in chunks (numpy arrays, a list a column):
/// a dict of `flows` (ascending; a stream each), `sent` and `received` (window `kind`), `mos`
/// (stream-major, a value a buffer of `jbs_ns`) and `quantiles` (stream-major, a value a
/// probability of `probs`) or, without `probs`, `owd` (s) and `owd_stream` (each value's stream).
#[pyfunction]
#[pyo3(signature = (flow, seq, send_ns, recv_ns, received, size, tcp_start_ns, tcp_end_ns, kind, pre_ns, jbs_ns, ie, bpl, codec_delay_ms, probs))]
#[allow(clippy::too_many_arguments)]
fn run_share<'py>(
    py: Python<'py>,
    flow: Vec<PyReadonlyArray1<'_, i64>>,
    seq: Vec<PyReadonlyArray1<'_, i64>>,
    send_ns: Vec<PyReadonlyArray1<'_, i64>>,
    recv_ns: Vec<PyReadonlyArray1<'_, i64>>,
    received: Vec<PyReadonlyArray1<'_, bool>>,
    size: Vec<PyReadonlyArray1<'_, i64>>,
    tcp_start_ns: Option<i64>,
    tcp_end_ns: Option<i64>,
    kind: &str,
    pre_ns: i64,
    jbs_ns: Vec<i64>,
    ie: f64,
    bpl: f64,
    codec_delay_ms: f64,
    probs: Option<Vec<f64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let w = window(kind, 0, 0)?;
    let k = flow.len();
    if [seq.len(), send_ns.len(), recv_ns.len(), received.len(), size.len()].iter().any(|&l| l != k) {
        return Err(PyValueError::new_err("run_share: as many chunks in every column expected"));
    }
    let mut chunks: Vec<Chunk<'_>> = Vec::with_capacity(k);
    for i in 0..k {
        let c = (flow[i].as_slice()?, seq[i].as_slice()?, send_ns[i].as_slice()?, recv_ns[i].as_slice()?, received[i].as_slice()?, size[i].as_slice()?);
        let n = c.0.len();
        if [c.1.len(), c.2.len(), c.3.len(), c.4.len(), c.5.len()].iter().any(|&l| l != n) {
            return Err(TableError::new_err(format!("media_packets: the columns of chunk {i} differ in length")));
        }
        chunks.push(c);
    }
    share(py, &chunks, tcp_start_ns, tcp_end_ns, w, pre_ns, &jbs_ns, ie, bpl, codec_delay_ms, probs.as_deref(), false)
}

/// `run_share` of a run's `media_packets` kept native (`NativeTable`), its values read in place;
/// the dict's arrays are `array.array`s (no numpy in a sweep's worker).
#[pyfunction]
#[pyo3(signature = (media, tcp_start_ns, tcp_end_ns, kind, pre_ns, jbs_ns, ie, bpl, codec_delay_ms, probs))]
#[allow(clippy::too_many_arguments)]
fn run_share_native<'py>(
    py: Python<'py>,
    media: &Bound<'py, NativeTable>,
    tcp_start_ns: Option<i64>,
    tcp_end_ns: Option<i64>,
    kind: &str,
    pre_ns: i64,
    jbs_ns: Vec<i64>,
    ie: f64,
    bpl: f64,
    codec_delay_ms: f64,
    probs: Option<Vec<f64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let w = window(kind, 0, 0)?;
    let t = media.get();
    let (flow, _) = t.i64_column("flow_id")?;
    let (seq, _) = t.i64_column("seq")?;
    let (send, _) = t.i64_column("send_ns")?;
    let (recv, valid) = t.i64_column("recv_ns")?;
    let (size, _) = t.i64_column("size")?;
    let received: Vec<bool> = match valid {
        Some(v) => v.iter().collect(),
        None => vec![true; recv.len()],
    };
    let chunks: Vec<Chunk<'_>> = if flow.is_empty() { Vec::new() } else { vec![(flow, seq, send, recv, &received, size)] };
    share(py, &chunks, tcp_start_ns, tcp_end_ns, w, pre_ns, &jbs_ns, ie, bpl, codec_delay_ms, probs.as_deref(), true)
}

/// An `array.array` of `v` (typecode `tc`: 'q' int64, 'd' float64), built from its bytes.
fn py_array<'py, T: Copy>(py: Python<'py>, tc: &str, v: &[T], bytes: impl Fn(T) -> [u8; 8]) -> PyResult<Bound<'py, PyAny>> {
    let raw: Vec<u8> = v.iter().flat_map(|&x| bytes(x)).collect();
    py.import("array")?.getattr("array")?.call1((tc, pyo3::types::PyBytes::new(py, &raw)))
}

/// The run's share from its media rows (`chunks`); arrays as numpy's or, with `plain`, `array.array`s.
#[allow(clippy::too_many_arguments)]
fn share<'py>(
    py: Python<'py>,
    chunks: &[Chunk<'_>],
    tcp_start_ns: Option<i64>,
    tcp_end_ns: Option<i64>,
    w: jm::Window,
    pre_ns: i64,
    jbs_ns: &[i64],
    ie: f64,
    bpl: f64,
    codec_delay_ms: f64,
    probs: Option<&[f64]>,
    plain: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let p = emodel::Params::default();
    let (flows, sent, recv, mos, q) = py
        .detach(|| -> jm::Result<_> {
            let (flows, m) = prepare(chunks, tcp_start_ns, tcp_end_ns)?;
            let rtp = rtp::rtp_summary(&m, w);
            let sent: Vec<i64> = rtp.iter().map(|x| x.sent as i64).collect();
            let recv: Vec<i64> = rtp.iter().map(|x| x.received as i64).collect();
            let bases = loss::base_delay(&m, pre_ns)?;
            let mos = emodel_cols(&m, &bases, w, jbs_ns, &p, ie, bpl, codec_delay_ms).swap_remove(5);
            let q = match probs {
                Some(probs) => Ok(delay::owd_quantiles_s_by_run(&m, w, probs)?),
                None => Err(delay::owd_s_with_run(&m, w)),
            };
            Ok((flows, sent, recv, mos, q))
        })
        .map_err(to_py)?;
    let d = PyDict::new(py);
    let ints = |v: Vec<i64>| -> PyResult<Bound<'py, PyAny>> { if plain { py_array(py, "q", &v, i64::to_ne_bytes) } else { Ok(v.into_pyarray(py).into_any()) } };
    let floats = |v: Vec<f64>| -> PyResult<Bound<'py, PyAny>> { if plain { py_array(py, "d", &v, f64::to_ne_bytes) } else { Ok(v.into_pyarray(py).into_any()) } };
    d.set_item("flows", ints(flows)?)?;
    d.set_item("sent", ints(sent)?)?;
    d.set_item("received", ints(recv)?)?;
    d.set_item("mos", floats(mos)?)?;
    match q {
        Ok(q) => d.set_item("quantiles", floats(q)?)?,
        Err((vals, grp)) => {
            d.set_item("owd", floats(vals)?)?;
            d.set_item("owd_stream", ints(grp.into_iter().map(i64::from).collect())?)?;
        }
    }
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_share, m)?)?;
    m.add_function(wrap_pyfunction!(run_share_native, m)?)?;
    Ok(())
}
