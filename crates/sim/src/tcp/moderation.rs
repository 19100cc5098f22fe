//! Receiver-side RWND moderation (Järvinen, "Protecting VoIP from TCP traffic", WiBrA 2012): the
//! receiving host caps the window every TCP connection to it advertises, so that together they
//! cannot push more than a total `budget` of bytes into the bottleneck buffer ahead of a call.
//!
//! Rules (docs/tcp.md "RWND moderation"):
//! - **Active connections**: from the SYN's arrival ([`WindowPolicy::on_open`]) to the FIN's
//!   ([`WindowPolicy::on_close`]). The split is recomputed on each join and leave: flow f's share
//!   is budget · w_f / Σ w over the active flows (w = 1 for every flow with `split = "equal"`).
//! - **Budget accounting**: the moderator remembers the window each active flow last advertised
//!   ([`WindowPolicy::on_advertise`]). Because an offered right edge is never retracted
//!   (RFC 9293 §3.8.6.2.2; the receiver enforces it), a flow may grant only what the others have
//!   not already committed: cap = min(share, budget − Σ others' last windows). This keeps the sum
//!   within the budget when several SYNs arrive together (a web page's n connections), which a
//!   plain budget/k would not: the first SYN-ACK, built while the flow is still alone, would
//!   already hold the whole budget.
//! - **Rounding**: as Linux rounds any window (`__tcp_select_window`, done by the receiver): with
//!   window scaling the cap is aligned up to the scale unit (2^shift bytes), without it rounded down
//!   to whole MSS; it is never below one segment, so no connection is stalled behind a zero window
//!   (which only the sender's persist timer could reopen). The floor and the alignment are the only
//!   ways the sum exceeds the budget: by at most one MSS (or one scale unit) per active flow.
//! - **`mechanism`**: `Window` (the above: the budget is advertised window) or `SoRcvbuf` (the
//!   budget is receive buffer, as a Linux host implements the moderation and as the testbed does:
//!   each connection gets SO_RCVBUF = its share, before the SYN and again at every re-split, and
//!   its receiver then offers what Linux's arithmetic gives for that buffer, `rcvbuf.rs`; e.g.
//!   SO_RCVBUF 20000 → a 40000 B buffer → 16–17 segments of 1448 B). `cap` is then unlimited.
//! - **`from_syn`**: when true the SYN-ACK already carries the capped window, which caps the
//!   sender's initial window burst; when false the cap applies from the handshake's completion
//!   ([`WindowPolicy::on_established`]) and the SYN-ACK carries the normal window of a Linux
//!   receiver, its initial receive window of 10 segments ([`LINUX_INIT_RCVWND`]), as with the
//!   slides' moderation, which leaves the IW burst open.
//! - **`only_with_media`**: the cap applies only while a media flow is being received by the host:
//!   a media packet arrived within `media_idle` (the host's media sinks update a shared
//!   [`MediaPresence`]). Otherwise every connection advertises its normal window.
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::WindowPolicy;
use crate::time::Time;

/// Linux's initial receive window in segments (TCP_DEFAULT_INIT_RCVWND), the SYN-ACK window when
/// the moderation starts after the handshake (`from_syn = false`).
pub const LINUX_INIT_RCVWND: u64 = 10;

/// When a media packet last arrived at a host (shared between its media sinks and its moderator).
pub type MediaPresence = Rc<Cell<Option<Time>>>;

/// Settings of a host's moderator (`[hosts.NAME.rwnd]`).
#[derive(Clone, Debug, PartialEq)]
pub struct ModerationConfig {
    /// Total window budget over the host's active connections, bytes.
    pub budget: u64,
    /// Apply the cap to the SYN-ACK already (else from the end of the handshake).
    pub from_syn: bool,
    /// Apply only while media arrives at the host.
    pub only_with_media: bool,
    /// How long after the last media packet the host still counts as receiving media.
    pub media_idle: Time,
    /// What the budget bounds: advertised window, or SO_RCVBUF (see the module docs).
    pub mechanism: Mechanism,
}

/// What a moderation budget bounds (scenario key `mechanism`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Mechanism {
    /// The advertised windows (WiBrA's formulation).
    #[default]
    Window,
    /// Each connection's SO_RCVBUF (how a Linux host and the testbed implement it).
    SoRcvbuf,
}

impl Default for ModerationConfig {
    fn default() -> Self {
        ModerationConfig { budget: 20_000, from_syn: true, only_with_media: false, media_idle: Time::from_ms(500), mechanism: Mechanism::Window }
    }
}

#[derive(Clone, Debug)]
struct FlowInfo {
    weight: f64,
    mss: u64,
    /// When the connection opens (its SYN is sent), if the builder said.
    start: Option<Time>,
}

#[derive(Clone, Debug)]
struct Active {
    established: bool,
    /// The window last advertised (bytes beyond RCV.NXT at the time).
    last: u64,
}

/// One host's moderator; share it between the host's receivers as a
/// [`SharedWindowPolicy`](super::SharedWindowPolicy).
#[derive(Debug)]
pub struct Moderator {
    pub cfg: ModerationConfig,
    /// Weight and MSS per flow id (registered by the workload builders; unknown flows: 1, 1460).
    flows: BTreeMap<u32, FlowInfo>,
    active: BTreeMap<u32, Active>,
    media: Option<MediaPresence>,
    /// Joins and leaves seen (each recomputes the split).
    pub recomputations: u64,
    /// Connections whose FIN arrived.
    closed: std::collections::BTreeSet<u32>,
}

impl Moderator {
    pub fn new(cfg: ModerationConfig) -> Moderator {
        Moderator { cfg, flows: BTreeMap::new(), active: BTreeMap::new(), media: None, recomputations: 0, closed: Default::default() }
    }

    /// Declares a connection to this host: its weight in a weighted split and its MSS (rounding).
    pub fn register(&mut self, flow: u32, weight: f64, mss: u32) {
        self.flows.insert(flow, FlowInfo { weight, mss: mss.max(1) as u64, start: None });
    }

    /// When connection `flow` opens: with `SoRcvbuf`, connections opening at the same instant
    /// share from their SYNs on (the testbed opens them together and sets their SO_RCVBUF before
    /// connecting).
    pub fn set_start(&mut self, flow: u32, start: Time) {
        if let Some(f) = self.flows.get_mut(&flow) {
            f.start = Some(start);
        }
    }

    /// Where the host's media sinks record arrivals (needed by `only_with_media`).
    pub fn set_media(&mut self, m: MediaPresence) { self.media = Some(m); }

    /// Connections active now (SYN arrived, FIN not yet).
    pub fn active(&self) -> usize { self.active.len() }

    fn info(&self, flow: u32) -> FlowInfo { self.flows.get(&flow).cloned().unwrap_or(FlowInfo { weight: 1.0, mss: 1460, start: None }) }

    /// The current share of `flow` before accounting and rounding: budget · w_f / Σ w (active).
    pub fn share(&self, flow: u32) -> u64 {
        let total: f64 = self.active.keys().map(|f| self.info(*f).weight).sum();
        let w = self.info(flow).weight;
        if total <= 0.0 {
            return self.cfg.budget;
        }
        ((self.cfg.budget as f64) * w / total).floor() as u64
    }

    /// Whether the cap applies at `now` (always, unless `only_with_media`).
    pub fn engaged(&self, now: Time) -> bool {
        if !self.cfg.only_with_media {
            return true;
        }
        match self.media.as_ref().and_then(|m| m.get()) {
            Some(t) => now.saturating_sub(t) <= self.cfg.media_idle,
            None => false,
        }
    }
}

impl WindowPolicy for Moderator {
    fn on_open(&mut self, flow: u32, _now: Time) {
        if self.active.insert(flow, Active { established: false, last: 0 }).is_none() {
            self.recomputations += 1;
        }
    }
    fn on_established(&mut self, flow: u32, _now: Time) {
        if let Some(a) = self.active.get_mut(&flow) {
            a.established = true;
        }
    }
    fn on_close(&mut self, flow: u32, _now: Time) {
        if self.active.remove(&flow).is_some() {
            self.recomputations += 1;
        }
        self.closed.insert(flow);
    }
    fn on_advertise(&mut self, flow: u32, wnd: u64, _now: Time) {
        if let Some(a) = self.active.get_mut(&flow) {
            a.last = wnd;
        }
    }
    fn so_rcvbuf(&mut self, flow: u32, now: Time) -> Option<u64> {
        if self.cfg.mechanism != Mechanism::SoRcvbuf || !self.engaged(now) || !self.active.contains_key(&flow) {
            return None;
        }
        // The testbed's share: budget // (active + those opening with this one), at least 1 B.
        let start = self.info(flow).start;
        let pending = self
            .flows
            .iter()
            .filter(|(f, i)| start.is_some() && i.start == start && !self.active.contains_key(f) && !self.closed.contains(f))
            .count() as u64;
        let w: f64 = self.active.keys().map(|f| self.info(*f).weight).sum::<f64>() + pending as f64;
        let share = ((self.cfg.budget as f64) * self.info(flow).weight / w.max(1e-9)).floor() as u64;
        Some(share.max(1))
    }
    fn cap(&mut self, flow: u32, now: Time, free: u64) -> u64 {
        if self.cfg.mechanism == Mechanism::SoRcvbuf {
            return free;
        }
        // A closed connection (its FIN arrived; the FIN-ACK asks) has nothing more to send.
        let Some(a) = self.active.get(&flow) else { return self.info(flow).mss };
        if !self.engaged(now) {
            return free;
        }
        if !self.cfg.from_syn && !a.established {
            // The SYN-ACK carries the normal (unmoderated) window of a Linux receiver: its initial
            // receive window of TCP_INIT_RCVWND segments (`tcp_select_initial_window`). Our receiver
            // would otherwise offer its whole buffer (up to 65535 B unscaled), which holds a whole
            // 62 kB web object and would leave such flows unmoderated for their entire life.
            return free.min(LINUX_INIT_RCVWND * self.info(flow).mss);
        }
        let others: u64 = self.active.iter().filter(|(f, _)| **f != flow).map(|(_, a)| a.last).sum();
        let room = self.cfg.budget.saturating_sub(others);
        let mss = self.info(flow).mss;
        let grant = self.share(flow).min(room);
        // The receiver rounds as Linux does (scale unit up, or whole MSS down); here only the floor.
        grant.max(mss).min(free.max(mss))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time { Time::from_ms(ms) }

    #[test]
    fn equal_split_recomputed_on_join_and_leave() {
        let mut m = Moderator::new(ModerationConfig { budget: 30_000, ..Default::default() });
        for f in 0..3 {
            m.register(f, 1.0, 1000);
        }
        m.on_open(0, t(0));
        assert_eq!(m.cap(0, t(0), 1 << 20), 30_000);
        m.on_advertise(0, 10_000, t(0));
        m.on_open(1, t(1));
        m.on_open(2, t(1));
        assert_eq!(m.share(0), 10_000);
        // flow 0 holds 10 kB: the others may split the rest, each at most its share
        assert_eq!(m.cap(1, t(1), 1 << 20), 10_000);
        m.on_close(2, t(2));
        assert_eq!(m.share(1), 15_000);
        assert_eq!(m.recomputations, 4);
    }

    #[test]
    fn committed_windows_bound_the_grant_with_a_one_segment_floor() {
        let mut m = Moderator::new(ModerationConfig { budget: 20_000, ..Default::default() });
        m.register(0, 1.0, 1460);
        m.register(1, 1.0, 1460);
        m.on_open(0, t(0));
        let w0 = m.cap(0, t(0), 1 << 20);
        assert_eq!(w0, 20_000, "the whole share: the receiver rounds it as Linux");
        // what the receiver offered with 64-byte scale units: 20000 aligned up
        m.on_advertise(0, 20_032, t(0));
        m.on_open(1, t(0));
        // nothing left of the budget: the floor of one MSS
        assert_eq!(m.cap(1, t(0), 1 << 20), 1460);
        // the buffer's free space still bounds the cap (but never below a segment)
        assert_eq!(m.cap(0, t(0), 5000), 5000);
    }

    #[test]
    fn weights_after_syn_and_media_presence() {
        let media: MediaPresence = Rc::new(Cell::new(None));
        let mut m = Moderator::new(ModerationConfig { budget: 30_000, from_syn: false, only_with_media: true, media_idle: t(100), ..Default::default() });
        m.set_media(media.clone());
        m.register(0, 2.0, 1000);
        m.register(1, 1.0, 1000);
        m.on_open(0, t(0));
        m.on_open(1, t(0));
        assert_eq!(m.share(0), 20_000);
        assert_eq!(m.share(1), 10_000);
        media.set(Some(t(0)));
        // handshake not complete (from_syn = false): Linux's initial receive window, not the budget
        assert_eq!(m.cap(0, t(10), 1 << 20), 10 * 1000);
        m.on_established(0, t(10));
        assert_eq!(m.cap(0, t(10), 1 << 20), 20_000);
        // no media for longer than media_idle: not capped
        assert_eq!(m.cap(0, t(200), 1 << 20), 1 << 20);
    }

    #[test]
    fn so_rcvbuf_mechanism_gives_shares_not_caps() {
        let mut m = Moderator::new(ModerationConfig { budget: 20_000, mechanism: Mechanism::SoRcvbuf, ..Default::default() });
        for f in 0..6 {
            m.register(f, 1.0, 1448);
            m.set_start(f, t(0));
        }
        // opening together: the first SYN already gets the testbed's 20000 // 6 = 3333
        m.on_open(0, t(0));
        assert_eq!(m.so_rcvbuf(0, t(0)), Some(3333));
        for f in 1..6 {
            m.on_open(f, t(0));
        }
        assert_eq!(m.so_rcvbuf(0, t(0)), Some(3333));
        assert_eq!(m.cap(0, t(0), 77_777), 77_777);
        m.on_close(5, t(1));
        assert_eq!(m.so_rcvbuf(0, t(1)), Some(4000));
        assert_eq!(m.so_rcvbuf(5, t(1)), None, "closed");
    }
}
