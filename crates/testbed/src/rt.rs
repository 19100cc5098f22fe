//! Clocks, real-time scheduling and stop signals.
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{os, Result};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// SIGTERM and SIGINT set a flag that every loop of this crate polls (at least every 5 ms), so
/// the loops return their records instead of dying with them.
pub fn install_stop_handlers() {
    STOP.store(false, Ordering::SeqCst);
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_stop as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0; // no SA_RESTART: blocking calls return EINTR at once
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Asks for a stop from inside the process (tests).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

// time_t and c_long are i64 here but i32 on 32-bit targets: the casts are kept for those.
#[allow(clippy::unnecessary_cast)]
fn now(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// CLOCK_REALTIME in ns (shared across namespaces: send and receive times).
pub fn realtime_ns() -> i64 {
    now(libc::CLOCK_REALTIME)
}

/// CLOCK_MONOTONIC in ns.
pub fn monotonic_ns() -> i64 {
    now(libc::CLOCK_MONOTONIC)
}

pub(crate) fn timespec(ns: i64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// Sleeps until CLOCK_REALTIME reaches `t_ns` (absolute, so a schedule never drifts). Returns
/// false when interrupted by a stop signal.
pub fn sleep_until_realtime(t_ns: i64) -> bool {
    let ts = timespec(t_ns);
    loop {
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_REALTIME, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        if r == 0 {
            return true;
        }
        if stop_requested() {
            return false;
        }
        if r != libc::EINTR {
            return true;
        }
    }
}

/// Puts the calling thread under SCHED_FIFO at `prio` (1..99) and locks memory, so that page
/// faults and ordinary tasks (compilers on a 2-core machine) do not stall it. Returns whether it
/// worked; the caller reports a failure (the run still goes on, with worse timing).
pub fn set_fifo(prio: i32) -> Result<()> {
    let p = libc::sched_param { sched_priority: prio };
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        return Err(os(format!("sched_setscheduler(SCHED_FIFO, {prio})")));
    }
    // A real-time thread sleeps with no timer slack (hrtimer wakes on time); lock memory so the
    // packet buffers never fault. mlockall failing is not fatal.
    unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    Ok(())
}
