//! A run's tables kept native from the simulator to the stored pack (issue 31): each table an
//! arrow-rs record batch behind `NativeTable`, which `encode_pack` encodes and `run_share` reads
//! in place, and which pyarrow takes only when someone reads the table (`pyarrow.table(obj)`,
//! the PyCapsule stream protocol: the buffers shared, not copied). A sweep's worker that stores
//! its runs and computes their summary shares so never imports pyarrow nor builds a pyarrow table.
//!
//! The arrays are what pyarrow made of the core's columns before (`arrow_c`: int64, bool, utf8,
//! every field nullable, a validity bitmap only where a value is null), so every stored byte is
//! what it was.
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, NullArray, RecordBatch, RecordBatchIterator, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyCapsule, PyFloat, PyInt, PyString};

use crate::arrow_c::{Batch, Col};

/// One table of a run, native (see the module's note).
#[pyclass(module = "jitterlab._native", frozen)]
pub struct NativeTable {
    pub batch: RecordBatch,
}

fn err(e: impl std::fmt::Display) -> PyErr { PyValueError::new_err(format!("NativeTable: {e}")) }

fn nulls(valid: Option<Vec<u8>>, len: usize) -> Option<arrow_buffer::NullBuffer> {
    valid.map(|b| arrow_buffer::NullBuffer::new(arrow_buffer::BooleanBuffer::new(arrow_buffer::Buffer::from_vec(b), 0, len)))
}

/// A column of the core as an arrow-rs array (its vectors moved, not copied).
fn array(c: Col) -> PyResult<(DataType, ArrayRef)> {
    Ok(match c {
        Col::I64 { data, valid, .. } => {
            let n = data.len();
            (DataType::Int64, Arc::new(Int64Array::try_new(data.into(), nulls(valid, n)).map_err(err)?))
        }
        Col::Bool { bits, len } => {
            let v = arrow_buffer::BooleanBuffer::new(arrow_buffer::Buffer::from_vec(bits), 0, len);
            (DataType::Boolean, Arc::new(BooleanArray::new(v, None)))
        }
        Col::Utf8 { offsets, data, valid, .. } => {
            let n = offsets.len() - 1;
            let off = arrow_buffer::OffsetBuffer::new(offsets.into());
            (DataType::Utf8, Arc::new(StringArray::try_new(off, arrow_buffer::Buffer::from_vec(data), nulls(valid, n)).map_err(err)?))
        }
    })
}

impl NativeTable {
    /// The core's table `b` as a record batch (fields nullable, no metadata).
    pub fn from_batch(b: Batch) -> PyResult<Self> {
        let mut fields = Vec::with_capacity(b.cols.len());
        let mut arrays = Vec::with_capacity(b.cols.len());
        for (name, c) in b.cols {
            let (t, a) = array(c)?;
            fields.push(Field::new(name, t, true));
            arrays.push(a);
        }
        Self::new(fields, arrays)
    }

    fn new(fields: Vec<Field>, arrays: Vec<ArrayRef>) -> PyResult<Self> {
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        Ok(NativeTable { batch: RecordBatch::try_new(schema, arrays).map_err(err)? })
    }

    /// An int64 column's values, and where it is valid (None: nowhere null).
    pub fn i64_column(&self, name: &str) -> PyResult<(&[i64], Option<&arrow_buffer::NullBuffer>)> {
        let c = self.batch.column_by_name(name).ok_or_else(|| crate::errors::TableError::new_err(format!("media_packets: missing column '{name}'")))?;
        let a = c.as_any().downcast_ref::<Int64Array>().ok_or_else(|| crate::errors::TableError::new_err(format!("media_packets: column '{name}' is not int64")))?;
        Ok((a.values(), a.nulls()))
    }
}

#[pymethods]
impl NativeTable {
    #[getter]
    fn num_rows(&self) -> usize { self.batch.num_rows() }

    /// Bytes of the table's buffers (pyarrow's `get_total_buffer_size`: each buffer's length).
    #[getter]
    fn nbytes(&self) -> usize {
        self.batch.columns().iter().map(|c| {
            let d = c.to_data();
            d.buffers().iter().map(|b| b.len()).sum::<usize>() + d.nulls().map_or(0, |n| n.buffer().len())
        }).sum()
    }

    /// A table of no runs: a `run_id` column (int64) and no rows (a sweep's combined table that
    /// no run stored rows of).
    #[staticmethod]
    fn empty() -> PyResult<NativeTable> {
        NativeTable::new(vec![Field::new("run_id", DataType::Int64, true)], vec![Arc::new(Int64Array::from(Vec::<i64>::new()))])
    }

    /// Tables of one schema as one (their rows in order): many small runs' tables held as one.
    #[staticmethod]
    fn concat(tables: Vec<PyRef<'_, NativeTable>>) -> PyResult<NativeTable> {
        let first = tables.first().ok_or_else(|| err("nothing to concatenate"))?;
        let schema = first.batch.schema();
        let batches: Vec<&RecordBatch> = tables.iter().map(|t| &t.batch).collect();
        Ok(NativeTable { batch: arrow_select::concat::concat_batches(&schema, batches).map_err(err)? })
    }

    /// Each column's kind: "int", "float", "bool", "str", "null" or "other" (a summary's labels
    /// depend on it, as on pyarrow's types).
    #[getter]
    fn column_kinds(&self) -> Vec<&'static str> {
        self.batch.schema().fields().iter().map(|f| match f.data_type() {
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::UInt8 | DataType::UInt16 | DataType::UInt32
            | DataType::UInt64 => "int",
            DataType::Float16 | DataType::Float32 | DataType::Float64 => "float",
            DataType::Boolean => "bool",
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "str",
            DataType::Null => "null",
            _ => "other",
        }).collect()
    }

    /// The Parquet file at `path` read whole into one table (a sweep's small combined tables:
    /// `runs`, `flows`, `tcp_flows`, for its closing summary without pyarrow). ValueError when it
    /// cannot be read.
    #[staticmethod]
    fn read_parquet(py: Python<'_>, path: std::path::PathBuf) -> PyResult<NativeTable> {
        py.detach(|| -> Result<NativeTable, String> {
            let data = bytes::Bytes::from(std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?);
            let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(data).map_err(|e| e.to_string())?;
            let schema = b.schema().clone();
            let batches = b.build().map_err(|e| e.to_string())?.collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
            let one = arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| e.to_string())?;
            Ok(NativeTable { batch: one })
        }).map_err(err)
    }

    #[getter]
    fn column_names(&self) -> Vec<String> { self.batch.schema().fields().iter().map(|f| f.name().clone()).collect() }

    /// Column `name`'s values as a list (None for a null): int64, float64, bool, string and null
    /// columns (a run's small tables: `runs`, `flows`, `tcp_flows`). KeyError: no such column.
    fn to_pylist<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        let c = self.batch.column_by_name(name).ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_string()))?;
        let any = c.as_any();
        let n = c.len();
        let items: Vec<Bound<'py, PyAny>> = if let Some(a) = any.downcast_ref::<Int64Array>() {
            a.iter().map(|v| v.into_pyobject(py).map(Bound::into_any)).collect::<Result<_, _>>()?
        } else if let Some(a) = any.downcast_ref::<Float64Array>() {
            a.iter().map(|v| v.into_pyobject(py).map(Bound::into_any)).collect::<Result<_, _>>()?
        } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
            a.iter().map(|v| v.into_pyobject(py).map(|b| b.to_owned().into_any())).collect::<Result<_, _>>()?
        } else if let Some(a) = any.downcast_ref::<StringArray>() {
            a.iter().map(|v| v.into_pyobject(py).map(Bound::into_any)).collect::<Result<_, _>>()?
        } else if c.data_type() == &DataType::Null {
            (0..n).map(|_| py.None().into_bound(py)).collect()
        } else {
            return Err(err(format!("column {name}: type {} not supported", c.data_type())));
        };
        pyo3::types::PyList::new(py, items)
    }

    /// The table as an Arrow C stream of one record batch, for `pyarrow.table(obj)` (its buffers
    /// shared; the table stays usable).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(&self, py: Python<'py>, requested_schema: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyCapsule>> {
        if requested_schema.is_some_and(|s| !s.is_none()) {
            return Err(err("a requested schema is not supported (the table has one type a column)"));
        }
        let reader = RecordBatchIterator::new(vec![Ok(self.batch.clone())], self.batch.schema());
        PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(Box::new(reader)), c"arrow_array_stream")
    }
}

/// A sweep run's `runs` table: one row, a column a (name, value) in order, typed as pyarrow
/// infers a lone Python value (bool, int64, float64, string; None: the null type), the two TCP
/// times int64, null at NULL_NS. Raises TypeError for another value (a big int, a numpy scalar,
/// a dict): the caller builds that row with pyarrow.
#[pyfunction]
pub fn runs_table(row: Vec<(String, Bound<'_, PyAny>)>) -> PyResult<NativeTable> {
    let mut fields = Vec::with_capacity(row.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(row.len());
    for (name, v) in row {
        let (t, a): (DataType, ArrayRef) = if name == "tcp_start_ns" || name == "tcp_end_ns" {
            // a null keeps the core's NULL_NS in its slot (as the numpy-made column did: the IPC image holds it)
            let x: i64 = v.extract()?;
            let valid = (x == jitterlab_sim::record::NULL_NS).then(|| arrow_buffer::NullBuffer::from(vec![false]));
            (DataType::Int64, Arc::new(Int64Array::new(vec![x].into(), valid)))
        } else if v.is_none() {
            (DataType::Null, Arc::new(NullArray::new(1)))
        } else if v.is_exact_instance_of::<PyBool>() {
            (DataType::Boolean, Arc::new(BooleanArray::from(vec![v.extract::<bool>()?])))
        } else if v.is_exact_instance_of::<PyInt>() {
            let x: i64 = v.extract().map_err(|_| pyo3::exceptions::PyTypeError::new_err(format!("runs.{name}: an int beyond int64")))?;
            (DataType::Int64, Arc::new(Int64Array::from(vec![x])))
        } else if v.is_exact_instance_of::<PyFloat>() {
            (DataType::Float64, Arc::new(Float64Array::from(vec![v.extract::<f64>()?])))
        } else if v.is_exact_instance_of::<PyString>() {
            (DataType::Utf8, Arc::new(StringArray::from(vec![v.extract::<String>()?])))
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!("runs.{name}: a {} value", v.get_type().name()?)));
        };
        fields.push(Field::new(name, t, true));
        arrays.push(a);
    }
    NativeTable::new(fields, arrays)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeTable>()?;
    m.add_function(wrap_pyfunction!(runs_table, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The core's columns become arrays with the layout pyarrow made of them: values moved as
    /// they are (a null's slot keeps its value), a bitmap only where a value is null, and
    /// `nbytes` the buffers' lengths (10 int64: 80 bytes and a 2-byte bitmap; 10 bools: 2 bytes;
    /// 3 strings "a", null, "bc": 16 bytes of offsets, 3 of text, a 1-byte bitmap).
    #[test]
    fn core_columns_keep_their_values_nulls_and_sizes() {
        let mut b = Batch::default();
        let vals: Vec<i64> = (0..10).map(|i| if i % 4 == 1 { i64::MIN } else { i * 7 }).collect();
        b.push("t", Col::i64_null_where(vals.clone(), |x| x == i64::MIN))
            .push("k", Col::bools(&[true, false, true, true, false, false, false, false, true, true]));
        let t = NativeTable::from_batch(b).unwrap();
        let a = t.batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(a.values().as_ref(), vals.as_slice());
        assert_eq!(a.null_count(), 3); // rows 1, 5, 9
        assert!(a.is_null(5) && a.is_valid(4));
        let k = t.batch.column(1).as_any().downcast_ref::<BooleanArray>().unwrap();
        assert_eq!(k.iter().filter(|v| *v == Some(true)).count(), 5);
        assert!(k.nulls().is_none());
        assert_eq!(t.nbytes(), 80 + 2 + 2);
        assert!(t.batch.schema().fields().iter().all(|f| f.is_nullable()));

        let mut s = Batch::default();
        s.push("s", Col::take_strings(&["a".to_string(), "bc".to_string()], [0i64, -1, 1].into_iter()).unwrap());
        let s = NativeTable::from_batch(s).unwrap();
        let c = s.batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![Some("a"), None, Some("bc")]);
        assert_eq!(s.nbytes(), 16 + 3 + 1);
        // a column without nulls has no bitmap at all
        let mut n = Batch::default();
        n.push("x", Col::i64(vec![1, 2, 3]));
        assert!(NativeTable::from_batch(n).unwrap().batch.column(0).nulls().is_none());
    }
}
