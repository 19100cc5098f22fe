//! One run's share of a sweep's closing summary (`jitterlab.summary.run_part`) in one call: the
//! run's media rows prepared as one run (`OneRun`: read in place where they already are the
//! prepared form, a simulator's; a stream a flow), then per stream the RTP counts, the E-model's
//! MOS at each jitter buffer and the OWD quantiles (or the OWD values, to pool with the other runs
//! of the point). The same values, bit for bit, as `MediaSet.from_chunks` (each flow a run of its
//! own), `rtp_summary`, `emodel` and `pooled_quantiles` (`owd`).
use jitterlab_metrics as jm;
use jm::{delay, emodel, loss, rtp, OneRun, RunColumns};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::chunks::{checked_chunk, extend, Chunk};
use crate::metrics::{emodel_cols, emodel_cols_of, to_py, window};
use crate::native_table::NativeTable;

fn columns<'a>((flow, seq, send_ns, recv_ns, received, size): Chunk<'a>) -> RunColumns<'a> {
    RunColumns { flow, seq, send_ns, recv_ns, received, size }
}

/// The run's share computed from its prepared rows (one stream a flow, the run's TCP times):
/// the flows (ascending), sent and received counts, MOS (stream-major) and either the OWD
/// quantiles or the OWD values and their streams. No rows: every vector empty.
type Share = (Vec<i64>, Vec<i64>, Vec<i64>, Vec<f64>, Result<Vec<f64>, (Vec<f64>, Vec<u32>)>);

#[allow(clippy::too_many_arguments)]
fn compute(c: RunColumns<'_>, tcp_start_ns: Option<i64>, tcp_end_ns: Option<i64>, w: jm::Window, pre_ns: i64, jbs_ns: &[i64], ie: f64, bpl: f64,
           codec_delay_ms: f64, probs: Option<&[f64]>) -> jm::Result<Share> {
    if c.flow.is_empty() {
        return Ok((Vec::new(), Vec::new(), Vec::new(), Vec::new(), probs.map(|_| Vec::new()).ok_or((Vec::new(), Vec::new()))));
    }
    // a simulator's rows (the prepared form): two passes (jm::share); any other rows, or an
    // error, by the general functions below
    if let Some(s) = jm::share::share(c, tcp_start_ns, tcp_end_ns, w, pre_ns, jbs_ns, probs) {
        let s = s?;
        let mos = emodel_cols_of(&s.bursts, &s.bases, jbs_ns, &emodel::Params::default(), ie, bpl, codec_delay_ms).swap_remove(5);
        let ints = |v: Vec<u64>| v.into_iter().map(|x| x as i64).collect();
        return Ok((s.streams.iter().map(|s| s.flow).collect(), ints(s.sent), ints(s.received), mos, s.owd));
    }
    let one = OneRun::new(c, tcp_start_ns, tcp_end_ns)?;
    let m = one.view();
    let flows: Vec<i64> = m.streams.iter().map(|s| s.flow).collect();
    let rtp = rtp::rtp_summary(m, w);
    let sent: Vec<i64> = rtp.iter().map(|x| x.sent as i64).collect();
    let recv: Vec<i64> = rtp.iter().map(|x| x.received as i64).collect();
    let bases = loss::base_delay(m, pre_ns)?;
    let mos = emodel_cols(&m, &bases, w, jbs_ns, &emodel::Params::default(), ie, bpl, codec_delay_ms).swap_remove(5);
    let q = match probs {
        Some(probs) => Ok(delay::owd_quantiles_s_by_stream(m, w, probs)?),
        None => Err(delay::owd_s_with_stream(m, w)),
    };
    Ok((flows, sent, recv, mos, q))
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
        chunks.push(checked_chunk(i, (flow[i].as_slice()?, seq[i].as_slice()?, send_ns[i].as_slice()?, recv_ns[i].as_slice()?, received[i].as_slice()?, size[i].as_slice()?))?);
    }
    // a lone chunk read in place; several joined
    let joined;
    let cols = match chunks[..] {
        [] => columns((&[], &[], &[], &[], &[], &[])),
        [c] => columns(c),
        _ => {
            joined = chunks.iter().fold(jm::MediaOwned::default(), |mut o, &c| {
                extend(&mut o, c);
                o
            });
            RunColumns { flow: &joined.flow, seq: &joined.seq, send_ns: &joined.send_ns, recv_ns: &joined.recv_ns, received: &joined.received, size: &joined.size }
        }
    };
    share(py, cols, tcp_start_ns, tcp_end_ns, w, pre_ns, &jbs_ns, ie, bpl, codec_delay_ms, probs.as_deref(), false)
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
        Some(v) => bools(v.inner()),
        None => vec![true; recv.len()],
    };
    share(py, columns((flow, seq, send, recv, &received, size)), tcp_start_ns, tcp_end_ns, w, pre_ns, &jbs_ns, ie, bpl, codec_delay_ms, probs.as_deref(), true)
}

/// The bits of `b` as bools: eight a byte of the bitmap where it starts at a byte (the
/// simulator's), each byte's eight from a table (a shift and a test a bit took a few times as
/// long), no test a bit (`BooleanBuffer::iter` takes each bit by its index, ~5x slower).
fn bools(b: &arrow_buffer::BooleanBuffer) -> Vec<bool> {
    let n = b.len();
    if !b.offset().is_multiple_of(8) {
        return b.iter().collect();
    }
    let bytes = &b.values()[b.offset() / 8..];
    let mut out = vec![false; n.next_multiple_of(8)];
    for (o, &byte) in out.chunks_exact_mut(8).zip(bytes) {
        o.copy_from_slice(&BITS[usize::from(byte)]);
    }
    out.truncate(n);
    out
}

/// Each byte's bits as bools, the least significant first.
static BITS: [[bool; 8]; 256] = {
    let mut t = [[false; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut k = 0;
        while k < 8 {
            t[byte][k] = (byte >> k) & 1 == 1;
            k += 1;
        }
        byte += 1;
    }
    t
};

/// An `array.array` of `v` (typecode `tc`: 'q' int64, 'd' float64), built from its bytes.
fn py_array<'py, T: Copy>(py: Python<'py>, tc: &str, v: &[T], bytes: impl Fn(T) -> [u8; 8]) -> PyResult<Bound<'py, PyAny>> {
    let raw: Vec<u8> = v.iter().flat_map(|&x| bytes(x)).collect();
    py.import("array")?.getattr("array")?.call1((tc, pyo3::types::PyBytes::new(py, &raw)))
}

/// The run's share from its media rows (`c`); arrays as numpy's or, with `plain`, `array.array`s.
#[allow(clippy::too_many_arguments)]
fn share<'py>(
    py: Python<'py>,
    c: RunColumns<'_>,
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
    let (flows, sent, recv, mos, q) =
        py.detach(|| compute(c, tcp_start_ns, tcp_end_ns, w, pre_ns, jbs_ns, ie, bpl, codec_delay_ms, probs)).map_err(to_py)?;
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

#[cfg(test)]
mod tests {
    use super::bools;
    use arrow_buffer::{BooleanBuffer, Buffer};

    #[test]
    fn bools_of_a_bitmap_at_any_offset() {
        // 0b1011_0001, 0b0000_0110: bits LSB first
        let buf = Buffer::from_vec(vec![0b1011_0001u8, 0b0000_0110]);
        let want = [true, false, false, false, true, true, false, true, false, true, true, false];
        assert_eq!(bools(&BooleanBuffer::new(buf.clone(), 0, 12)), want);
        assert_eq!(bools(&BooleanBuffer::new(buf.clone(), 3, 9)), want[3..]);
        assert_eq!(bools(&BooleanBuffer::new(buf, 8, 3)), want[8..11]);
    }
}
