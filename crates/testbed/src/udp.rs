//! UDP socket helpers shared by the constant-rate media endpoints ([`crate::media`]) and the
//! adaptive ones ([`crate::rtc`]): an integer socket option, a socket bound to a port (or a
//! duplicate of one the caller already bound), and one datagram with its kernel receive time.
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};

use crate::error::{os, Error, Result};
use crate::rt;

pub fn setsockopt_int(fd: i32, level: i32, name: i32, v: i32, what: &str) -> Result<()> {
    let r = unsafe { libc::setsockopt(fd, level, name, &v as *const i32 as *const libc::c_void, std::mem::size_of::<i32>() as u32) };
    if r != 0 {
        return Err(os(what.to_string()));
    }
    Ok(())
}

/// A UDP socket on `port`, or a duplicate of `fd` (already bound by the caller, who keeps its own).
pub fn bind(port: u16, fd: Option<i32>) -> Result<UdpSocket> {
    match fd {
        Some(fd) => {
            let d = unsafe { libc::dup(fd) };
            if d < 0 {
                return Err(os(format!("dup fd {fd}")));
            }
            Ok(unsafe { <UdpSocket as std::os::fd::FromRawFd>::from_raw_fd(d) })
        }
        None => UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port)).map_err(|e| Error::Os { what: format!("bind udp port {port}"), source: e }),
    }
}

/// One datagram with its kernel receive time (SO_TIMESTAMPNS) and TOS byte (IP_RECVTOS; 0 unless the socket asked for it).
pub fn recv_one(fd: i32, buf: &mut [u8]) -> Option<(usize, i64, u8)> {
    let mut cbuf = [0u8; 256];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = cbuf.len() as _;
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return None;
    }
    let mut recv_ns = rt::realtime_ns();
    let mut tos = 0u8;
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let t = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                recv_ns = t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64;
            } else if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                tos = *libc::CMSG_DATA(c);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Some((n as usize, recv_ns, tos))
}

