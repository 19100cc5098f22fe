//! The simulator's tables handed to pyarrow through the Arrow C data interface
//! (<https://arrow.apache.org/docs/format/CDataInterface.html>): a record batch's schema and
//! struct array as the PyCapsules of the PyCapsule protocol (`__arrow_c_array__`), each column's
//! buffers the core's own vectors, moved, not copied. Before, each column became a numpy array
//! and then an Arrow array in Python: about 70 columns a run, 7 % of a short sweep's CPU time
//! (issue 14).
//!
//! Types: int64 (with a validity bitmap only where a value is null), bool and utf8 (int32
//! offsets), every field nullable, as `pyarrow.Table.from_arrays` makes them, so the tables and
//! every byte stored from them are what they were.
use std::ffi::{c_char, c_void, CStr, CString};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// One column's values and validity.
pub enum Col {
    /// `valid`: LSB-first bitmap, present only when `nulls > 0`.
    I64 { data: Vec<i64>, valid: Option<Vec<u8>>, nulls: usize },
    /// Values bit-packed LSB first, no nulls.
    Bool { bits: Vec<u8>, len: usize },
    Utf8 { offsets: Vec<i32>, data: Vec<u8>, valid: Option<Vec<u8>>, nulls: usize },
}

impl Col {
    pub fn i64(data: Vec<i64>) -> Col { Col::I64 { data, valid: None, nulls: 0 } }

    /// Values reinterpreted as int64 in place (numpy's `astype(int64)`: past 2^63 - 1 they wrap).
    pub fn from_u64(v: Vec<u64>) -> Col {
        let mut v = std::mem::ManuallyDrop::new(v);
        // SAFETY: u64 and i64 have one size and alignment and every bit pattern is valid in both;
        // the new Vec takes over the allocation (same capacity), the old one is never dropped.
        Col::i64(unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<i64>(), v.len(), v.capacity()) })
    }
    pub fn from_u32(v: &[u32]) -> Col { Col::i64(v.iter().map(|&x| i64::from(x)).collect()) }

    /// `data` with the rows where `valid` yields false null (their values kept, as numpy's were);
    /// no bitmap when none is.
    pub fn i64_valid(data: Vec<i64>, valid: impl Iterator<Item = bool>) -> Col {
        let mut bits = vec![0u8; data.len().div_ceil(8)];
        let mut set = 0;
        for (r, ok) in valid.take(data.len()).enumerate() {
            bits[r / 8] |= u8::from(ok) << (r % 8);
            set += usize::from(ok);
        }
        let nulls = data.len() - set; // a row `valid` did not reach is null too
        Col::I64 { data, valid: (nulls > 0).then_some(bits), nulls }
    }

    /// `data` with the rows whose value `is_null` null (one pass; no bitmap when none is).
    pub fn i64_null_where(data: Vec<i64>, is_null: impl Fn(i64) -> bool) -> Col {
        let mut bits = vec![0u8; data.len().div_ceil(8)];
        let mut nulls = 0;
        for (byte, chunk) in bits.iter_mut().zip(data.chunks(8)) {
            for (k, &x) in chunk.iter().enumerate() {
                let null = is_null(x);
                *byte |= u8::from(!null) << k;
                nulls += usize::from(null);
            }
        }
        Col::I64 { data, valid: (nulls > 0).then_some(bits), nulls }
    }

    pub fn bools(v: &[bool]) -> Col {
        let bits = v.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |b, (k, &x)| b | u8::from(x) << k)).collect();
        Col::Bool { bits, len: v.len() }
    }

    pub fn strings<'a>(v: impl IntoIterator<Item = &'a str>) -> PyResult<Col> {
        let mut offsets = vec![0i32];
        let mut data = Vec::new();
        for s in v {
            data.extend_from_slice(s.as_bytes());
            offsets.push(offset(data.len())?);
        }
        Ok(Col::Utf8 { offsets, data, valid: None, nulls: 0 })
    }

    /// `names[i]` for each index, null where the index is negative or past the names.
    pub fn take_strings(names: &[String], idx: impl ExactSizeIterator<Item = i64>) -> PyResult<Col> {
        let n = idx.len();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut data = Vec::new();
        let mut bits = vec![0u8; n.div_ceil(8)];
        let mut nulls = 0;
        offsets.push(0i32);
        for (r, i) in idx.enumerate() {
            match usize::try_from(i).ok().and_then(|i| names.get(i)) {
                Some(s) => {
                    data.extend_from_slice(s.as_bytes());
                    bits[r / 8] |= 1 << (r % 8);
                }
                None => nulls += 1,
            }
            offsets.push(offset(data.len())?);
        }
        Ok(Col::Utf8 { offsets, data, valid: (nulls > 0).then_some(bits), nulls })
    }

    fn len(&self) -> usize {
        match self {
            Col::I64 { data, .. } => data.len(),
            Col::Bool { len, .. } => *len,
            Col::Utf8 { offsets, .. } => offsets.len() - 1,
        }
    }
}

fn offset(n: usize) -> PyResult<i32> {
    i32::try_from(n).map_err(|_| PyValueError::new_err(format!("a string column of {n} bytes exceeds int32 offsets")))
}

/// A table's columns, in order; all of one length.
#[derive(Default)]
pub struct Batch {
    pub cols: Vec<(String, Col)>,
}

impl Batch {
    pub fn push(&mut self, name: impl Into<String>, c: Col) -> &mut Self {
        self.cols.push((name.into(), c));
        self
    }
}

// ---- the C data interface's two structs (its ABI, field for field)

#[repr(C)]
pub struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
pub struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

// SAFETY: each struct owns what its pointers point to (through `private_data`); nothing is shared
// with another thread, and the consumer takes ownership by moving the struct out.
unsafe impl Send for FfiSchema {}
unsafe impl Send for FfiArray {}

/// A capsule never imported still owns its struct: released when the capsule goes.
impl Drop for FfiSchema {
    fn drop(&mut self) {
        if let Some(r) = self.release {
            // SAFETY: `self` is a live, unreleased schema made by `schema`.
            unsafe { r(self) }
        }
    }
}

impl Drop for FfiArray {
    fn drop(&mut self) {
        if let Some(r) = self.release {
            // SAFETY: `self` is a live, unreleased array made by `array`.
            unsafe { r(self) }
        }
    }
}

const FLAG_NULLABLE: i64 = 2;
/// Where a zero-length buffer points: pyarrow reads no byte of it, but wants a non-null, aligned
/// address (a Vec's dangling pointer is aligned only to its own type).
static EMPTY: [u64; 8] = [0; 8];

struct SchemaPrivate {
    _format: CString,
    _name: CString,
    children: Vec<*mut FfiSchema>,
}

unsafe extern "C" fn release_schema(s: *mut FfiSchema) {
    // SAFETY: called by the consumer or our Drop on a schema made by `schema`, at most once (the
    // release pointer is cleared below and checked by every caller, as the interface requires).
    unsafe {
        let Some(s) = s.as_mut() else { return };
        if s.release.is_none() {
            return;
        }
        let p = Box::from_raw(s.private_data.cast::<SchemaPrivate>());
        for &c in &p.children {
            drop(Box::from_raw(c)); // releases it first (Drop) unless the consumer moved it
        }
        s.release = None;
    }
}

fn schema(format: &CStr, name: &str, flags: i64, children: Vec<FfiSchema>) -> FfiSchema {
    let format = format.to_owned();
    // a name with a NUL byte cannot come from our tables (fixed column names)
    let name = CString::new(name).unwrap_or_default();
    let mut children: Vec<*mut FfiSchema> = children.into_iter().map(|c| Box::into_raw(Box::new(c))).collect();
    let p = Box::new(SchemaPrivate { _format: format, _name: name, children: Vec::new() });
    let (fmt, nm) = (p._format.as_ptr(), p._name.as_ptr());
    let n = children.len() as i64;
    let ptr = if children.is_empty() { std::ptr::null_mut() } else { children.as_mut_ptr() };
    let mut p = p;
    p.children = children; // moving the Vec keeps its heap buffer (and `ptr`) where it is
    FfiSchema {
        format: fmt,
        name: nm,
        metadata: std::ptr::null(),
        flags,
        n_children: n,
        children: ptr,
        dictionary: std::ptr::null_mut(),
        release: Some(release_schema),
        private_data: Box::into_raw(p).cast(),
    }
}

struct ArrayPrivate {
    _col: Option<Col>,
    buffers: Vec<*const c_void>,
    children: Vec<*mut FfiArray>,
}

unsafe extern "C" fn release_array(a: *mut FfiArray) {
    // SAFETY: as `release_schema`, for an array made by `array`.
    unsafe {
        let Some(a) = a.as_mut() else { return };
        if a.release.is_none() {
            return;
        }
        let p = Box::from_raw(a.private_data.cast::<ArrayPrivate>());
        for &c in &p.children {
            drop(Box::from_raw(c));
        }
        a.release = None;
    }
}

fn buf<T>(v: &[T]) -> *const c_void { if v.is_empty() { EMPTY.as_ptr().cast() } else { v.as_ptr().cast() } }

fn array(len: usize, nulls: usize, col: Option<Col>, children: Vec<FfiArray>) -> FfiArray {
    let buffers: Vec<*const c_void> = match &col {
        None => vec![std::ptr::null()], // a struct: its validity buffer, absent
        Some(Col::I64 { data, valid, .. }) => vec![valid.as_deref().map_or(std::ptr::null(), buf), buf(data)],
        Some(Col::Bool { bits, .. }) => vec![std::ptr::null(), buf(bits)],
        Some(Col::Utf8 { offsets, data, valid, .. }) => vec![valid.as_deref().map_or(std::ptr::null(), buf), buf(offsets), buf(data)],
    };
    let children: Vec<*mut FfiArray> = children.into_iter().map(|c| Box::into_raw(Box::new(c))).collect();
    let mut p = Box::new(ArrayPrivate { _col: col, buffers, children });
    let (nb, bp) = (p.buffers.len() as i64, p.buffers.as_mut_ptr());
    let nc = p.children.len() as i64;
    let cp = if p.children.is_empty() { std::ptr::null_mut() } else { p.children.as_mut_ptr() };
    FfiArray {
        length: len as i64,
        null_count: nulls as i64,
        offset: 0,
        n_buffers: nb,
        n_children: nc,
        buffers: bp,
        children: cp,
        dictionary: std::ptr::null_mut(),
        release: Some(release_array),
        private_data: Box::into_raw(p).cast(),
    }
}

fn export(b: Batch) -> PyResult<(FfiSchema, FfiArray)> {
    let n = b.cols.first().map_or(0, |(_, c)| c.len());
    if let Some((name, c)) = b.cols.iter().find(|(_, c)| c.len() != n) {
        return Err(PyValueError::new_err(format!("column {name}: {} rows, the table has {n}", c.len())));
    }
    let mut fields = Vec::with_capacity(b.cols.len());
    let mut arrays = Vec::with_capacity(b.cols.len());
    for (name, c) in b.cols {
        let (format, nulls): (&CStr, usize) = match &c {
            Col::I64 { nulls, .. } => (c"l", *nulls),
            Col::Bool { .. } => (c"b", 0),
            Col::Utf8 { nulls, .. } => (c"u", *nulls),
        };
        fields.push(schema(format, &name, FLAG_NULLABLE, Vec::new()));
        arrays.push(array(n, nulls, Some(c), Vec::new()));
    }
    Ok((schema(c"+s", "", 0, fields), array(n, 0, None, arrays)))
}

/// A table of the core, for `pyarrow.record_batch(obj)` (the PyCapsule protocol); exported once.
#[pyclass(module = "jitterlab._native")]
pub struct ArrowBatch {
    batch: Option<Batch>,
}

impl ArrowBatch {
    pub fn new(batch: Batch) -> Self { ArrowBatch { batch: Some(batch) } }
}

#[pymethods]
impl ArrowBatch {
    /// The schema and array capsules of the table (its buffers move to the caller).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(&mut self, py: Python<'py>, requested_schema: Option<Bound<'py, PyAny>>) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        if requested_schema.is_some_and(|s| !s.is_none()) {
            return Err(PyValueError::new_err("ArrowBatch: a requested schema is not supported (the table has one type a column)"));
        }
        let b = self.batch.take().ok_or_else(|| PyValueError::new_err("ArrowBatch: exported already (its buffers moved)"))?;
        let (s, a) = export(b)?;
        Ok((PyCapsule::new_with_value(py, s, c"arrow_schema")?, PyCapsule::new_with_value(py, a, c"arrow_array")?))
    }
}
