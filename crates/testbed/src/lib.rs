//! The real-time pieces of the jitterlab testbed (Linux only): a userspace delay line over a TUN
//! device, and the RTP/UDP media sender and receiver. Everything here runs inside a network
//! namespace prepared by the Python driver (`jitterlab.testbed`); this crate never creates or
//! deletes namespaces or interfaces other than the TUN device it is asked to open.
//!
//! Times are CLOCK_REALTIME nanoseconds for anything that leaves the process (send and receive
//! times: the clock is shared by all namespaces of a host, so one-way delay needs no clock sync)
//! and CLOCK_MONOTONIC inside the delay line.
//!
//! The loops stop when the process receives SIGTERM or SIGINT ([`rt::install_stop_handlers`]).

pub mod aqm;
pub mod delayline;
pub mod error;
pub mod linkqueue;
pub mod media;
pub mod rt;
pub mod rtc;
pub mod tun;
pub mod udp;

pub use error::{Error, Result};
