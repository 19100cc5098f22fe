//! Opening a TUN device (layer 3, no packet-information header).
use std::ffi::CString;

use crate::error::{os, Error, Result};

const TUNSETIFF: libc::c_ulong = 0x4004_54ca; // _IOW('T', 202, int)
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TUN device; closed on drop (which lets the kernel remove a non-persistent device).
pub struct Tun {
    pub fd: libc::c_int,
    pub name: String,
}

impl Tun {
    /// Opens (creating if needed) the TUN device `name` in the caller's network namespace, in
    /// non-blocking mode.
    pub fn open(name: &str) -> Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(Error::Invalid(format!("tun name {name:?}: must have 1..15 characters")));
        }
        let path = CString::new("/dev/net/tun").unwrap();
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(os("open /dev/net/tun"));
        }
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        if unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req) } < 0 {
            let e = os(format!("ioctl(TUNSETIFF, {name})"));
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Ok(Tun { fd, name: name.to_string() })
    }

    /// Reads one packet; None when nothing is waiting.
    pub fn read(&self, buf: &mut [u8]) -> Result<Option<usize>> {
        let n = unsafe { libc::read(self.fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
                _ => Err(Error::Os { what: format!("read {}", self.name), source: e }),
            };
        }
        Ok(Some(n as usize))
    }

    /// Writes one packet back into the kernel (it arrives as if received on the TUN device).
    pub fn write(&self, pkt: &[u8]) -> bool {
        let n = unsafe { libc::write(self.fd, pkt.as_ptr() as *const libc::c_void, pkt.len()) };
        n == pkt.len() as isize
    }
}

impl Drop for Tun {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
    }
}
