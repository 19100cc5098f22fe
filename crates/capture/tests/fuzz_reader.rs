//! Fuzzing that keeps going, on stable Rust: a seeded mutation loop over the seed corpus in
//! `fuzz/corpus/pcap/` (pcap µs/ns, pcapng, gzip), run as an ordinary test with a time and
//! iteration bound, so CI runs it every time (cargo-fuzz needs nightly). Each mutant goes through
//! the reader and the frame decoder; every 16th also through the whole pair analysis from files.
//! Fails on a panic (the harness reports it with the seed and iteration to replay) or on an input
//! that takes longer than `SLOW` (a hang).
//!
//! Longer runs: `JITTERLAB_FUZZ_SECS=600 JITTERLAB_FUZZ_SEED=7 cargo test --release -p
//! jitterlab-capture --test fuzz_reader`.
use std::io::Cursor;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use jitterlab_capture::{analyze, wire, CaptureError, CaptureReader, Options};

const SLOW: Duration = Duration::from_secs(2);

fn env_u64(k: &str, d: u64) -> u64 { std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d) }

/// xorshift64*: a fixed, dependency-free generator so a failure replays from (seed, iteration).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize { if n == 0 { 0 } else { (self.next() % n as u64) as usize } }
}

const INTERESTING: &[u8] = &[0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff];

/// One to four mutations: bit flips, interesting bytes, 32-bit boundary values (lengths!),
/// truncation, insertion, chunk duplication, splicing with another corpus entry.
fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let n = v.len();
        match rng.below(8) {
            0 if n > 0 => {
                let i = rng.below(n);
                v[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n);
                v[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 if n >= 4 => {
                let i = rng.below(n - 3);
                let val: u32 = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0xffff, 65536, (n as u32).wrapping_mul(2)][rng.below(8)];
                let b = if rng.below(2) == 0 { val.to_le_bytes() } else { val.to_be_bytes() };
                v[i..i + 4].copy_from_slice(&b);
            }
            3 => v.truncate(rng.below(n + 1)),
            4 => {
                let i = rng.below(n + 1);
                let k = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..k).map(|_| rng.next() as u8).collect();
                v.splice(i..i, bytes);
            }
            5 if n > 0 => {
                let a = rng.below(n);
                let len = 1 + rng.below((n - a).min(64));
                let chunk = v[a..a + len].to_vec();
                let at = rng.below(n + 1);
                v.splice(at..at, chunk);
            }
            6 => {
                let other = &corpus[rng.below(corpus.len())];
                let cut = rng.below(n + 1);
                let from = rng.below(other.len() + 1);
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            _ => {}
        }
    }
    v
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/pcap");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// Reads every frame and decodes it; returns (frames, the error that ended the file).
fn read_all(data: Vec<u8>) -> (usize, Option<CaptureError>) {
    let mut r = match CaptureReader::from_reader(Box::new(Cursor::new(data))) {
        Ok(r) => r,
        Err(e) => return (0, Some(e)),
    };
    let mut n = 0;
    let mut err = None;
    loop {
        match r.next_frame() {
            Ok(Some(f)) => {
                let _ = wire::decode(f.linktype, f.data, f.offset);
                n += 1;
            }
            Ok(None) => break,
            Err(CaptureError::NoTimestamp { .. }) => {}
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    (n, err)
}

#[test]
fn seed_corpus_reads_cleanly() {
    for (name, data) in corpus() {
        let (n, err) = read_all(data);
        assert!(err.is_none() && n >= 3, "{name}: {n} frames, {err:?}");
    }
}

#[test]
fn mutated_captures_never_panic_or_hang() {
    let seeds = corpus();
    let all: Vec<Vec<u8>> = seeds.iter().map(|(_, d)| d.clone()).collect();
    let seed = env_u64("JITTERLAB_FUZZ_SEED", 0x6a69_7474_6572);
    let budget = Duration::from_secs(env_u64("JITTERLAB_FUZZ_SECS", 3));
    let max_iters = env_u64("JITTERLAB_FUZZ_ITERS", 200_000);
    let mut rng = Rng(seed);
    let dir = std::env::temp_dir().join(format!("jitterlab-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.pcap");
    std::fs::write(&good, &all[seeds.iter().position(|(n, _)| n == "rtp_ns.pcap").unwrap()]).unwrap();
    let start = Instant::now();
    let (mut iters, mut errors, mut with_offset) = (0u64, 0u64, 0u64);
    while iters < max_iters && start.elapsed() < budget {
        let base = &all[rng.below(all.len())];
        let m = mutate(&mut rng, base, &all);
        let t = Instant::now();
        let (_, err) = read_all(m.clone());
        if let Some(e) = err {
            errors += 1;
            // file-content errors name where they happened
            if e.to_string().contains("byte") {
                with_offset += 1;
            }
        }
        if iters % 16 == 0 {
            let f = dir.join("mutant.pcap");
            std::fs::write(&f, &m).unwrap();
            let _ = analyze(f.to_str().unwrap(), good.to_str().unwrap(), &Options::default(), None);
            let _ = analyze(good.to_str().unwrap(), f.to_str().unwrap(), &Options::default(), None);
        }
        assert!(t.elapsed() < SLOW, "seed {seed:#x} iteration {iters}: one input took {:?}", t.elapsed());
        iters += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("fuzz_reader: {iters} mutants in {:.1?}, {errors} ended in an error ({with_offset} naming a byte offset)", start.elapsed());
    assert!(iters >= 100, "only {iters} mutants ran");
    // Most errors are file-content errors and must carry the byte offset (gzip damage is reported
    // by flate2 without one, hence not all).
    assert!(with_offset * 10 >= errors * 8, "{with_offset} of {errors} errors name a byte offset");
}
