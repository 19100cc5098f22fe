//! Parquet files concatenated row group by row group, without decoding: a sweep's combined table
//! is its runs' Parquet images spliced one after another (each column chunk's bytes copied, its
//! offsets and the footer rewritten by the parquet crate's `append_column`). The client of a
//! sweep then neither decodes nor re-encodes the per-packet rows its workers already encoded.
//!
//! Python does the I/O: `append` and `finish` return the bytes to write next, so the same code
//! writes a local file and an object-store upload.
use std::sync::Arc;

use bytes::Bytes;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
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

fn err(e: impl std::fmt::Display) -> PyErr { PyValueError::new_err(format!("Parquet: {e}")) }

impl ParquetConcat {
    fn splice(&mut self, data: Bytes) -> parquet::errors::Result<Result<Vec<u8>, String>> {
        let reader = SerializedFileReader::new(data.clone())?;
        let meta = reader.metadata();
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
