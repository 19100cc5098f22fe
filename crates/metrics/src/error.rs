//! The one error type of the metrics crate. Every variant names the offending column or parameter
//! so that the Python layer can pass the message through unchanged (`jitterlab.TableError`).
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum MetricsError {
    /// Two columns of one table have different lengths.
    #[error("column '{column}' has {got} rows, expected {expected}")]
    LengthMismatch { column: &'static str, expected: usize, got: usize },
    /// A received packet arrived before it was sent (recv_ns < send_ns).
    #[error("column '{column}': negative one-way delay at row {row} (recv_ns {recv} < send_ns {send})")]
    NegativeDelay { column: &'static str, row: usize, send: i64, recv: i64 },
    /// A value is outside its domain (negative size, 16-bit sequence out of range, unknown run code...).
    #[error("column '{column}': {reason} (row {row})")]
    InvalidValue { column: &'static str, row: usize, reason: String },
    /// A function parameter is outside its domain (negative bin width, empty JB list...).
    #[error("parameter '{name}': {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// More rows than the u32 row index supports.
    #[error("column '{column}': {rows} rows exceed the supported maximum of {max}")]
    TooManyRows { column: &'static str, rows: usize, max: usize },
}

pub type Result<T> = std::result::Result<T, MetricsError>;
