//! SHA-256 for Python without hashlib, whose import loads OpenSSL's libcrypto (~2.5 ms of CPU in
//! every sweep process and worker): the same digests, by the `sha2` crate the packs use.
use std::io::Read;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sha2::{Digest, Sha256};

/// `d` as lower-case hex digits (a SHA-256 as `hashlib`'s `hexdigest` writes it).
pub(crate) fn hex(d: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(d.len() * 2);
    for b in d {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// SHA-256 of `data` (bytes, or any object with a byte buffer: a memoryview's slice, a
/// bytearray) as 64 hex digits, as `hashlib.sha256(data).hexdigest()` gives it.
#[pyfunction]
fn sha256_hex(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = data.cast_exact::<PyBytes>() {
        let bytes = b.as_bytes();
        return Ok(py.detach(|| hex(&Sha256::digest(bytes)))); // immutable: hashed without the GIL
    }
    let buf = PyBuffer::<u8>::get(data)?;
    if !buf.is_c_contiguous() {
        return Ok(hex(&Sha256::digest(buf.to_vec(py)?)));
    }
    // SAFETY: a C-contiguous buffer of len_bytes() bytes, exported to `buf` until it drops; the
    // GIL stays held, so no Python code changes it meanwhile
    let bytes = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, buf.len_bytes()) };
    Ok(hex(&Sha256::digest(bytes)))
}

/// SHA-256 (64 hex digits) of what remains to read from open file descriptor `fd` (the caller
/// opened it, and keeps and closes it), read to its end in 1 MiB chunks. Raises OSError.
#[pyfunction]
fn sha256_fd(py: Python<'_>, fd: i32) -> PyResult<String> {
    let got = py.detach(|| -> std::io::Result<String> {
        // SAFETY: the descriptor is the caller's open file for the whole call; ManuallyDrop never closes it
        let mut f = ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            h.update(&buf[..n]);
        }
        Ok(hex(&h.finalize()))
    });
    got.map_err(PyErr::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sha256_hex, m)?)?;
    m.add_function(wrap_pyfunction!(sha256_fd, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::hex;
    use sha2::{Digest, Sha256};

    #[test]
    fn hex_of_fips_180_2_example() {
        // FIPS 180-2, appendix B.1: SHA-256("abc")
        assert_eq!(hex(&Sha256::digest(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(hex(&[0x00, 0x0f, 0xf0, 0xff]), "000ff0ff");
    }
}
