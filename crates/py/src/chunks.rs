//! A media table's columns as the Python layer hands them over, in chunks (a list of numpy
//! arrays a column): the one check of a chunk's lengths and the one join of chunks into owned
//! columns, for `MediaSet.from_chunks` (metrics.rs) and `run_share` (summary.rs).
use jitterlab_metrics as jm;
use pyo3::prelude::*;

use crate::errors::TableError;

/// One chunk of `media_packets`' columns as the Python layer hands them over:
/// (flow, seq, send_ns, recv_ns, received, size).
pub(crate) type Chunk<'a> = (&'a [i64], &'a [i64], &'a [i64], &'a [i64], &'a [bool], &'a [i64]);

/// Chunk `i`, its six columns checked to be of one length.
pub(crate) fn checked_chunk(i: usize, c: Chunk<'_>) -> PyResult<Chunk<'_>> {
    let n = c.0.len();
    if [c.1.len(), c.2.len(), c.3.len(), c.4.len(), c.5.len()].iter().any(|&l| l != n) {
        return Err(TableError::new_err(format!("media_packets: the columns of chunk {i} differ in length")));
    }
    Ok(c)
}

/// `o`'s media columns (all but the run codes) extended by chunk `c`'s rows.
pub(crate) fn extend(o: &mut jm::MediaOwned, (f, q, s, r, ok, z): Chunk<'_>) {
    o.flow.extend_from_slice(f);
    o.seq.extend_from_slice(q);
    o.send_ns.extend_from_slice(s);
    o.recv_ns.extend_from_slice(r);
    o.received.extend_from_slice(ok);
    o.size.extend_from_slice(z);
}
