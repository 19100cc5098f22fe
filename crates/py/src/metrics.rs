//! Python bindings of the metrics area. Thin: converts numpy arrays to slices, releases the GIL
//! around the Rust core, returns dicts of numpy arrays that `jitterlab.metrics` turns into
//! DataFrames. Errors map to `TableError` (bad table) or `ValueError` (bad parameter) here.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jitterlab_metrics as jm;
use jm::{delay, emodel, loss, rtp, stats, Media, MediaColumns, MediaView, MetricsError, RunTimes, Window};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::chunks::{checked_chunk, extend};
use crate::errors::TableError;

pub(crate) fn to_py(e: MetricsError) -> PyErr {
    match e {
        MetricsError::InvalidParameter { .. } => PyValueError::new_err(e.to_string()),
        _ => TableError::new_err(e.to_string()),
    }
}

pub(crate) fn window(kind: &str, lo: i64, hi: i64) -> PyResult<Window> {
    match kind {
        "all" => Ok(Window::All),
        "overlap" => Ok(Window::Overlap),
        "absolute" => Ok(Window::Absolute { lo, hi }),
        _ => Err(PyValueError::new_err(format!("parameter 'window': unknown kind '{kind}' (all, overlap, absolute)"))),
    }
}

fn params(overrides: Option<HashMap<String, f64>>) -> PyResult<emodel::Params> {
    let mut p = emodel::Params::default();
    for (k, v) in overrides.unwrap_or_default() {
        let slot = match k.as_str() {
            "slr" => &mut p.slr,
            "rlr" => &mut p.rlr,
            "stmr" => &mut p.stmr,
            "lstr" => &mut p.lstr,
            "ds" => &mut p.ds,
            "telr" => &mut p.telr,
            "wepl" => &mut p.wepl,
            "qdu" => &mut p.qdu,
            "nc" => &mut p.nc,
            "nfor" => &mut p.nfor,
            "ps" => &mut p.ps,
            "pr" => &mut p.pr,
            "a" => &mut p.a,
            _ => return Err(PyValueError::new_err(format!("parameter 'params': unknown G.107 parameter '{k}'"))),
        };
        *slot = v;
    }
    Ok(p)
}

/// The prepared media table (sorted by run, flow, seq; duplicates dropped).
#[pyclass(frozen, module = "jitterlab._native")]
pub struct MediaSet {
    m: Media,
    /// Base delay per stream, memoised per pre-TCP window length (every loss metric needs it).
    bases: Mutex<HashMap<i64, Arc<Vec<loss::Base>>>>,
}

impl MediaSet {
    fn bases(&self, pre_ns: i64) -> jm::Result<Arc<Vec<loss::Base>>> {
        if let Some(b) = self.bases.lock().unwrap_or_else(|e| e.into_inner()).get(&pre_ns) {
            return Ok(b.clone());
        }
        let b = Arc::new(loss::base_delay(&self.m, pre_ns)?);
        self.bases.lock().unwrap_or_else(|e| e.into_inner()).insert(pre_ns, b.clone());
        Ok(b)
    }
}

/// A runs column with its validity mask as `Option`s (null where the mask is false).
fn with_validity(v: &[i64], ok: &[bool]) -> PyResult<Vec<Option<i64>>> {
    if v.len() != ok.len() {
        return Err(TableError::new_err("runs: tcp time and validity mask differ in length"));
    }
    Ok(v.iter().zip(ok).map(|(&x, &k)| k.then_some(x)).collect())
}

#[pymethods]
impl MediaSet {
    #[new]
    #[pyo3(signature = (run, flow, seq, send_ns, recv_ns, received, size, tcp_start_ns, tcp_start_valid, tcp_end_ns, tcp_end_valid, unwrap16=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        run: PyReadonlyArray1<'_, i64>,
        flow: PyReadonlyArray1<'_, i64>,
        seq: PyReadonlyArray1<'_, i64>,
        send_ns: PyReadonlyArray1<'_, i64>,
        recv_ns: PyReadonlyArray1<'_, i64>,
        received: PyReadonlyArray1<'_, bool>,
        size: PyReadonlyArray1<'_, i64>,
        tcp_start_ns: PyReadonlyArray1<'_, i64>,
        tcp_start_valid: PyReadonlyArray1<'_, bool>,
        tcp_end_ns: PyReadonlyArray1<'_, i64>,
        tcp_end_valid: PyReadonlyArray1<'_, bool>,
        unwrap16: bool,
    ) -> PyResult<Self> {
        let cols = MediaColumns {
            run: run.as_slice()?,
            flow: flow.as_slice()?,
            seq: seq.as_slice()?,
            send_ns: send_ns.as_slice()?,
            recv_ns: recv_ns.as_slice()?,
            received: received.as_slice()?,
            size: size.as_slice()?,
        };
        let ts = with_validity(tcp_start_ns.as_slice()?, tcp_start_valid.as_slice()?)?;
        let te = with_validity(tcp_end_ns.as_slice()?, tcp_end_valid.as_slice()?)?;
        let m = py
            .detach(|| Media::new(cols, RunTimes { tcp_start_ns: &ts, tcp_end_ns: &te }, unwrap16))
            .map_err(to_py)?;
        Ok(MediaSet { m, bases: Mutex::new(HashMap::new()) })
    }

    /// The prepared table of rows given in chunks (numpy arrays, a list a column; chunk `k` of
    /// run code `run[k]`), joined into the prepared columns themselves: what `MediaSet(...)` gives
    /// on the chunks concatenated (`unwrap16=False`), without the concatenation's copy nor a copy
    /// of it (`Media::from_sorted`; rows out of order still go through the sort).
    #[staticmethod]
    #[pyo3(signature = (run, flow, seq, send_ns, recv_ns, received, size, tcp_start_ns, tcp_start_valid, tcp_end_ns, tcp_end_valid))]
    #[allow(clippy::too_many_arguments)]
    fn from_chunks(
        py: Python<'_>,
        run: Vec<i64>,
        flow: Vec<PyReadonlyArray1<'_, i64>>,
        seq: Vec<PyReadonlyArray1<'_, i64>>,
        send_ns: Vec<PyReadonlyArray1<'_, i64>>,
        recv_ns: Vec<PyReadonlyArray1<'_, i64>>,
        received: Vec<PyReadonlyArray1<'_, bool>>,
        size: Vec<PyReadonlyArray1<'_, i64>>,
        tcp_start_ns: PyReadonlyArray1<'_, i64>,
        tcp_start_valid: PyReadonlyArray1<'_, bool>,
        tcp_end_ns: PyReadonlyArray1<'_, i64>,
        tcp_end_valid: PyReadonlyArray1<'_, bool>,
    ) -> PyResult<Self> {
        let k = run.len();
        if [flow.len(), seq.len(), send_ns.len(), recv_ns.len(), received.len(), size.len()].iter().any(|&l| l != k) {
            return Err(PyValueError::new_err("MediaSet.from_chunks: one chunk a run code in every column expected"));
        }
        let ts = with_validity(tcp_start_ns.as_slice()?, tcp_start_valid.as_slice()?)?;
        let te = with_validity(tcp_end_ns.as_slice()?, tcp_end_valid.as_slice()?)?;
        let mut chunks = Vec::with_capacity(k);
        let mut rows = 0usize;
        for (i, &code) in run.iter().enumerate() {
            let ch = checked_chunk(i, (flow[i].as_slice()?, seq[i].as_slice()?, send_ns[i].as_slice()?, recv_ns[i].as_slice()?, received[i].as_slice()?, size[i].as_slice()?))?;
            let n = ch.0.len();
            if code < 0 || code as usize >= ts.len() {
                let reason = "run_id not present in the runs table".into();
                return Err(to_py(MetricsError::InvalidValue { column: "run_id", row: rows, reason }));
            }
            rows += n;
            chunks.push((code as u32, ch));
        }
        let mut c = jm::MediaOwned { run: Vec::with_capacity(rows), received: Vec::with_capacity(rows), ..Default::default() };
        for v in [&mut c.flow, &mut c.seq, &mut c.send_ns, &mut c.recv_ns, &mut c.size] {
            v.reserve_exact(rows);
        }
        for (code, ch) in chunks {
            c.run.resize(c.run.len() + ch.0.len(), code);
            extend(&mut c, ch);
        }
        let m = py
            .detach(|| Media::from_sorted(c, RunTimes { tcp_start_ns: &ts, tcp_end_ns: &te }))
            .map_err(to_py)?;
        Ok(MediaSet { m, bases: Mutex::new(HashMap::new()) })
    }

    #[getter]
    fn duplicates(&self) -> usize {
        self.m.duplicates
    }

    fn __len__(&self) -> usize {
        self.m.len()
    }

    /// Prepared columns (row order of every per-row result).
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = &self.m;
        let d = PyDict::new(py);
        d.set_item("run", m.run.iter().map(|&r| r as i64).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("flow", m.flow.clone().into_pyarray(py))?;
        d.set_item("seq", m.seq.clone().into_pyarray(py))?;
        d.set_item("send_ns", m.send_ns.clone().into_pyarray(py))?;
        d.set_item("recv_ns", m.recv_ns.clone().into_pyarray(py))?;
        d.set_item("received", m.received.clone().into_pyarray(py))?;
        d.set_item("size", m.size.clone().into_pyarray(py))?;
        d.set_item("source_row", m.source_row.iter().map(|&r| r as i64).collect::<Vec<_>>().into_pyarray(py))?;
        Ok(d)
    }

    /// One prepared column at the given rows (all rows when `rows` is None).
    #[pyo3(signature = (name, rows=None))]
    fn gather<'py>(&self, py: Python<'py>, name: &str, rows: Option<PyReadonlyArray1<'_, i64>>) -> PyResult<Bound<'py, PyAny>> {
        let m = &self.m;
        let idx: Option<&[i64]> = match &rows {
            Some(r) => Some(r.as_slice()?),
            None => None,
        };
        if let Some(bad) = idx.and_then(|i| i.iter().find(|&&r| r < 0 || r as usize >= m.len())) {
            return Err(PyValueError::new_err(format!("parameter 'rows': row {bad} out of range")));
        }
        fn take<T: Copy>(v: &[T], idx: Option<&[i64]>) -> Vec<T> {
            match idx {
                Some(i) => i.iter().map(|&r| v[r as usize]).collect(),
                None => v.to_vec(),
            }
        }
        let run64: Vec<i64>;
        Ok(match name {
            "run" => {
                run64 = take(&m.run, idx).into_iter().map(|r| r as i64).collect();
                run64.into_pyarray(py).into_any()
            }
            "flow" => take(&m.flow, idx).into_pyarray(py).into_any(),
            "seq" => take(&m.seq, idx).into_pyarray(py).into_any(),
            "send_ns" => take(&m.send_ns, idx).into_pyarray(py).into_any(),
            "recv_ns" => take(&m.recv_ns, idx).into_pyarray(py).into_any(),
            "received" => take(&m.received, idx).into_pyarray(py).into_any(),
            "size" => take(&m.size, idx).into_pyarray(py).into_any(),
            "source_row" => take(&m.source_row, idx).into_pyarray(py).into_any(),
            _ => return Err(PyValueError::new_err(format!("parameter 'name': unknown column '{name}'"))),
        })
    }

    /// Levels over time for several JBs in one pass: normalised has shape
    /// (len(jbs), n_groups * n_bins * 6).
    #[pyo3(signature = (kind, lo, hi, pre_ns, jbs_ns, interval_ns, run_group, n_groups, bin_ns, span_ns))]
    #[allow(clippy::too_many_arguments)]
    fn levels_over_time_multi<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        lo: i64,
        hi: i64,
        pre_ns: i64,
        jbs_ns: Vec<Option<i64>>,
        interval_ns: i64,
        run_group: PyReadonlyArray1<'_, u32>,
        n_groups: usize,
        bin_ns: i64,
        span_ns: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let g = run_group.as_slice()?;
        let res = py
            .detach(|| -> jm::Result<_> {
                let b = self.bases(pre_ns)?;
                loss::levels_over_time_multi(&self.m, w, &b, &jbs_ns, interval_ns, g, n_groups, bin_ns, span_ns)
            })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        let n_bins = res.first().map_or(0, |r| r.n_bins);
        let reps = res.first().map_or(vec![0; n_groups], |r| r.replications.clone());
        let flat: Vec<f64> = res.into_iter().flat_map(|r| r.normalised).collect();
        d.set_item("n_bins", n_bins)?;
        d.set_item("normalised", flat.into_pyarray(py))?;
        d.set_item("replications", reps.into_pyarray(py))?;
        Ok(d)
    }

    /// One entry per (run, flow) stream, in stream order.
    fn streams<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = &self.m.streams;
        let d = PyDict::new(py);
        d.set_item("run", s.iter().map(|s| s.run as i64).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("flow", s.iter().map(|s| s.flow).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("packets", s.iter().map(|s| (s.hi - s.lo) as i64).collect::<Vec<_>>().into_pyarray(py))?;
        Ok(d)
    }

    fn window_mask<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let v = py.detach(|| self.m.window_mask(w));
        let d = PyDict::new(py);
        d.set_item("mask", v.into_pyarray(py))?;
        Ok(d)
    }

    fn owd<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let (rows, v) = py.detach(|| delay::owd(&self.m, w));
        let d = PyDict::new(py);
        d.set_item("row", rows.into_pyarray(py))?;
        d.set_item("owd_ns", v.into_pyarray(py))?;
        Ok(d)
    }

    fn ipdv<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let (rows, v) = py.detach(|| delay::ipdv(&self.m, w));
        let d = PyDict::new(py);
        d.set_item("row", rows.into_pyarray(py))?;
        d.set_item("ipdv_ns", v.into_pyarray(py))?;
        Ok(d)
    }

    fn jitter<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let j = py.detach(|| delay::interarrival_jitter(&self.m, w));
        let d = PyDict::new(py);
        d.set_item("row", j.rows.into_pyarray(py))?;
        d.set_item("jitter_ns", j.jitter_ns.into_pyarray(py))?;
        d.set_item("final_ns", j.final_ns.into_pyarray(py))?;
        Ok(d)
    }

    /// Pooled quantiles of "owd" or "ipdv" (seconds) per run group, without materialising rows.
    #[pyo3(signature = (metric, kind, lo, hi, run_group, n_groups, probs))]
    #[allow(clippy::too_many_arguments)]
    fn pooled_quantiles<'py>(
        &self,
        py: Python<'py>,
        metric: &str,
        kind: &str,
        lo: i64,
        hi: i64,
        run_group: PyReadonlyArray1<'_, u32>,
        n_groups: usize,
        probs: Vec<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let g = run_group.as_slice()?;
        if g.len() != self.m.n_runs() {
            return Err(PyValueError::new_err("parameter 'run_group': one code per run expected"));
        }
        if g.iter().any(|&x| x as usize >= n_groups) {
            return Err(PyValueError::new_err("parameter 'run_group': code >= n_groups"));
        }
        let is_owd = match metric {
            "owd" => true,
            "ipdv" => false,
            _ => return Err(PyValueError::new_err(format!("parameter 'metric': unknown '{metric}' (owd, ipdv)"))),
        };
        let m = &self.m;
        let (q, n) = py
            .detach(|| {
                let mut vals = Vec::with_capacity(m.len());
                let mut grp = Vec::with_capacity(m.len());
                let mut push = |r: usize, v: i64| {
                    vals.push(v as f64 / 1e9);
                    grp.push(g[m.run[r] as usize]);
                };
                if is_owd {
                    delay::visit_owd(m, w, &mut push);
                } else {
                    delay::visit_ipdv(m, w, &mut push);
                }
                stats::grouped_quantiles(&vals, &grp, n_groups, &probs)
            })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("quantiles", q.into_pyarray(py))?;
        d.set_item("counts", n.into_pyarray(py))?;
        Ok(d)
    }

    fn jitter_final<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
        let w = window(kind, lo, hi)?;
        Ok(py.detach(|| delay::interarrival_jitter_final(&self.m, w)).into_pyarray(py))
    }

    fn base_delay<'py>(&self, py: Python<'py>, pre_ns: i64) -> PyResult<Bound<'py, PyDict>> {
        let b = py.detach(|| self.bases(pre_ns)).map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("base_ns", b.iter().map(|b| b.owd_ns.unwrap_or(0)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("valid", b.iter().map(|b| b.owd_ns.is_some()).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("source", b.iter().map(|b| b.source as u8).collect::<Vec<_>>().into_pyarray(py))?;
        Ok(d)
    }

    #[allow(clippy::too_many_arguments)]
    fn jb_loss<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64, pre_ns: i64, jbs_ns: Vec<i64>) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let l = py
            .detach(|| self.bases(pre_ns).map(|b| loss::jb_loss(&self.m, w, &b, &jbs_ns)))
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("packets", l.packets.into_pyarray(py))?;
        d.set_item("pure", l.pure.into_pyarray(py))?;
        d.set_item("late", l.late.into_pyarray(py))?;
        Ok(d)
    }

    /// Per-row loss period level behind `jb_ns` (None = pure loss only).
    #[pyo3(signature = (pre_ns, jb_ns, interval_ns))]
    fn levels<'py>(&self, py: Python<'py>, pre_ns: i64, jb_ns: Option<i64>, interval_ns: i64) -> PyResult<Bound<'py, PyDict>> {
        let (lost, lv) = py
            .detach(|| -> jm::Result<_> {
                let b = self.bases(pre_ns)?;
                let lost = loss::lost_mask(&self.m, &b, jb_ns);
                let lv = loss::levels(&self.m, &lost, interval_ns)?;
                Ok((lost, lv))
            })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("lost", lost.into_pyarray(py))?;
        d.set_item("level", lv.into_pyarray(py))?;
        Ok(d)
    }

    #[pyo3(signature = (kind, lo, hi, pre_ns, jb_ns))]
    fn periods<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64, pre_ns: i64, jb_ns: Option<i64>) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let p = py
            .detach(|| -> jm::Result<_> {
                let b = self.bases(pre_ns)?;
                let lost = loss::lost_mask(&self.m, &b, jb_ns);
                Ok(loss::periods(&self.m, &lost, w))
            })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("stream", p.stream.into_pyarray(py))?;
        d.set_item("first_row", p.first_row.into_pyarray(py))?;
        d.set_item("length", p.length.into_pyarray(py))?;
        d.set_item("distance", p.distance.into_pyarray(py))?;
        Ok(d)
    }

    #[pyo3(signature = (kind, lo, hi, pre_ns, jb_ns, interval_ns, run_group, n_groups, bin_ns, span_ns))]
    #[allow(clippy::too_many_arguments)]
    fn levels_over_time<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        lo: i64,
        hi: i64,
        pre_ns: i64,
        jb_ns: Option<i64>,
        interval_ns: i64,
        run_group: PyReadonlyArray1<'_, u32>,
        n_groups: usize,
        bin_ns: i64,
        span_ns: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let g = run_group.as_slice()?;
        let t = py
            .detach(|| -> jm::Result<_> {
                let b = self.bases(pre_ns)?;
                let lost = loss::lost_mask(&self.m, &b, jb_ns);
                let lv = loss::levels(&self.m, &lost, interval_ns)?;
                loss::levels_over_time(&self.m, &lv, w, g, n_groups, bin_ns, span_ns)
            })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("n_bins", t.n_bins)?;
        d.set_item("normalised", t.normalised.into_pyarray(py))?;
        d.set_item("replications", t.replications.into_pyarray(py))?;
        Ok(d)
    }

    fn rtp_summary<'py>(&self, py: Python<'py>, kind: &str, lo: i64, hi: i64) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let s = py.detach(|| rtp::rtp_summary(&self.m, w));
        let d = PyDict::new(py);
        d.set_item("sent", s.iter().map(|x| x.sent).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("received", s.iter().map(|x| x.received).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("bytes_received", s.iter().map(|x| x.bytes_received).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("duration_ns", s.iter().map(|x| x.duration_ns).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("throughput_bps", s.iter().map(|x| x.throughput_bps()).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("packet_error_rate", s.iter().map(|x| x.packet_error_rate()).collect::<Vec<_>>().into_pyarray(py))?;
        Ok(d)
    }

    /// E-model per (stream, JB), flattened stream-major.
    #[pyo3(signature = (kind, lo, hi, pre_ns, jbs_ns, ie, bpl, codec_delay_ms, params=None))]
    #[allow(clippy::too_many_arguments)]
    fn emodel<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        lo: i64,
        hi: i64,
        pre_ns: i64,
        jbs_ns: Vec<i64>,
        ie: f64,
        bpl: f64,
        codec_delay_ms: f64,
        params: Option<HashMap<String, f64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let w = window(kind, lo, hi)?;
        let p = params_checked(params)?;
        let m = &self.m;
        let out = py
            .detach(|| -> jm::Result<_> { Ok(emodel_cols(&m.view(), &self.bases(pre_ns)?, w, &jbs_ns, &p, ie, bpl, codec_delay_ms)) })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        for (name, col) in ["base_owd_ms", "ppl", "burst_r", "ta_ms", "r", "mos"].iter().zip(out) {
            d.set_item(*name, col.into_pyarray(py))?;
        }
        Ok(d)
    }
}

/// The E-model per (stream, JB), k = stream * jbs + jb: base OWD (ms), Ppl, BurstR, Ta (ms), R,
/// MOS (`MediaSet.emodel`'s columns; `summary::run_share` takes the MOS).
#[allow(clippy::too_many_arguments)]
pub(crate) fn emodel_cols(m: &MediaView<'_>, bases: &[loss::Base], w: Window, jbs_ns: &[i64], p: &emodel::Params, ie: f64, bpl: f64, codec_delay_ms: f64) -> Vec<Vec<f64>> {
    // every buffer's loss in one pass over the rows (k = stream * nj + j)
    let bs = loss::burst_stats_jbs(m, bases, jbs_ns, w);
    emodel_cols_of(&bs, bases, jbs_ns, p, ie, bpl, codec_delay_ms)
}

/// `emodel_cols` from the streams' loss statistics at each buffer (`bs`, stream-major).
pub(crate) fn emodel_cols_of(bs: &[loss::BurstStats], bases: &[loss::Base], jbs_ns: &[i64], p: &emodel::Params, ie: f64, bpl: f64, codec_delay_ms: f64) -> Vec<Vec<f64>> {
    let ns = bases.len();
    let nj = jbs_ns.len();
    let mut cols = vec![vec![f64::NAN; ns * nj]; 6];
    for (j, &jb) in jbs_ns.iter().enumerate() {
        for (si, b) in bases.iter().enumerate() {
            let k = si * nj + j;
            let st = &bs[k];
            let base_ms = b.owd_ns.map_or(f64::NAN, |v| v as f64 / 1e6);
            let ta = base_ms + jb as f64 / 1e6 + codec_delay_ms;
            let ppl = st.ppl();
            let br = st.burst_r();
            // No base (nothing received) or empty window: R undefined (NaN).
            let r = if ta.is_nan() || ppl.is_nan() { f64::NAN } else { emodel::r_factor(p, ta, ie, bpl, ppl, br) };
            cols[0][k] = base_ms;
            cols[1][k] = ppl;
            cols[2][k] = br;
            cols[3][k] = ta;
            cols[4][k] = r;
            cols[5][k] = emodel::mos_from_r(r);
        }
    }
    cols
}

fn params_checked(p: Option<HashMap<String, f64>>) -> PyResult<emodel::Params> {
    params(p)
}

/// Pooled type-7 quantiles per group (row-major n_groups x len(probs)) and counts.
#[pyfunction]
fn grouped_quantiles<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'_, f64>,
    group: PyReadonlyArray1<'_, u32>,
    n_groups: usize,
    probs: Vec<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let v = values.as_slice()?;
    let g = group.as_slice()?;
    let (q, n) = py.detach(|| stats::grouped_quantiles(v, g, n_groups, &probs)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("quantiles", q.into_pyarray(py))?;
    d.set_item("counts", n.into_pyarray(py))?;
    Ok(d)
}

/// Vectorised G.107 R for arrays of mouth-to-ear delay (ms), Ppl (%) and BurstR.
#[pyfunction]
#[pyo3(signature = (ta_ms, ppl, burst_r, ie, bpl, params=None))]
fn emodel_r<'py>(
    py: Python<'py>,
    ta_ms: PyReadonlyArray1<'_, f64>,
    ppl: PyReadonlyArray1<'_, f64>,
    burst_r: PyReadonlyArray1<'_, f64>,
    ie: f64,
    bpl: f64,
    params: Option<HashMap<String, f64>>,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    let p = params_checked(params)?;
    let (t, l, b) = (ta_ms.as_slice()?, ppl.as_slice()?, burst_r.as_slice()?);
    if t.len() != l.len() || t.len() != b.len() {
        return Err(PyValueError::new_err("parameter 'ppl'/'burst_r': arrays must have the length of 'ta_ms'"));
    }
    let r: Vec<f64> = t.iter().zip(l).zip(b).map(|((&t, &l), &b)| emodel::r_factor(&p, t, ie, bpl, l, b)).collect();
    Ok(r.into_pyarray(py))
}

/// MOS from R (G.107 Annex B), vectorised.
#[pyfunction]
fn mos_from_r<'py>(py: Python<'py>, r: PyReadonlyArray1<'_, f64>) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    Ok(r.as_slice()?.iter().map(|&x| emodel::mos_from_r(x)).collect::<Vec<_>>().into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MediaSet>()?;
    m.add_function(wrap_pyfunction!(grouped_quantiles, m)?)?;
    m.add_function(wrap_pyfunction!(emodel_r, m)?)?;
    m.add_function(wrap_pyfunction!(mos_from_r, m)?)?;
    Ok(())
}
