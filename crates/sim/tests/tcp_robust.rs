//! The protocol cores never panic, whatever arrives: random headers (bogus ACK numbers, SACK
//! blocks out of range or reversed, stray flags, huge sequence numbers) fed in random order with
//! timer expiries in between. Deterministic (seeded), so a failure reproduces.
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::rng::Rng;
use jitterlab_sim::tcp::receiver::{Receiver, RecvOutput};
use jitterlab_sim::tcp::sender::{Output, Sender};
use jitterlab_sim::tcp::{Recovery, TcpConfig};
use jitterlab_sim::Time;

fn pick(r: &mut Rng, around: u64) -> u64 {
    match r.next_u64() % 6 {
        0 => 0,
        1 => u64::MAX - r.next_u64() % 3,
        2 => around.saturating_sub(r.next_u64() % 5000),
        3 => around.saturating_add(r.next_u64() % 5000),
        _ => r.next_u64() % 200_000,
    }
}

fn header(r: &mut Rng, around: u64) -> TcpHeader {
    let mut h = TcpHeader {
        seq: pick(r, around),
        ack: pick(r, around),
        flags: (r.next_u64() & 0xff) as u8,
        wnd: pick(r, 100_000),
        len: (r.next_u64() % 3000) as u32,
        nsack: (r.next_u64() % 6) as u8,
        wscale: if r.uniform() < 0.5 { Some((r.next_u64() % 20) as u8) } else { None },
        ..Default::default()
    };
    for b in h.sack.iter_mut() {
        *b = (pick(r, around), pick(r, around));
    }
    h
}

#[test]
fn sender_survives_random_segments() {
    for (seed, recovery) in [(1, Recovery::Sack), (2, Recovery::NewReno)] {
        let mut r = Rng::stream(seed, "fuzz");
        let cfg = TcpConfig { mss: 1000, recovery, ecn: true, pacing: seed == 1, ..TcpConfig::default() };
        let mut s = Sender::new(cfg, Some(300_000));
        let mut out = Output::default();
        let mut now = Time::ZERO;
        s.connect(now, &mut out);
        // A proper SYN-ACK half of the time, so the established states get exercised too.
        let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK | F::ECE, wnd: 65_535, wscale: Some(3), ..Default::default() };
        s.process(&synack, now, &mut out);
        for _ in 0..200_000 {
            now += Time::from_us(r.next_u64() % 2000);
            match r.next_u64() % 10 {
                0 => s.on_rto(now, &mut out),
                1 => s.on_pace(now, &mut out),
                2..=5 => {
                    // A plausible ACK near SND.UNA with SACK blocks inside the window.
                    let una = s.snd_una;
                    let mut h = TcpHeader { ack: una + (r.next_u64() % 4) * 1000, flags: F::ACK, wnd: 60_000, ..Default::default() };
                    h.nsack = (r.next_u64() % 4) as u8;
                    for i in 0..h.nsack as usize {
                        let a = una + (r.next_u64() % 40) * 1000;
                        h.sack[i] = (a, a + (1 + r.next_u64() % 5) * 1000);
                    }
                    if r.uniform() < 0.1 {
                        h.flags |= F::ECE;
                    }
                    s.process(&h, now, &mut out);
                }
                _ => {
                    let h = header(&mut r, s.snd_una);
                    s.process(&h, now, &mut out);
                }
            }
            assert!(s.snd_una <= s.snd_nxt);
            out.segs.clear();
        }
    }
}

#[test]
fn receiver_survives_random_segments() {
    let mut r = Rng::stream(3, "fuzz");
    let mut rc = Receiver::new(TcpConfig { ecn: true, rcvbuf: 100_000, ..TcpConfig::default() }, 0, None);
    let mut out = RecvOutput::default();
    let mut now = Time::ZERO;
    let syn = TcpHeader { seq: 0, flags: F::SYN | F::ECE | F::CWR, wscale: Some(0), ..Default::default() };
    rc.process(&syn, false, now, &mut out);
    for _ in 0..200_000 {
        now += Time::from_us(r.next_u64() % 2000);
        if r.next_u64().is_multiple_of(10) {
            rc.on_delack(now, &mut out);
        } else if r.uniform() < 0.6 {
            // Data near RCV.NXT, in and out of order.
            let nxt = rc.rcv_nxt;
            let h = TcpHeader { seq: nxt + (r.next_u64() % 8) * 1000, ack: 1, flags: F::ACK, len: 1000, ..Default::default() };
            rc.process(&h, r.uniform() < 0.05, now, &mut out);
        } else {
            let h = header(&mut r, rc.rcv_nxt);
            rc.process(&h, r.uniform() < 0.1, now, &mut out);
        }
        for a in &out.segs {
            assert!(a.nsack as usize <= 4);
            for b in &a.sack[..a.nsack as usize] {
                assert!(b.0 < b.1 && b.0 > rc.rcv_nxt.min(a.ack));
            }
        }
        out.segs.clear();
    }
}
