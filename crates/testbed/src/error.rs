//! The crate's one error type.
use std::io;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A system call failed; `what` names the call and its object (e.g. "open /dev/net/tun").
    #[error("{what}: {source}")]
    Os { what: String, source: io::Error },
    /// An argument is out of range (e.g. a packet size smaller than the RTP header).
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The last OS error, labelled.
pub(crate) fn os(what: impl Into<String>) -> Error {
    Error::Os { what: what.into(), source: io::Error::last_os_error() }
}
