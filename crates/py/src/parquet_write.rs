//! A sweep's tables encoded in the native module: each run's tables (`encode_pack`: the run's one
//! file, `tables.pack`, and its SHA-256) and the combined tables' row groups of many small runs
//! (`merge_parts`: the parts decoded in one pass and encoded once). One encoder, so a run's large
//! part spliced into the combined table as it is and a row group merged from small parts are the
//! same kind of bytes, and no row is encoded as Parquet twice.
//!
//! A table of at least `parquet_min_rows` rows is a Parquet image with the options the combined
//! tables always had (pyarrow's `_combined_options` before): dictionary pages only for text
//! columns, integer columns DELTA_BINARY_PACKED, other columns plain, snappy pages, statistics of
//! each column chunk, no page index, at most MAX_GROUP_ROWS rows a row group (Int64, Boolean and
//! Utf8 columns encoded by `parquet_int`, the others by arrow-rs); its footer keeps the Arrow schema
//! (`ARROW:schema`), so pyarrow reads back the types it handed over (dictionaries, timestamps,
//! nulls, metadata). A smaller one is an Arrow IPC file image (LZ4 frames from LZ4_MIN_BYTES): the Parquet writer's
//! and reader's fixed cost a column (~10 us each way) would dominate a tiny run's few rows, which
//! the client merges into a Parquet row group anyway. Its footer says `jitterlab` (IPC_MARK), so
//! the client tells it from an older version's pyarrow image (LZ4 frames, which it leaves to
//! pyarrow). The tables come from pyarrow through the Arrow C stream interface
//! (`__arrow_c_stream__`), their buffers read in place.
//! Over 600 lines: its unit tests (the last ~220 lines), which check its images against arrow-rs'
//! writers, sit beside the encoders they pin.
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{write_message, CompressionContext, DictionaryTracker, FileWriter, IpcDataGenerator, IpcWriteOptions};
use arrow_ipc::{CompressionType, MetadataVersion};
use arrow_schema::{DataType, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::writer::SerializedFileWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::{ColumnPath, SchemaDescriptor};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyCapsuleMethods};
use sha2::{Digest, Sha256};

use crate::parquet_int;

/// Rows a row group at most (pyarrow's default; `store.MAX_GROUP_ROWS`).
const MAX_GROUP_ROWS: usize = 1 << 20;
/// The key of the custom metadata in the footer of the IPC images written here.
const IPC_MARK: &str = "jitterlab";
/// An IPC image of at least this many bytes of buffers is LZ4-compressed: below, the frames cost
/// more time than they save on a few kB (a run's runs, channels, flows rows).
const LZ4_MIN_BYTES: usize = 64 * 1024;
/// A `PartMerger` joins its batches into one each time it holds this many.
const COMPACT_BATCHES: usize = 256;
/// Schemas whose writer options `prepared` keeps (a thread's most recent ones).
const PREPARED_SCHEMAS: usize = 8;

fn err(e: impl std::fmt::Display) -> PyErr { PyValueError::new_err(format!("Parquet: {e}")) }

/// The writer's options for a table of `schema` (see the module's note).
fn props(schema: &Schema) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_dictionary_enabled(false)
        // DELTA_BINARY_PACKED runs of a periodic flow repeat: snappy halves them (pyarrow's default)
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // no page index: the combined tables (column chunks spliced, footer rewritten) never kept one
        .set_offset_index_disabled(true)
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

/// `batches` (of `schema`) as one Parquet file image: what arrow-rs' `ArrowWriter` writes with
/// `props` (row groups of at most MAX_GROUP_ROWS rows, `ARROW:schema` in the footer), but its Int64,
/// Boolean and Utf8 columns encoded by `parquet_int` (the same encodings, a fraction of the CPU) and no offset index
/// (the combined tables, spliced, never had one).
pub fn encode(schema: &SchemaRef, batches: &[RecordBatch]) -> parquet::errors::Result<Vec<u8>> {
    let (img, meta) = encode_with_metadata(schema, batches)?;
    // the combining thread splices it without parsing its footer again
    crate::parquet_concat::remember(&img, meta);
    Ok(img)
}

/// `encode`'s image and the writer's metadata of it.
fn encode_with_metadata(schema: &SchemaRef, batches: &[RecordBatch]) -> parquet::errors::Result<(Vec<u8>, ParquetMetaData)> {
    let (props, pq_schema) = prepared(schema)?;
    // the image's room reserved (not grown and copied column by column): its columns' bytes
    // in memory bound a snappy-compressed image of them from above, but for text and short tables
    let room: usize = batches.iter().map(RecordBatch::get_array_memory_size).sum::<usize>() + 64 * 1024;
    let mut fw = SerializedFileWriter::new(Vec::with_capacity(room), pq_schema.root_schema_ptr(), props)?;
    let factory = ArrowRowGroupWriterFactory::new(&fw, schema.clone());
    for (g, group) in row_groups(batches).iter().enumerate() {
        // arrow-rs' column writers (buffers, encoders, a writer a column) only for a row group
        // with a column `parquet_int` declines: a run's media table has none
        let mut writers: Option<std::vec::IntoIter<_>> = None;
        let mut rgw = fw.next_row_group()?;
        let mut leaf = 0;
        for (i, field) in schema.fields().iter().enumerate() {
            let cols: Vec<ArrayRef> = group.iter().map(|b| b.column(i).clone()).collect();
            let descr = pq_schema.column(leaf);
            if cols.iter().all(|c| parquet_int::handles(&descr, c.as_ref())) {
                let one = if cols.len() == 1 { cols[0].clone() } else { arrow_select::concat::concat(&cols.iter().map(AsRef::as_ref).collect::<Vec<_>>())? };
                if let Some((data, close)) = parquet_int::encode_column(&descr, one.as_ref())? {
                    if let Some(ws) = &mut writers {
                        ws.next();
                    }
                    leaf += 1;
                    rgw.append_column(&data, close)?;
                    continue;
                }
            }
            let mut leaves = Vec::new();
            for c in &cols {
                for (k, l) in compute_leaves(field, c)?.into_iter().enumerate() {
                    if leaves.len() <= k {
                        leaves.push(Vec::new());
                    }
                    leaves[k].push(l);
                }
            }
            let ws = match &mut writers {
                Some(ws) => ws,
                None => {
                    // the writers of the leaves before this one (encoded above) passed over
                    let mut ws = factory.create_column_writers(g)?.into_iter();
                    if leaf > 0 {
                        ws.nth(leaf - 1);
                    }
                    writers.insert(ws)
                }
            };
            for ls in leaves {
                let mut w = ws.next().ok_or_else(|| parquet::errors::ParquetError::General("fewer column writers than leaves".into()))?;
                for l in &ls {
                    w.write(l)?;
                }
                w.close()?.append_to_row_group(&mut rgw)?;
                leaf += 1;
            }
        }
        rgw.close()?;
    }
    let meta = fw.finish()?;
    Ok((std::mem::take(fw.inner_mut()), meta))
}

/// The writer's options for tables of `schema` (`props`, with the `ARROW:schema` footer entry)
/// and its Parquet schema, the same for every run of a sweep: built once and kept for the next
/// table of an equal schema (the Arrow schema's IPC encoding, base64 and the schema conversion
/// cost ~15 us a run).
fn prepared(schema: &SchemaRef) -> parquet::errors::Result<(Arc<WriterProperties>, Arc<SchemaDescriptor>)> {
    type Prepared = (SchemaRef, Arc<WriterProperties>, Arc<SchemaDescriptor>);
    thread_local! { static LAST: std::cell::RefCell<Vec<Prepared>> = const { std::cell::RefCell::new(Vec::new()) }; }
    if let Some(got) = LAST.with_borrow(|l| l.iter().find(|(s, ..)| s == schema).map(|(_, p, d)| (p.clone(), d.clone()))) {
        return Ok(got);
    }
    let mut props = props(schema);
    add_encoded_arrow_schema_to_metadata(schema, &mut props);
    let (props, pq_schema) = (Arc::new(props), Arc::new(ArrowSchemaConverter::new().convert(schema)?));
    LAST.with_borrow_mut(|l| {
        // a few schemas (a sweep's Parquet tables: media packets, a merger's small tables)
        if l.len() >= PREPARED_SCHEMAS {
            l.remove(0);
        }
        l.push((schema.clone(), props.clone(), pq_schema.clone()));
    });
    Ok((props, pq_schema))
}

/// The batches cut into row groups of at most MAX_GROUP_ROWS rows, in order (none without rows).
fn row_groups(batches: &[RecordBatch]) -> Vec<Vec<RecordBatch>> {
    let mut out: Vec<Vec<RecordBatch>> = Vec::new();
    let mut rows = MAX_GROUP_ROWS;
    for b in batches {
        let mut at = 0;
        while at < b.num_rows() {
            if rows == MAX_GROUP_ROWS {
                out.push(Vec::new());
                rows = 0;
            }
            let n = (b.num_rows() - at).min(MAX_GROUP_ROWS - rows);
            out.last_mut().expect("pushed above").push(b.slice(at, n));
            at += n;
            rows += n;
        }
    }
    out
}

/// A run's table as its part: Parquet from `parquet_min_rows` rows, else an Arrow IPC file of
/// one record batch (a file of several could not hold dictionaries that differ between them).
fn encode_part(schema: &SchemaRef, batches: &[RecordBatch], parquet_min_rows: usize) -> Result<Vec<u8>, String> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows >= parquet_min_rows {
        return encode(schema, batches).map_err(|e| e.to_string());
    }
    // a run's native table is one batch: written as it is, not copied by a concatenation
    let one = match batches {
        [b] => b.clone(),
        _ => arrow_select::concat::concat_batches(schema, batches).map_err(|e| e.to_string())?,
    };
    // the buffers' bytes (pyarrow's `get_total_buffer_size`), not their capacity; the capacity
    // bounds them from above, so a table whose capacity is under the threshold skips the count
    let bytes: usize = if one.get_array_memory_size() < LZ4_MIN_BYTES {
        0
    } else {
        one.columns().iter().map(|c| c.to_data().get_slice_memory_size()).sum::<Result<_, _>>().map_err(|e| e.to_string())?
    };
    // buffers 8-byte aligned, as pyarrow writes them: 64 would pad a one-row table's ~60 buffers by ~3.5 kB
    let opts = IpcWriteOptions::try_new(8, false, MetadataVersion::V5).map_err(|e| e.to_string())?;
    ipc_image(schema, &one, opts, bytes >= LZ4_MIN_BYTES)
}

/// The parts of an Arrow IPC file image (one record batch, no dictionaries, no compression) that
/// depend on its schema only, as arrow-rs' `FileWriter` writes them: the head (magic, schema
/// message) and the footer (the schema again, the one record batch's block, IPC_MARK), with
/// where the block's fields lie in it. A run's small table is then its head, its batch's message
/// and this footer with the block's numbers put in: the same bytes as `FileWriter`'s without
/// encoding the schema twice a table (~20 % of `encode_pack`'s CPU on a run's three small tables).
struct IpcTemplate {
    head: Vec<u8>,
    footer: Vec<u8>,
    /// Where the footer holds the record batch's `Block` (offset i64, metadata length i32, 4
    /// bytes of padding, body length i64: a flatbuffer struct of 24 bytes).
    block_at: usize,
}

/// Schemas whose `IpcTemplate` a thread keeps (a sweep's small tables: runs, channels, flows, tcp flows).
const IPC_TEMPLATES: usize = 8;

impl IpcTemplate {
    /// The template of `img`, an image `FileWriter` wrote of one batch without dictionaries;
    /// None when it is not one.
    fn of(img: &[u8]) -> Option<IpcTemplate> {
        let n = img.len().checked_sub(10)?;
        if &img[n + 4..] != b"ARROW1" {
            return None;
        }
        let len = usize::try_from(i32::from_le_bytes(img[n..n + 4].try_into().ok()?)).ok()?;
        let footer = &img[n.checked_sub(len)?..n];
        let f = arrow_ipc::root_as_footer(footer).ok()?;
        if f.dictionaries().is_some_and(|d| !d.is_empty()) {
            return None;
        }
        let blocks = f.recordBatches()?;
        let [b] = blocks.iter().collect::<Vec<_>>()[..] else { return None };
        let bytes = blocks.bytes();
        if bytes.len() != 24 {
            return None;
        }
        let block_at = bytes.as_ptr() as usize - footer.as_ptr() as usize;
        let head = img.get(..usize::try_from(b.offset()).ok()?)?.to_vec();
        Some(IpcTemplate { head, footer: footer.to_vec(), block_at })
    }

    /// The image of `batch` (of the template's schema, no dictionary columns): what `FileWriter`
    /// writes with `opts` (no compression).
    fn write(&self, batch: &RecordBatch, opts: &IpcWriteOptions) -> Result<Vec<u8>, String> {
        let (dicts, msg) = IpcDataGenerator::default()
            .encode(batch, &mut DictionaryTracker::new(true), opts, &mut CompressionContext::default())
            .map_err(|e| e.to_string())?;
        if !dicts.is_empty() {
            return Err("an IPC template of a table with dictionaries".into());
        }
        let mut out = Vec::with_capacity(self.head.len() + msg.ipc_message.len() + msg.arrow_data.len() + self.footer.len() + 32);
        out.extend_from_slice(&self.head);
        let (meta, data) = write_message(&mut out, msg, opts).map_err(|e| e.to_string())?;
        // the end of the stream (V5: continuation marker, length 0), as `FileWriter::finish` writes it
        out.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let at = out.len() + self.block_at;
        out.extend_from_slice(&self.footer);
        out[at..at + 8].copy_from_slice(&(self.head.len() as i64).to_le_bytes());
        out[at + 8..at + 12].copy_from_slice(&(meta as i32).to_le_bytes());
        out[at + 16..at + 24].copy_from_slice(&(data as i64).to_le_bytes());
        out.extend_from_slice(&(self.footer.len() as i32).to_le_bytes());
        out.extend_from_slice(b"ARROW1");
        Ok(out)
    }
}

/// `one` (of `schema`) as an Arrow IPC file image of one record batch with `opts`, IPC_MARK in its
/// footer: by the thread's `IpcTemplate` of `schema` when uncompressed and without dictionary
/// columns (made from `FileWriter`'s image the first time), else by `FileWriter`.
fn ipc_image(schema: &SchemaRef, one: &RecordBatch, opts: IpcWriteOptions, compressed: bool) -> Result<Vec<u8>, String> {
    thread_local! { static TEMPLATES: std::cell::RefCell<Vec<(SchemaRef, std::rc::Rc<IpcTemplate>)>> = const { std::cell::RefCell::new(Vec::new()) }; }
    let plain = !compressed && !schema.flattened_fields().iter().any(|f| matches!(f.data_type(), DataType::Dictionary(..)));
    if plain {
        if let Some(t) = TEMPLATES.with_borrow(|l| l.iter().find(|(s, _)| s == schema).map(|(_, t)| t.clone())) {
            return t.write(one, &opts);
        }
    }
    let opts = if compressed { opts.try_with_compression(Some(CompressionType::LZ4_FRAME)).map_err(|e| e.to_string())? } else { opts };
    let mut w = FileWriter::try_new_with_options(Vec::new(), schema, opts).map_err(|e| e.to_string())?;
    w.write_metadata(IPC_MARK, env!("CARGO_PKG_VERSION"));
    w.write(one).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    let img = w.into_inner().map_err(|e| e.to_string())?;
    if plain {
        if let Some(t) = IpcTemplate::of(&img) {
            TEMPLATES.with_borrow_mut(|l| {
                if l.len() >= IPC_TEMPLATES {
                    l.remove(0);
                }
                l.push((schema.clone(), std::rc::Rc::new(t)));
            });
        }
    }
    Ok(img)
}

/// A pyarrow table (anything with `__arrow_c_stream__`) as its schema and record batches; a
/// run's `NativeTable` as it is (its batch shared, nothing crosses the C interface).
fn import(obj: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    if let Ok(t) = obj.cast::<crate::native_table::NativeTable>() {
        let b = t.get().batch.clone();
        return Ok((b.schema(), vec![b]));
    }
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

/// A part decoded: a Parquet image (its Arrow schema from the footer) or an Arrow IPC file image.
fn decode(data: Bytes) -> Result<(SchemaRef, Vec<RecordBatch>), String> {
    if data.starts_with(b"ARROW1") {
        let reader = FileReader::try_new(std::io::Cursor::new(data), None).map_err(|e| e.to_string())?;
        let schema = reader.schema();
        let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
        return Ok((schema, batches));
    }
    let builder = ParquetRecordBatchReaderBuilder::try_new(data).map_err(|e| e.to_string())?.with_batch_size(MAX_GROUP_ROWS);
    // the builder's schema: the reader's own lacks the footer's metadata (pandas', a user's)
    let schema = builder.schema().clone();
    let reader = builder.build().map_err(|e| e.to_string())?;
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    Ok((schema, batches))
}

/// A run's tables encoded and packed: each table's part (`encode_part`) at a multiple of `align` bytes
/// (zero bytes between), in the order given. Returns the pack, each part's (name, offset,
/// length, rows) and the pack's SHA-256 (hex).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn encode_pack<'py>(py: Python<'py>, tables: Vec<(String, Bound<'py, PyAny>)>, align: usize, parquet_min_rows: usize) -> PyResult<(Bound<'py, PyBytes>, Vec<(String, usize, usize, usize)>, String)> {
    let tables = tables.into_iter().map(|(n, t)| Ok((n, import(&t)?))).collect::<PyResult<Vec<_>>>()?;
    let (images, parts, sha) = py.detach(|| pack(&tables, align, parquet_min_rows)).map_err(err)?;
    let len = parts.last().map_or(0, |(_, at, n, _)| (at + n).next_multiple_of(align.max(1)));
    // the parts written straight into the bytes object (no pack assembled first and copied)
    let pack = PyBytes::new_with(py, len, |buf| {
        for ((_, at, n, _), img) in parts.iter().zip(&images) {
            buf[*at..at + n].copy_from_slice(img);
        }
        // the zero bytes between the parts: the buffer comes zeroed
        Ok(())
    })?;
    Ok((pack, parts, sha))
}

/// `encode_pack`'s work on imported tables: each table's part, where it lies in the pack (name,
/// offset, length, rows) and the pack's SHA-256 (hex), hashed part by part.
#[allow(clippy::type_complexity)]
fn pack(tables: &[(String, (SchemaRef, Vec<RecordBatch>))], align: usize, parquet_min_rows: usize) -> Result<(Vec<Vec<u8>>, Vec<(String, usize, usize, usize)>, String), String> {
    let align = align.max(1);
    let (mut images, mut parts) = (Vec::with_capacity(tables.len()), Vec::with_capacity(tables.len()));
    let mut sha = Sha256::new();
    let mut len = 0;
    for (name, (schema, batches)) in tables {
        let img = encode_part(schema, batches, parquet_min_rows)?;
        let rows = batches.iter().map(RecordBatch::num_rows).sum();
        parts.push((name.clone(), len, img.len(), rows));
        sha.update(&img);
        let end = (len + img.len()).next_multiple_of(align);
        sha.update(vec![0u8; end - len - img.len()]);
        len = end;
        images.push(img);
    }
    Ok((images, parts, crate::digest::hex(&sha.finalize())))
}

/// One table (a pyarrow table) as a run's part (`encode_part`; `parquet_min_rows` 0: Parquet).
#[pyfunction]
fn encode_table<'py>(py: Python<'py>, table: Bound<'py, PyAny>, parquet_min_rows: usize) -> PyResult<Bound<'py, PyBytes>> {
    let (schema, batches) = import(&table)?;
    let img = py.detach(|| encode_part(&schema, &batches, parquet_min_rows)).map_err(err)?;
    Ok(PyBytes::new(py, &img))
}

/// Parts (Parquet or Arrow IPC images) of one schema decoded as they come and encoded at the end
/// as one Parquet image (their rows in order, one row group up to MAX_GROUP_ROWS rows): the
/// combined table's row group of many small runs. The decoding happens in `add`, in the client's
/// combining thread while the runs go on, so `finish` after the last run only encodes.
#[pyclass(module = "jitterlab._native")]
#[derive(Default)]
pub struct PartMerger {
    schema: Option<SchemaRef>,
    batches: Vec<RecordBatch>,
}

impl PartMerger {
    fn take(&mut self, data: Bytes) -> Result<(), String> {
        let (s, batches) = decode(data)?;
        self.absorb(s, batches)
    }

    fn absorb(&mut self, s: SchemaRef, batches: Vec<RecordBatch>) -> Result<(), String> {
        match &self.schema {
            None => self.schema = Some(s),
            // the metadata may differ (pandas' counts a run's categories): the first's is kept
            Some(first) if first.fields() != s.fields() => return Err("its schema differs from the first part's".into()),
            Some(_) => {}
        }
        self.batches.extend(batches);
        if self.batches.len() >= COMPACT_BATCHES {
            // joined as they come: one join of 10,000 tiny runs' batches after the last run would
            // be the serial part of a sweep
            let schema = self.schema.as_ref().expect("set above");
            let one = arrow_select::concat::concat_batches(schema, &self.batches).map_err(|e| e.to_string())?;
            self.batches = vec![one];
        }
        Ok(())
    }

    fn encode_all(&mut self) -> Result<Vec<u8>, String> {
        let schema = self.schema.take().ok_or("nothing to merge")?;
        let batches = std::mem::take(&mut self.batches);
        // one batch: the writer pays per batch and column (many one-row runs)
        let one = arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| e.to_string())?;
        encode(&schema, &[one]).map_err(|e| e.to_string())
    }
}

#[pymethods]
impl PartMerger {
    #[new]
    fn new() -> Self { PartMerger::default() }

    /// Decodes part `data` and keeps its rows. Raises ValueError, keeping nothing of it, when it
    /// is neither Parquet nor Arrow IPC or its Arrow schema differs from the first part's.
    fn add(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let data = Bytes::copy_from_slice(data);
        py.detach(|| self.take(data)).map_err(err)
    }

    /// Keeps the rows of a pyarrow table (runs' tables in the client's memory, joined: one
    /// import for many). Raises ValueError, keeping nothing of it, when its schema differs from
    /// the first part's.
    fn add_table(&mut self, py: Python<'_>, table: Bound<'_, PyAny>) -> PyResult<()> {
        let (schema, batches) = import(&table)?;
        py.detach(|| self.absorb(schema, batches)).map_err(err)
    }

    /// The rows kept so far as one Parquet image; the merger is empty again. Raises ValueError
    /// when nothing was added.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let out = py.detach(|| self.encode_all()).map_err(err)?;
        Ok(PyBytes::new(py, &out))
    }
}

/// `PartMerger` in one call: `images` decoded and encoded as one Parquet image.
#[pyfunction]
fn merge_parts<'py>(py: Python<'py>, images: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let out = py.detach(|| -> Result<Vec<u8>, String> {
        let mut m = PartMerger::default();
        for img in images {
            m.take(Bytes::from(img))?;
        }
        m.encode_all()
    }).map_err(err)?;
    Ok(PyBytes::new(py, &out))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_pack, m)?)?;
    m.add_function(wrap_pyfunction!(encode_table, m)?)?;
    m.add_function(wrap_pyfunction!(merge_parts, m)?)?;
    m.add_class::<PartMerger>()?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use arrow_schema::Field;

    fn batch(first: i64, n: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("run_id", DataType::Int64, true), Field::new("s", DataType::Utf8, true)]));
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| first + i)));
        let s: ArrayRef = Arc::new(StringArray::from_iter((0..n).map(|i| (i % 3 != 0).then(|| format!("f{}", i % 2)))));
        RecordBatch::try_new(schema, vec![ids, s]).unwrap()
    }

    #[test]
    fn parts_switch_format_at_the_threshold_and_decode_to_their_rows() {
        let b = batch(0, 10);
        let ipc = encode_part(&b.schema(), std::slice::from_ref(&b), 11).unwrap();
        let pq = encode_part(&b.schema(), std::slice::from_ref(&b), 10).unwrap();
        assert!(ipc.starts_with(b"ARROW1") && pq.starts_with(b"PAR1"));
        for img in [ipc, pq] {
            let (schema, got) = decode(Bytes::from(img)).unwrap();
            assert_eq!(schema.fields(), b.schema().fields());
            assert_eq!(arrow_select::concat::concat_batches(&schema, &got).unwrap(), b);
        }
    }

    /// What arrow-rs' own writer makes of `batches` with the same options.
    fn arrow_rs(schema: &SchemaRef, batches: &[RecordBatch]) -> Vec<u8> {
        let mut w = parquet::arrow::ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props(schema))).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.into_inner().unwrap()
    }

    fn chunk_stats(img: &[u8]) -> Vec<(i64, Option<parquet::file::statistics::Statistics>, Vec<parquet::basic::Encoding>)> {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let r = SerializedFileReader::new(Bytes::copy_from_slice(img)).unwrap();
        let m = r.metadata();
        m.row_groups().iter().flat_map(|rg| rg.columns().iter().map(move |c| {
            let mut e = c.encodings().collect::<Vec<_>>();
            e.sort_by_key(|x| *x as i32);
            (rg.num_rows(), c.statistics().cloned(), e)
        })).collect()
    }

    /// Int64, Boolean and text columns of every shape `parquet_int` meets (or declines), beside text and float columns: the image
    /// decodes to the same rows, schema and footer metadata, with the same chunk statistics and
    /// encodings, as arrow-rs' writer's.
    #[test]
    fn int64_columns_read_back_as_arrow_rs_writes_them() {
        let meta = std::collections::HashMap::from([("k".to_string(), "v".to_string())]);
        let schema = Arc::new(Schema::new_with_metadata(vec![
            Field::new("a", DataType::Int64, true), Field::new("b", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true), Field::new("c", DataType::Int64, true), Field::new("f", DataType::Float64, true),
            Field::new("t", DataType::Boolean, true), Field::new("u", DataType::Boolean, false),
            Field::new("v", DataType::Utf8, false), Field::new("z", DataType::Utf8, true),
        ], meta));
        let mk = |n: usize, seed: i64| -> RecordBatch {
            let a: ArrayRef = Arc::new(Int64Array::from_iter((0..n as i64).map(|i| (i % 7 != 3).then_some(seed + i * 1_000_003 + (i * i) % 91))));
            // extremes: deltas that wrap around i64
            let b: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| match i % 5 { 0 => i64::MIN, 1 => i64::MAX, 2 => -i, _ => seed ^ i })));
            let s: ArrayRef = Arc::new(StringArray::from_iter((0..n).map(|i| (i % 4 == 0).then(|| format!("x{}", i % 3)))));
            // all null, or none: nullable column without nulls
            let c: ArrayRef = Arc::new(if seed % 2 == 0 { Int64Array::from(vec![None; n]) } else { Int64Array::from_iter_values((0..n as i64).map(|i| 5 - i / 3)) });
            let f: ArrayRef = Arc::new(arrow_array::Float64Array::from_iter_values((0..n).map(|i| i as f64 / 3.0)));
            // nulls, or (odd seeds) all true, so min = max
            let t: ArrayRef = Arc::new(arrow_array::BooleanArray::from_iter((0..n).map(|i| if seed % 2 == 1 { Some(true) } else { (i % 3 != 1).then_some(i % 5 == 2) })));
            let u: ArrayRef = Arc::new(arrow_array::BooleanArray::from_iter((0..n).map(|i| Some(i % 11 == 0))));
            // text: up to 1 500 entries (11-bit indices across bytes), or one (width 0)
            let v: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| if seed % 2 == 1 { "one".to_string() } else { format!("v{}", (i * 7919) % 1500) })));
            // all null, or an empty string and (from 3 rows) one of 65 bytes, past what the statistics keep whole
            let z: ArrayRef = Arc::new(StringArray::from_iter((0..n).map(|i| match (seed % 2, i % 3) {
                (0, _) => None,
                (_, 0) => Some(String::new()),
                (_, 1) => Some("é".repeat(10)),
                _ => Some("x".repeat(65)),
            })));
            RecordBatch::try_new(schema.clone(), vec![a, b, s, c, f, t, u, v, z]).unwrap()
        };
        let cases: Vec<Vec<RecordBatch>> = vec![
            vec![mk(1, 1)], vec![mk(2, 2)], vec![mk(127, 3)], vec![mk(128, 4)], vec![mk(129, 5)], vec![mk(161, 6)],
            vec![mk(20_001, 7)], vec![mk(45_000, 8)],
            // several batches, and one sliced at an offset that is no multiple of 8 (its validity bitmap shifted)
            vec![mk(300, 9), mk(77, 10), mk(1000, 11).slice(13, 500)],
        ];
        for batches in cases {
            let ours = encode(&schema, &batches).unwrap();
            let theirs = arrow_rs(&schema, &batches);
            let (s1, b1) = decode(Bytes::from(ours.clone())).unwrap();
            let (s2, b2) = decode(Bytes::from(theirs.clone())).unwrap();
            assert_eq!(s1, s2);
            assert_eq!(s1.as_ref(), schema.as_ref());
            let want = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
            assert_eq!(arrow_select::concat::concat_batches(&s1, &b1).unwrap(), want);
            assert_eq!(arrow_select::concat::concat_batches(&s2, &b2).unwrap(), want);
            assert_eq!(chunk_stats(&ours), chunk_stats(&theirs), "{} rows", want.num_rows());
        }
    }

    /// The writer's metadata of an image (`as_parsed`), which `splice` uses instead of parsing
    /// the footer, is what parsing its footer gives (schema, key-value pairs, row groups, chunks' offsets,
    /// statistics and encodings), and splicing with either writes the same bytes; two schemas
    /// that differ only in their metadata keep their own `ARROW:schema` (`prepared`).
    #[test]
    fn writer_metadata_is_the_parsed_footer() {
        use crate::parquet_concat::as_parsed;
        use crate::parquet_concat::tests::{parsed, spliced};
        let with = |k: &str| {
            let b = batch(0, 5);
            let s = Arc::new(b.schema().as_ref().clone().with_metadata([("k".to_string(), k.to_string())].into()));
            b.with_schema(s).unwrap()
        };
        let (x, y) = (with("x"), with("y"));
        for b in [&x, &y, &x] {
            let (img, _) = encode_with_metadata(&b.schema(), std::slice::from_ref(b)).unwrap();
            assert_eq!(decode(Bytes::from(img)).unwrap().0, b.schema());
        }
        let mut imgs: Vec<(Vec<u8>, ParquetMetaData)> = Vec::new();
        // a text column, nulls, several pages (PAGE_ROWS)
        for (first, n) in [(0, 1), (7, 1000), (100, 3 * crate::parquet_int::PAGE_ROWS + 5)] {
            let b = batch(first, n);
            let (img, meta) = encode_with_metadata(&b.schema(), std::slice::from_ref(&b)).unwrap();
            let meta = as_parsed(meta).expect("Int64 and text statistics");
            assert_eq!(meta, parsed(&img), "{n} rows");
            imgs.push((img, meta));
        }
        // Boolean columns: with nulls and both values, all true, all null
        let flags = |n: usize| -> RecordBatch {
            let col = |f: &dyn Fn(usize) -> Option<bool>| -> ArrayRef { Arc::new(arrow_array::BooleanArray::from_iter((0..n).map(f))) };
            RecordBatch::try_from_iter([("t", col(&|i| (i % 3 != 0).then_some(i % 2 == 0))), ("u", col(&|_| Some(true))), ("v", col(&|_| None))]).unwrap()
        };
        for n in [1, 300] {
            let b = flags(n);
            let (img, meta) = encode_with_metadata(&b.schema(), std::slice::from_ref(&b)).unwrap();
            let meta = as_parsed(meta).expect("Boolean statistics");
            assert_eq!(meta, parsed(&img), "{n} rows of flags");
        }
        // two row groups
        let big = arrow_select::concat::concat_batches(&x.schema(), &vec![x.clone(); MAX_GROUP_ROWS / 5 + 1]).unwrap();
        let (img, meta) = encode_with_metadata(&big.schema(), &[big]).unwrap();
        assert_eq!(meta.num_row_groups(), 2);
        assert_eq!(as_parsed(meta).unwrap(), parsed(&img));
        let only: Vec<Vec<u8>> = imgs.iter().map(|(i, _)| i.clone()).collect();
        let by_writer = spliced(&only, |i| imgs.iter().find(|(j, _)| j.as_slice() == i).map(|(_, m)| m.clone()).unwrap());
        assert_eq!(by_writer, spliced(&only, parsed));
    }

    /// What `FileWriter` writes of `b` as a run's small part.
    fn file_writer(b: &RecordBatch) -> Vec<u8> {
        let opts = IpcWriteOptions::try_new(8, false, MetadataVersion::V5).unwrap();
        let mut w = FileWriter::try_new_with_options(Vec::new(), &b.schema(), opts).unwrap();
        w.write_metadata(IPC_MARK, env!("CARGO_PKG_VERSION"));
        w.write(b).unwrap();
        w.finish().unwrap();
        w.into_inner().unwrap()
    }

    /// Small parts written from a schema's `IpcTemplate` (every one after the first of its
    /// schema) are `FileWriter`'s bytes: batches of other lengths (0, 1, 1000 rows: other block
    /// numbers), text of other lengths, nulls; two schemas that differ in their metadata alone,
    /// taken in turn; a dictionary column (no template: `FileWriter`).
    #[test]
    fn small_parts_are_file_writer_images() {
        let mk = |first: i64, n: usize, k: &str| {
            let b = batch(first, n);
            let s = Arc::new(b.schema().as_ref().clone().with_metadata([("k".to_string(), k.to_string())].into()));
            b.with_schema(s).unwrap()
        };
        for (first, n) in [(0, 1), (5, 1), (9, 0), (1 << 40, 1000), (3, 7)] {
            for k in ["x", "yy"] {
                let b = mk(first, n, k);
                let img = encode_part(&b.schema(), std::slice::from_ref(&b), 100_000).unwrap();
                assert_eq!(img, file_writer(&b), "{n} rows, metadata {k}");
                let (_, got) = decode(Bytes::from(img)).unwrap();
                assert_eq!(arrow_select::concat::concat_batches(&b.schema(), &got).unwrap(), b);
            }
        }
        let dict: ArrayRef = Arc::new(arrow_array::DictionaryArray::<arrow_array::types::Int32Type>::from_iter(["a", "b", "a"]));
        let b = RecordBatch::try_from_iter([("d", dict)]).unwrap();
        for _ in 0..2 {
            assert_eq!(encode_part(&b.schema(), std::slice::from_ref(&b), 100).unwrap(), file_writer(&b));
        }
        assert!(IpcTemplate::of(&file_writer(&b)).is_none(), "a dictionary batch in the footer: no template");
        let t = IpcTemplate::of(&file_writer(&batch(0, 3))).unwrap();
        assert_eq!(t.footer[t.block_at..t.block_at + 8], (t.head.len() as i64).to_le_bytes());
    }

    /// A pack hashed part by part is the SHA-256 of its parts laid out at multiples of the
    /// alignment with zero bytes between (the bytes `encode_pack` returns): a Parquet part
    /// then IPC parts, one of them empty of rows, parts that end on and off the alignment.
    #[test]
    fn pack_hash_is_that_of_the_laid_out_parts() {
        let tables: Vec<(String, (SchemaRef, Vec<RecordBatch>))> = [(0, 5000), (9, 3), (1, 0), (4, 64)]
            .iter()
            .enumerate()
            .map(|(k, &(first, n))| {
                let b = batch(first, n);
                (format!("t{k}"), (b.schema(), vec![b]))
            })
            .collect();
        for align in [1, 8, 64] {
            let (images, parts, sha) = pack(&tables, align, 4096).unwrap();
            let mut laid = Vec::new();
            for ((name, at, n, rows), (img, (want, (_, b)))) in parts.iter().zip(images.iter().zip(&tables)) {
                assert_eq!((name, *at, *n, *rows), (want, laid.len(), img.len(), b[0].num_rows()));
                laid.extend_from_slice(img);
                laid.resize(laid.len().next_multiple_of(align), 0);
            }
            assert!(images[0].starts_with(b"PAR1") && images[1].starts_with(b"ARROW1"));
            assert_eq!(sha, crate::digest::hex(&Sha256::digest(&laid)), "alignment {align}");
        }
    }

    /// This thread's CPU time in seconds (Linux: CLOCK_THREAD_CPUTIME_ID).
    fn thread_cpu() -> f64 {
        extern "C" {
            fn clock_gettime(clock: i32, ts: *mut [i64; 2]) -> i32;
        }
        let mut ts = [0i64; 2];
        // SAFETY: a valid clock id and a timespec (two longs on x86-64 Linux) to fill
        assert_eq!(unsafe { clock_gettime(3, &mut ts) }, 0);
        ts[0] as f64 + ts[1] as f64 * 1e-9
    }

    /// Timing harness (not a test; bench/dump_packs.py writes its input): the packs of the runs
    /// dumped in $PACKS_DIR (NNN-table.parquet; index.txt: NNN, the pack's SHA-256, its tables in
    /// order) encoded as a sweep's worker does (store.PACK_ALIGN 64, PARQUET_MIN_ROWS 4096),
    /// $PACKS_REPS times (best total of this thread's CPU time); with $PACKS_WARM each pack once
    /// untimed first (its tables in the caches, as a run's just-built tables are). Every pack's
    /// SHA-256 must be the one the harness's first run recorded.
    #[test]
    #[ignore]
    fn bench_packs() {
        let dir = std::env::var("PACKS_DIR").unwrap();
        let reps: usize = std::env::var("PACKS_REPS").map(|r| r.parse().unwrap()).unwrap_or(5);
        let idx = std::fs::read_to_string(format!("{dir}/index.txt")).unwrap();
        let mut runs = Vec::new();
        for line in idx.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            let tables: Vec<(String, (SchemaRef, Vec<RecordBatch>))> = w[2..].iter().map(|n| {
                let data = Bytes::from(std::fs::read(format!("{dir}/{}-{n}.parquet", w[0])).unwrap());
                let b = ParquetRecordBatchReaderBuilder::try_new(data).unwrap();
                let schema = b.schema().clone();
                let batches = b.build().unwrap().collect::<Result<Vec<_>, _>>().unwrap();
                let one = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
                (n.to_string(), (schema, vec![one]))
            }).collect();
            runs.push((w[1].to_string(), tables));
        }
        // the packs of tables read back may differ from the sweep's (null bitmaps): the first run's SHA-256s are the reference
        let got: Vec<String> = runs.iter().map(|(_, t)| pack(t, 64, 4096).unwrap().2).collect();
        let refs = format!("{dir}/sha-rust.txt");
        match std::fs::read_to_string(&refs) {
            Ok(want) => assert_eq!(got, want.lines().collect::<Vec<_>>()),
            Err(_) => std::fs::write(&refs, got.join("\n")).unwrap(),
        }
        let same = runs.iter().zip(&got).filter(|((s, _), g)| s == *g).count();
        eprintln!("{same} of {} packs as the sweep's", runs.len());
        let mut best = f64::MAX;
        let warm = std::env::var("PACKS_WARM").is_ok();
        for _ in 0..reps {
            let mut took = 0.0;
            for (_, tables) in &runs {
                if warm {
                    // the tables in the caches, as a run's just-built tables are
                    std::hint::black_box(pack(tables, 64, 4096).unwrap());
                }
                let t = thread_cpu();
                std::hint::black_box(pack(tables, 64, 4096).unwrap());
                took += thread_cpu() - t;
            }
            best = best.min(took);
        }
        eprintln!("{} packs{}: best {:.2} ms", runs.len(), if warm { " (warm)" } else { "" }, best * 1e3);
    }

    #[test]
    fn row_groups_hold_at_most_max_group_rows() {
        let b = batch(0, 10);
        let big = arrow_select::concat::concat_batches(&b.schema(), &vec![b.clone(); MAX_GROUP_ROWS / 10 + 1]).unwrap();
        let groups = row_groups(&[b.clone(), big.clone()]);
        assert_eq!(groups.iter().map(|g| g.iter().map(RecordBatch::num_rows).sum::<usize>()).collect::<Vec<_>>(), vec![MAX_GROUP_ROWS, 14]);
        assert!(row_groups(&[b.slice(0, 0)]).is_empty());
    }

    #[test]
    fn merged_parts_are_the_bytes_of_their_rows_encoded_at_once() {
        // 300 parts: past COMPACT_BATCHES, so the merger joins its batches on the way
        let parts: Vec<RecordBatch> = (0..300).map(|i| batch(i * 4, 4)).collect();
        let mut m = PartMerger::default();
        for p in &parts {
            m.take(Bytes::from(encode_part(&p.schema(), std::slice::from_ref(p), 1000).unwrap())).unwrap();
        }
        assert!(m.batches.len() < COMPACT_BATCHES);
        let whole = arrow_select::concat::concat_batches(&parts[0].schema(), &parts).unwrap();
        assert_eq!(m.encode_all().unwrap(), encode(&whole.schema(), &[whole]).unwrap());
        assert!(m.encode_all().is_err(), "empty again after encode_all");
    }
}
