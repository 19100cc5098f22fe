//! Times the reader alone, decode alone and the full analysis on a capture pair.
//!
//!     cargo run --release -p jitterlab-capture --example capture_timing -- SENDER RECEIVER [T0_NS]
use std::time::Instant;

use jitterlab_capture::{analyze, wire, CaptureReader, Options};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (s, r) = (&args[1], &args[2]);
    let t0 = args.get(3).map(|x| x.parse().unwrap());
    for _ in 0..3 {
        let t = Instant::now();
        let mut n = 0u64;
        let mut acc = 0u64;
        for p in [s, r] {
            let mut rd = CaptureReader::open(p).unwrap();
            while let Ok(Some(f)) = rd.next_frame() {
                n += 1;
                acc = acc.wrapping_add(f.data.len() as u64);
            }
        }
        let read = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for p in [s, r] {
            let mut rd = CaptureReader::open(p).unwrap();
            while let Ok(Some(f)) = rd.next_frame() {
                if let Ok(d) = wire::decode(f.linktype, f.data, f.offset) {
                    acc = acc.wrapping_add(d.ip_len as u64);
                }
            }
        }
        let dec = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let opt = Options { t0_ns: t0, ..Default::default() };
        let a = analyze(s, r, &opt, None).unwrap();
        let an = t.elapsed().as_secs_f64();
        println!(
            "{n} frames: read {read:.3} s ({:.1} M/s), read+decode {dec:.3} s, analyze {an:.3} s ({:.1} M/s) [{} rows, {acc}]",
            n as f64 / read / 1e6,
            n as f64 / an / 1e6,
            a.media.seq.len()
        );
    }
}
