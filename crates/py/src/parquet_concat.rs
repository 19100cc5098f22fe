//! Parquet files concatenated row group by row group, without decoding: a sweep's combined table
//! is its runs' Parquet images spliced one after another (each column chunk's bytes copied, its
//! offsets and the footer rewritten by the parquet crate's `append_column`). The client of a
//! sweep then neither decodes nor re-encodes the per-packet rows its workers already encoded.
//!
//! Python does the I/O: `append` and `finish` return the bytes to write next, so the same code
//! writes a local file and an object-store upload.
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{KeyValue, ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::SerializedFileWriter;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Writes one Parquet file out of the row groups of Parquet images of one schema.
#[pyclass(module = "jitterlab._native")]
pub struct ParquetConcat {
    writer: Option<SerializedFileWriter<Vec<u8>>>,
    /// The first image's Arrow schema (its `ARROW:schema` key): the types pyarrow reads back.
    arrow_schema: Option<String>,
    rows: u64,
    done: bool,
}

fn arrow_schema(kv: Option<&Vec<KeyValue>>) -> Option<String> {
    kv?.iter().find(|k| k.key == "ARROW:schema").and_then(|k| k.value.clone())
}

/// Images this process's encoder (`parquet_write::encode`) wrote lately, each as its length, its
/// footer's bytes and the metadata the writer returned: `splice` takes an image's metadata from
/// here instead of parsing its footer again (a run's media part, encoded by the run and spliced
/// by the combining thread moments later: ~40 % of `append`'s CPU). Equal length and footer bytes
/// are what the parse would read; the writer's metadata equals the parse's (tested).
static KNOWN: Mutex<Known> = Mutex::new(VecDeque::new());
/// Images `KNOWN` keeps, the oldest dropped first: a sweep splices a run's part a few runs after
/// it was encoded at most (a worker process, whose parts another process splices, keeps this many).
const KNOWN_IMAGES: usize = 16;

/// The footer of Parquet image `img` (its metadata, length and magic), None when too short.
fn footer(img: &[u8]) -> Option<&[u8]> {
    let n = img.len().checked_sub(8)?;
    let len = u32::from_le_bytes(img[n..n + 4].try_into().ok()?) as usize;
    Some(&img[n.checked_sub(len)?..])
}

type Known = VecDeque<(usize, Bytes, Arc<ParquetMetaData>)>;

/// Keeps `meta`, the writer's metadata of image `img`, for `splice`, as parsing its footer gives it
/// (`as_parsed`); nothing when some statistics are of a kind `as_parsed` does not know.
pub fn remember(img: &[u8], meta: ParquetMetaData) {
    if let Some(meta) = as_parsed(meta) {
        keep(&mut KNOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner), img, meta);
    }
}

/// The writer's metadata `meta` as the reader parses the footer written from it: the statistics'
/// flags of the deprecated min/max fields as the reader sets them (parquet's
/// `statistics::from_thrift`: both set when the footer has no `min_value` and `max_value`), which
/// the writer of the combined file follows. None for statistics other than Int64, Boolean and
/// byte-array ones (what `parquet_int` writes) or ones written in the deprecated fields only.
pub(crate) fn as_parsed(meta: ParquetMetaData) -> Option<ParquetMetaData> {
    let mut b = meta.into_builder();
    let mut groups = Vec::new();
    for rg in b.take_row_groups() {
        let mut rgb = rg.into_builder();
        let mut cols = Vec::new();
        for c in rgb.take_columns() {
            cols.push(match c.statistics().map(stats_as_parsed) {
                None => c,
                Some(None) => return None,
                Some(Some(s)) => c.into_builder().set_statistics(s).build().ok()?,
            });
        }
        groups.push(rgb.set_column_metadata(cols).build().ok()?);
    }
    Some(b.set_row_groups(groups).build())
}

fn stats_as_parsed(s: &Statistics) -> Option<Statistics> {
    if s.is_min_max_deprecated() {
        return None;
    }
    let old = s.min_bytes_opt().is_none() && s.max_bytes_opt().is_none();
    Some(match s {
        Statistics::Int64(v) => Statistics::Int64(ValueStatistics::new(v.min_opt().copied(), v.max_opt().copied(), v.distinct_count(), v.null_count_opt(), old)),
        Statistics::Boolean(v) => Statistics::Boolean(ValueStatistics::new(v.min_opt().copied(), v.max_opt().copied(), v.distinct_count(), v.null_count_opt(), old)),
        Statistics::ByteArray(v) => Statistics::ByteArray(
            ValueStatistics::new(v.min_opt().cloned(), v.max_opt().cloned(), v.distinct_count(), v.null_count_opt(), old)
                .with_min_is_exact(v.min_is_exact())
                .with_max_is_exact(v.max_is_exact()),
        ),
        _ => return None,
    })
}

fn keep(known: &mut Known, img: &[u8], meta: ParquetMetaData) {
    let Some(f) = footer(img) else { return };
    if known.len() >= KNOWN_IMAGES {
        known.pop_front();
    }
    known.push_back((img.len(), Bytes::copy_from_slice(f), Arc::new(meta)));
}

/// The metadata `remember` kept for an image of `img`'s length and footer (taken out), if any.
fn recall(img: &[u8]) -> Option<Arc<ParquetMetaData>> { take(&mut KNOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner), img) }

fn take(known: &mut Known, img: &[u8]) -> Option<Arc<ParquetMetaData>> {
    let f = footer(img)?;
    let at = known.iter().position(|(n, k, _)| *n == img.len() && k.as_ref() == f)?;
    known.remove(at).map(|(.., m)| m)
}

fn err(e: impl std::fmt::Display) -> PyErr { PyValueError::new_err(format!("Parquet: {e}")) }

impl ParquetConcat {
    fn splice(&mut self, data: Bytes) -> parquet::errors::Result<Result<Vec<u8>, String>> {
        let meta = match recall(&data) {
            Some(m) => m,
            None => Arc::new(ParquetMetaDataReader::new().parse_and_finish(&data)?),
        };
        self.splice_with(data, &meta)
    }

    /// `splice` of image `data` whose metadata is `meta`.
    fn splice_with(&mut self, data: Bytes, meta: &ParquetMetaData) -> parquet::errors::Result<Result<Vec<u8>, String>> {
        let fm = meta.file_metadata();
        let schema = arrow_schema(fm.key_value_metadata());
        match &mut self.writer {
            None => {
                // the first image fixes the schema; its footer's key-value pairs (the Arrow schema)
                // and writer name carry over: the pages are that writer's
                let mut props = WriterProperties::builder().set_key_value_metadata(fm.key_value_metadata().cloned());
                if let Some(by) = fm.created_by() {
                    props = props.set_created_by(by.to_string());
                }
                self.writer = Some(SerializedFileWriter::new(Vec::new(), fm.schema_descr().root_schema_ptr(), Arc::new(props.build()))?);
                self.arrow_schema = schema;
            }
            Some(w) => {
                if w.schema_descr().root_schema() != fm.schema_descr().root_schema() || schema != self.arrow_schema {
                    return Ok(Err("its schema differs from the first part's".into()));
                }
            }
        }
        let w = self.writer.as_mut().expect("set above");
        for rg in meta.row_groups() {
            let mut rgw = w.next_row_group()?;
            for col in rg.columns() {
                let close = ColumnCloseResult {
                    bytes_written: col.compressed_size() as u64,
                    rows_written: rg.num_rows() as u64,
                    metadata: col.clone(),
                    bloom_filter: None,
                    column_index: None,
                    offset_index: None,
                };
                rgw.append_column(&data, close)?;
            }
            rgw.close()?;
            self.rows += rg.num_rows() as u64;
        }
        w.flush()?;
        Ok(Ok(std::mem::take(w.inner_mut())))
    }
}

#[pymethods]
impl ParquetConcat {
    #[new]
    fn new() -> Self { ParquetConcat { writer: None, arrow_schema: None, rows: 0, done: false } }

    /// Appends every row group of the Parquet image `data` and returns the bytes to write next
    /// (the file's start, the first time). Raises ValueError, writing nothing, when `data` is not
    /// Parquet or its schema (Parquet's and the Arrow schema in its footer) differs from the
    /// first image's.
    fn append<'py>(&mut self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        if self.done {
            return Err(PyValueError::new_err("ParquetConcat: append after finish"));
        }
        let data = Bytes::copy_from_slice(data);
        let out = py.detach(|| self.splice(data)).map_err(err)?.map_err(err)?;
        Ok(PyBytes::new(py, &out))
    }

    /// The bytes that end the file (what is buffered, the footer). Raises ValueError when
    /// nothing was appended (an empty file has no schema).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let w = self.writer.as_mut().ok_or_else(|| PyValueError::new_err("ParquetConcat: nothing appended"))?;
        if self.done {
            return Err(PyValueError::new_err("ParquetConcat: finished already"));
        }
        w.finish().map_err(err)?;
        self.done = true;
        Ok(PyBytes::new(py, &std::mem::take(w.inner_mut())))
    }

    /// Rows appended so far.
    #[getter]
    fn rows(&self) -> u64 { self.rows }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ParquetConcat>()?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// What `splice` does with image `img` when `remember` kept nothing of it: the footer parsed.
    pub(crate) fn parsed(img: &[u8]) -> ParquetMetaData { ParquetMetaDataReader::new().parse_and_finish(&Bytes::copy_from_slice(img)).unwrap() }

    /// The bytes of `imgs` spliced into one file, each with metadata `meta(image)`.
    pub(crate) fn spliced(imgs: &[Vec<u8>], meta: impl Fn(&[u8]) -> ParquetMetaData) -> Vec<u8> {
        let mut c = ParquetConcat::new();
        let mut out = Vec::new();
        for img in imgs {
            out.extend(c.splice_with(Bytes::copy_from_slice(img), &meta(img)).unwrap().unwrap());
        }
        let w = c.writer.as_mut().unwrap();
        w.finish().unwrap();
        out.extend(std::mem::take(w.inner_mut()));
        out
    }

    /// `footer` is the image's last 8 + its length bytes; `take` finds an image `keep` kept by
    /// its length and footer, once; past KNOWN_IMAGES the oldest is dropped.
    #[test]
    fn remembered_metadata_is_found_by_length_and_footer_once() {
        let mut img = b"PAR1 pages".to_vec();
        img.extend_from_slice(b"META");
        img.extend_from_slice(&4u32.to_le_bytes());
        img.extend_from_slice(b"PAR1");
        assert_eq!(footer(&img), Some(&b"META\x04\0\0\0PAR1"[..]));
        assert_eq!(footer(&img[3..]), footer(&img));
        assert_eq!(footer(b"PAR1"), None);
        // any footer's metadata will do: a one-column file written by arrow-rs' own writer (not
        // `parquet_write`'s, which calls `remember` here: the two files would name each other)
        let col: arrow_array::ArrayRef = std::sync::Arc::new(arrow_array::Int64Array::from(vec![1i64, 2, 3]));
        let b = arrow_array::RecordBatch::try_from_iter([("x", col)]).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(Vec::new(), b.schema(), None).unwrap();
        w.write(&b).unwrap();
        let meta = parsed(&w.into_inner().unwrap());
        let mut known = Known::new();
        keep(&mut known, &img, meta.clone());
        // same footer, another length: not it
        assert!(take(&mut known, &img[1..]).is_none());
        assert_eq!(take(&mut known, &img).as_deref(), Some(&meta));
        assert!(take(&mut known, &img).is_none());
        // images 0..=KNOWN_IMAGES of lengths 12 + i: the first dropped, the last two kept
        let imgs: Vec<Vec<u8>> = (0..=KNOWN_IMAGES).map(|i| [vec![b'x'; i], img.clone()].concat()).collect();
        for i in &imgs {
            keep(&mut known, i, meta.clone());
        }
        assert_eq!(known.len(), KNOWN_IMAGES);
        assert!(take(&mut known, &imgs[0]).is_none());
        assert!(take(&mut known, &imgs[KNOWN_IMAGES]).is_some() && take(&mut known, &imgs[1]).is_some());
    }
}
