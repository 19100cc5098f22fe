//! A sweep's tables encoded as Parquet in the native module: each run's tables (`encode_pack`: the
//! run's one file, `tables.pack`, and its SHA-256) and the combined tables' row groups of many
//! small runs (`merge_parquet`: the parts decoded in one pass and encoded once). One encoder, so a
//! run's part spliced into the combined table as it is and a row group merged from small parts
//! are the same kind of bytes, and no byte goes through two encoders.
//!
//! The tables come from pyarrow through the Arrow C stream interface (`__arrow_c_stream__`), their
//! buffers read in place. The options are those the combined tables always had (pyarrow's
//! `_combined_options` before): dictionary pages only for text columns, integer columns
//! DELTA_BINARY_PACKED, other columns plain, pages snappy-compressed, statistics of each column chunk, at
//! most MAX_GROUP_ROWS rows a row group. The footer keeps the Arrow schema (`ARROW:schema`), so
//! pyarrow reads back the types it handed over (dictionaries, timestamps, nulls, metadata).
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyCapsuleMethods};
use sha2::{Digest, Sha256};

/// Rows a row group at most (pyarrow's default; `store.MAX_GROUP_ROWS`).
const MAX_GROUP_ROWS: usize = 1 << 20;

fn err(e: impl std::fmt::Display) -> PyErr { PyValueError::new_err(format!("Parquet: {e}")) }

/// The writer's options for a table of `schema` (see the module's note).
fn props(schema: &Schema) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_dictionary_enabled(false)
        // DELTA_BINARY_PACKED runs of a periodic flow repeat: snappy halves them (pyarrow's default)
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_max_row_group_size(MAX_GROUP_ROWS);
    for f in schema.fields() {
        let path = ColumnPath::from(f.name().as_str());
        match f.data_type() {
            // names repeat (flows, roles, where a packet was lost): a dictionary page a chunk
            DataType::Utf8 | DataType::Dictionary(..) => b = b.set_column_dictionary_enabled(path, true),
            // times in ns, sequence numbers, run ids rise in small steps
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::UInt8 | DataType::UInt16 | DataType::UInt32
            | DataType::UInt64 => b = b.set_column_encoding(path, Encoding::DELTA_BINARY_PACKED),
            _ => {}
        }
    }
    b.build()
}

/// `batches` (of `schema`) as one Parquet file image.
pub fn encode(schema: &SchemaRef, batches: &[RecordBatch]) -> parquet::errors::Result<Vec<u8>> {
    let mut w = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props(schema)))?;
    for b in batches {
        w.write(b)?;
    }
    w.into_inner()
}

/// A pyarrow table (anything with `__arrow_c_stream__`) as its schema and record batches.
fn import(obj: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let cap = obj.call_method0("__arrow_c_stream__")?;
    let cap = cap.cast::<PyCapsule>().map_err(|_| PyValueError::new_err("__arrow_c_stream__ did not return a capsule"))?;
    let ptr = cap.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule holds a live FFI_ArrowArrayStream (the PyCapsule protocol); `from_raw`
    // moves it out, leaving a released stream behind for the capsule's destructor.
    let reader = unsafe { ArrowArrayStreamReader::from_raw(ptr.as_ptr().cast::<FFI_ArrowArrayStream>()) }.map_err(err)?;
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(err)?;
    Ok((schema, batches))
}

/// A Parquet image decoded (its Arrow schema from the footer).
fn decode(data: Bytes) -> parquet::errors::Result<(SchemaRef, Vec<RecordBatch>)> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(data)?.with_batch_size(MAX_GROUP_ROWS);
    // the builder's schema: the reader's own lacks the footer's metadata (pandas', a user's)
    let schema = builder.schema().clone();
    let reader = builder.build()?;
    let batches = reader.collect::<Result<Vec<_>, _>>()?;
    Ok((schema, batches))
}

/// A run's tables encoded and packed: each table's Parquet image at a multiple of `align` bytes
/// (zero bytes between), in the order given. Returns the pack, each part's (name, offset,
/// length, rows) and the pack's SHA-256 (hex).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn encode_pack<'py>(py: Python<'py>, tables: Vec<(String, Bound<'py, PyAny>)>, align: usize) -> PyResult<(Bound<'py, PyBytes>, Vec<(String, usize, usize, usize)>, String)> {
    let tables = tables.into_iter().map(|(n, t)| Ok((n, import(&t)?))).collect::<PyResult<Vec<_>>>()?;
    let align = align.max(1);
    let (pack, parts, sha) = py.detach(|| -> parquet::errors::Result<_> {
        let mut pack = Vec::new();
        let mut parts = Vec::with_capacity(tables.len());
        for (name, (schema, batches)) in &tables {
            let img = encode(schema, batches)?;
            let rows = batches.iter().map(RecordBatch::num_rows).sum();
            parts.push((name.clone(), pack.len(), img.len(), rows));
            pack.extend_from_slice(&img);
            pack.resize(pack.len().next_multiple_of(align), 0);
        }
        let sha: String = Sha256::digest(&pack).iter().map(|b| format!("{b:02x}")).collect();
        Ok((pack, parts, sha))
    }).map_err(err)?;
    Ok((PyBytes::new(py, &pack), parts, sha))
}

/// One table (a pyarrow table) as a Parquet image, encoded as a run's parts are.
#[pyfunction]
fn encode_table<'py>(py: Python<'py>, table: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let (schema, batches) = import(&table)?;
    let img = py.detach(|| encode(&schema, &batches)).map_err(err)?;
    Ok(PyBytes::new(py, &img))
}

/// Parquet images of one schema decoded and encoded as one (their rows in order, one row group
/// up to MAX_GROUP_ROWS rows): the combined table's row group of many small runs. Raises
/// ValueError when an image is not Parquet or its Arrow schema differs from the first's.
#[pyfunction]
fn merge_parquet<'py>(py: Python<'py>, images: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let out = py.detach(|| -> Result<Vec<u8>, String> {
        let mut schema: Option<SchemaRef> = None;
        let mut all = Vec::new();
        for img in images {
            let (s, batches) = decode(Bytes::from(img)).map_err(|e| e.to_string())?;
            match &schema {
                None => schema = Some(s),
                // the metadata may differ (pandas' counts a run's categories): the first's is kept
                Some(first) if first.fields() != s.fields() => return Err("its schema differs from the first part's".into()),
                Some(_) => {}
            }
            all.extend(batches);
        }
        let schema = schema.ok_or("nothing to merge")?;
        // one batch: the writer pays per batch and column (many one-row runs)
        let one = arrow_select::concat::concat_batches(&schema, &all).map_err(|e| e.to_string())?;
        encode(&schema, &[one]).map_err(|e| e.to_string())
    }).map_err(err)?;
    Ok(PyBytes::new(py, &out))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_pack, m)?)?;
    m.add_function(wrap_pyfunction!(encode_table, m)?)?;
    m.add_function(wrap_pyfunction!(merge_parquet, m)?)?;
    Ok(())
}
