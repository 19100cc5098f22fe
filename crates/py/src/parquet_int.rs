//! The Int64, Boolean and text columns of a Parquet image encoded here, not by arrow-rs' column writer: the same
//! encoding (version-1 data pages, DELTA_BINARY_PACKED values, RLE definition levels, snappy,
//! the chunk's min/max/null-count statistics), at a fraction of its cost a value. arrow-rs spends
//! ~8 ns a value on an Int64 column whatever its deltas (a run's media table: 6 such columns, 75 %
//! of encoding it), most of it per-value generic code: levels built and gathered one by one, a
//! bit writer called per value, statistics compared per value. Here a column is a slice: its
//! definition levels are its validity bitmap as a bit-packed run (or one RLE run when it has no
//! nulls), the deltas of a block are packed 64 at a time with a width computed once. The layout
//! follows the Parquet format's Encodings.md (DELTA_BINARY_PACKED: 256-value blocks of four
//! 64-value miniblocks, as arrow-rs writes INT64, the last block's unused miniblocks given width 0 and no bytes; the
//! RLE/bit-packing hybrid) and its DataPage v1 (levels length-prefixed, the page compressed whole).
//! Over 600 lines: its unit tests (the last ~170 lines, with `pack_by_value`), reference encoders written step by step
//! against which the fast ones are pinned byte for byte, sit beside them.
use std::sync::Arc;

use std::collections::HashMap;

use arrow_array::{Array, BooleanArray, Int64Array, StringArray};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, PageType, Type as PhysicalType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::data_type::ByteArray;
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ColumnChunkMetaData, PageEncodingStats};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// Rows a data page at most (arrow-rs' default `data_page_row_count_limit`).
pub const PAGE_ROWS: usize = 20_000;
/// DELTA_BINARY_PACKED's block for INT64: 256 values in 4 miniblocks of 64 (what arrow-rs writes).
const BLOCK: usize = 256;
const MINI: usize = 64;

/// Whether `encode_column` writes a column of `descr` holding `array`: a flat (non-repeated) INT64
/// leaf fed by an Int64 array, a BOOLEAN one fed by a Boolean array, or a BYTE_ARRAY one fed by a
/// Utf8 array (dictionary-encoded; `encode_column` declines one whose values it would have to
/// truncate in the statistics or whose dictionary outgrows a page: arrow-rs' writer then takes it).
pub fn handles(descr: &ColumnDescPtr, array: &dyn Array) -> bool {
    let typed = match descr.physical_type() {
        PhysicalType::INT64 => array.as_any().is::<Int64Array>(),
        PhysicalType::BOOLEAN => array.as_any().is::<BooleanArray>(),
        PhysicalType::BYTE_ARRAY => array.as_any().is::<StringArray>(),
        _ => false,
    };
    typed && descr.max_rep_level() == 0 && descr.max_def_level() <= 1 && (descr.max_def_level() == 1 || array.null_count() == 0)
}

fn uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn zigzag(v: i64) -> u64 { ((v << 1) ^ (v >> 63)) as u64 }

/// MINI values less `min` (wrapping), of at most `w` bits each then, bit-packed least
/// significant bit first (MINI·w/8 bytes), by `pack_fixed` for that width.
fn pack(out: &mut Vec<u8>, v: &[u64; MINI], min: u64, w: u32) {
    macro_rules! by_width {
        ($($k:literal),*) => {
            match w {
                0 => {}
                $($k => pack_fixed::<$k>(out, v, min),)*
                _ => unreachable!("a width of 0 to 64 bits"),
            }
        };
    }
    by_width!(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64);
}

/// `pack` at a width known when compiled: each value's word and shift are constants, so the 64
/// values become straight-line shifts and ors (no branch a value, as a width read at run time needs).
#[inline(always)]
fn pack_fixed<const W: usize>(out: &mut Vec<u8>, v: &[u64; MINI], min: u64) {
    let mut words = [0u64; W];
    // written out value by value (a loop of 64 is not unrolled by the compiler): constant words and shifts
    macro_rules! put {
        ($($i:literal),*) => {$({
            let (word, off) = ($i * W / 64, $i * W % 64);
            let x = v[$i].wrapping_sub(min);
            words[word] |= x << off;
            if off + W > 64 {
                // the bits of the value that did not fit
                words[word + 1] |= x >> (64 - off);
            }
        })*};
    }
    put!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63);
    // the words' bytes appended at once (no zeroed room written over, no check a word)
    #[cfg(target_endian = "little")]
    // SAFETY: W initialised u64s are W·8 initialised bytes, their little-endian order on this target
    out.extend_from_slice(unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), W * 8) });
    #[cfg(not(target_endian = "little"))]
    for x in &words {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// `pack` a value at a time, with a branch a word (what `pack` replaced; the tests compare them).
#[cfg(test)]
fn pack_by_value(out: &mut Vec<u8>, v: &[u64; MINI], w: u32) {
    if w == 0 {
        return;
    }
    let start = out.len();
    out.resize(start + MINI / 8 * w as usize, 0);
    let buf = &mut out[start..];
    if w == 64 {
        for (c, x) in buf.chunks_exact_mut(8).zip(v) {
            c.copy_from_slice(&x.to_le_bytes());
        }
        return;
    }
    let (mut acc, mut bits, mut pos) = (0u64, 0u32, 0usize);
    for &x in v {
        acc |= x << bits;
        let next = bits + w;
        if next >= 64 {
            buf[pos..pos + 8].copy_from_slice(&acc.to_le_bytes());
            pos += 8;
            // the bits of x that did not fit
            acc = if bits == 0 { 0 } else { x >> (64 - bits) };
            bits = next - 64;
        } else {
            bits = next;
        }
    }
    // MINI·w bits: none left when MINI = 64 (32 would leave 0 or 32)
    if bits > 0 {
        buf[pos..pos + 4].copy_from_slice(&(acc as u32).to_le_bytes());
    }
}

/// `v` DELTA_BINARY_PACKED (wrapping arithmetic, as readers decode it); returns the least and
/// greatest of `v` (None when empty), found in the same pass (the chunk's statistics).
pub fn delta_binary_packed(out: &mut Vec<u8>, v: &[i64]) -> Option<(i64, i64)> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl") {
        // SAFETY: the CPU has AVX-512 F and VL (checked just above)
        return unsafe { delta_binary_packed_avx512(out, v) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { delta_binary_packed_avx2(out, v) };
    }
    delta_binary_packed_any(out, v, false)
}

/// The module is built for baseline x86-64, whose SSE2 has no 64-bit compare: the blocks' minimum
/// deltas (and the values' least and greatest) then take ~6 instructions a value; AVX2's `vpcmpgtq` one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn delta_binary_packed_avx2(out: &mut Vec<u8>, v: &[i64]) -> Option<(i64, i64)> { delta_binary_packed_any(out, v, false) }

/// AVX-512's `vpminsq`/`vpmaxsq`: a 64-bit least or greatest in one instruction, not AVX2's compare and blend.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2")]
unsafe fn delta_binary_packed_avx512(out: &mut Vec<u8>, v: &[i64]) -> Option<(i64, i64)> { delta_binary_packed_any(out, v, true) }

/// A full block's deltas (of `src`'s BLOCK + 1 values), each miniblock's least and greatest, and
/// the values' least and greatest folded into `lo` and `hi`.
#[cfg(target_arch = "x86_64")]
type FullBlock = unsafe fn(&[i64], &mut [[u64; MINI]; BLOCK / MINI], &mut [i64; BLOCK / MINI], &mut [i64; BLOCK / MINI], &mut i64, &mut i64);

/// `FullBlock` with AVX-512: each value loaded once, the next values' vector shifted in from the
/// following load (`valignq`), where the plain loop loads every value twice, once across two cache lines.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2")]
unsafe fn full_block_avx512(src: &[i64], d: &mut [[u64; MINI]; BLOCK / MINI], lows: &mut [i64; BLOCK / MINI], highs: &mut [i64; BLOCK / MINI], lo: &mut i64, hi: &mut i64) {
    use std::arch::x86_64::*;
    assert_eq!(src.len(), BLOCK + 1);
    let p = src.as_ptr();
    let (mut vlo, mut vhi) = (_mm512_set1_epi64(*lo), _mm512_set1_epi64(*hi));
    let mut cur = _mm512_loadu_si512(p.cast());
    for m in 0..BLOCK / MINI {
        let (mut mn, mut mx) = (_mm512_set1_epi64(i64::MAX), _mm512_set1_epi64(i64::MIN));
        for j in 0..MINI / 8 {
            let at = m * MINI + j * 8;
            // values at + 8 .. at + 16; past the block its one last value
            let following = if at + 8 < BLOCK { _mm512_loadu_si512(p.add(at + 8).cast()) } else { _mm512_set1_epi64(*p.add(BLOCK)) };
            let next = _mm512_alignr_epi64::<1>(following, cur);
            let delta = _mm512_sub_epi64(next, cur);
            _mm512_storeu_si512(d[m].as_mut_ptr().add(j * 8).cast(), delta);
            mn = _mm512_min_epi64(mn, delta);
            mx = _mm512_max_epi64(mx, delta);
            vlo = _mm512_min_epi64(vlo, next);
            vhi = _mm512_max_epi64(vhi, next);
            cur = following;
        }
        lows[m] = _mm512_reduce_min_epi64(mn);
        highs[m] = _mm512_reduce_max_epi64(mx);
    }
    *lo = _mm512_reduce_min_epi64(vlo);
    *hi = _mm512_reduce_max_epi64(vhi);
}

/// The encoding itself; `avx512`: full blocks by `full_block_avx512` (only from
/// `delta_binary_packed_avx512`, whose caller checked the CPU), else by the plain loop below (the
/// tests run both, whatever the CPU, and compare them with the step-by-step encoding).
#[inline(always)]
fn delta_binary_packed_any(out: &mut Vec<u8>, v: &[i64], avx512: bool) -> Option<(i64, i64)> {
    #[cfg(target_arch = "x86_64")]
    let full_block: Option<FullBlock> = avx512.then_some(full_block_avx512 as FullBlock);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = avx512;
    uleb(out, BLOCK as u64);
    uleb(out, (BLOCK / MINI) as u64);
    uleb(out, v.len() as u64);
    uleb(out, zigzag(v.first().copied().unwrap_or(0)));
    let (mut lo, mut hi) = match v.first() {
        Some(&x) => (x, x),
        None => return None,
    };
    let mut d = [[0u64; MINI]; BLOCK / MINI];
    let mut first = 0;
    while first + 1 < v.len() {
        // the block's deltas: of values first..=first + n
        let n = (v.len() - 1 - first).min(BLOCK);
        let src = &v[first..=first + n];
        first += n;
        // a miniblock at a time: its deltas, their least and greatest (its width is the bit length of
        // greatest − least of the block: the top bit of the relative deltas' OR is the greatest's)
        let mut lows = [i64::MAX; BLOCK / MINI];
        let mut highs = [i64::MIN; BLOCK / MINI];
        // the miniblocks a `FullBlock` did
        #[allow(unused_mut)]
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if let (Some(f), true) = (full_block, n == BLOCK) {
            // SAFETY: `full_block` is set only where its target features are present
            unsafe { f(src, &mut d, &mut lows, &mut highs, &mut lo, &mut hi) };
            done = BLOCK / MINI;
        }
        for (m, dst) in d.iter_mut().enumerate().take(n.div_ceil(MINI)).skip(done) {
            let k = (n - m * MINI).min(MINI);
            // slices of one length, not windows: the loop vectorises
            let (prev, next, dst) = (&src[m * MINI..m * MINI + k], &src[m * MINI + 1..m * MINI + 1 + k], &mut dst[..k]);
            let (mut mn, mut mx) = (i64::MAX, i64::MIN);
            for i in 0..k {
                let delta = next[i].wrapping_sub(prev[i]);
                dst[i] = delta as u64;
                mn = mn.min(delta);
                mx = mx.max(delta);
                lo = lo.min(next[i]);
                hi = hi.max(next[i]);
            }
            lows[m] = mn;
            highs[m] = mx;
        }
        let min = lows.iter().copied().min().expect("four miniblocks");
        // the last miniblock's padding: relative delta 0
        d.as_flattened_mut()[n..].fill(min as u64);
        uleb(out, zigzag(min));
        let minis = n.div_ceil(MINI);
        let mut widths = [0u8; BLOCK / MINI];
        for (w, h) in widths.iter_mut().zip(&highs).take(minis) {
            *w = (64 - (*h as u64).wrapping_sub(min as u64).leading_zeros()) as u8;
        }
        out.extend_from_slice(&widths);
        for (w, m) in widths.iter().zip(&d).take(minis) {
            pack(out, m, min as u64, u32::from(*w));
        }
    }
    Some((lo, hi))
}

/// Definition levels (bit width 1) of `a`'s rows as a DataPage v1 section: a 4-byte length, then
/// one RLE run of 1s without nulls, or one bit-packed run that is the validity bitmap.
fn def_levels(out: &mut Vec<u8>, a: &dyn Array) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    match a.nulls().filter(|n| n.null_count() > 0) {
        None => {
            uleb(out, (a.len() as u64) << 1);
            out.push(1);
        }
        Some(nulls) => {
            let groups = a.len().div_ceil(8);
            uleb(out, ((groups as u64) << 1) | 1);
            let bits = nulls.inner().sliced();
            let start = out.len();
            out.extend_from_slice(&bits.as_slice()[..groups]);
            if !a.len().is_multiple_of(8) {
                // the last group's padding levels: 0
                out[start + groups - 1] &= (1u8 << (a.len() % 8)) - 1;
            }
        }
    }
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// The values of a page (its rows' non-null ones) encoded after its levels, the chunk's min and
/// max updated: Int64 DELTA_BINARY_PACKED, Boolean PLAIN (bit-packed, least significant first).
enum Values {
    Int64 { min: Option<i64>, max: Option<i64>, gathered: Vec<i64> },
    Boolean { min: Option<bool>, max: Option<bool> },
    /// Text: the chunk's dictionary (its PLAIN page), each non-null value's index into it in row
    /// order (the pages take them in turn from `next`), and the chunk's min and max.
    Dict { page: Vec<u8>, entries: usize, indices: Vec<u64>, next: usize, min: Option<Vec<u8>>, max: Option<Vec<u8>> },
}

/// Longest value kept whole in arrow-rs' statistics (its `statistics_truncate_length`, 64 bytes):
/// a column with a longer one is left to arrow-rs, which truncates.
const STATS_BYTES: usize = 64;
/// A dictionary page at most (arrow-rs' `dictionary_page_size_limit`, past which it falls back to
/// PLAIN): a larger dictionary is left to arrow-rs.
const DICT_BYTES: usize = 1 << 20;

/// Entries of a dictionary looked up by a scan of the list, past which a hash map is built.
const SCAN_ENTRIES: usize = 16;

/// A text column's `Values::Dict`: its valid rows' values numbered in the order first seen (a
/// PLAIN page of the distinct ones). A row equal to the one before reuses its number, a few
/// distinct values are found by a scan, more through a hash map: the same numbers as a hash map
/// alone, without hashing each row (a per-packet column repeats a handful of names). None when a
/// value is longer than the statistics keep or the dictionary outgrows a page.
fn dictionary(a: &StringArray) -> Option<Values> {
    let (mut page, mut indices) = (Vec::new(), Vec::with_capacity(a.len() - a.null_count()));
    let mut entries: Vec<&[u8]> = Vec::new();
    let mut seen: HashMap<&[u8], u64> = HashMap::new();
    let (mut min, mut max): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    let mut last: Option<(&[u8], u64)> = None;
    // the valid rows only, a run of them at a time: a per-packet text column is mostly null (where a packet was lost)
    let runs: Vec<(usize, usize)> = match a.nulls() {
        Some(n) if n.null_count() > 0 => n.inner().set_slices().collect(),
        _ => vec![(0, a.len())],
    };
    for (lo, hi) in runs {
        for r in lo..hi {
            let v = a.value(r).as_bytes();
            if v.len() > STATS_BYTES {
                return None;
            }
            let i = match last {
                Some((lv, li)) if lv == v => li,
                _ => {
                    let found = if entries.len() <= SCAN_ENTRIES { entries.iter().position(|&e| e == v).map(|p| p as u64) } else { seen.get(v).copied() };
                    match found {
                        Some(i) => i,
                        None => {
                            let i = entries.len() as u64;
                            entries.push(v);
                            if entries.len() > SCAN_ENTRIES {
                                if seen.is_empty() {
                                    seen.extend(entries.iter().enumerate().map(|(k, &e)| (e, k as u64)));
                                } else {
                                    seen.insert(v, i);
                                }
                            }
                            // PLAIN BYTE_ARRAY: a 4-byte length, the bytes
                            page.extend_from_slice(&(v.len() as u32).to_le_bytes());
                            page.extend_from_slice(v);
                            min = Some(min.map_or(v, |m| m.min(v)));
                            max = Some(max.map_or(v, |m| m.max(v)));
                            i
                        }
                    }
                }
            };
            last = Some((v, i));
            indices.push(i);
        }
    }
    if page.len() > DICT_BYTES {
        return None;
    }
    Some(Values::Dict { page, entries: entries.len(), indices, next: 0, min: min.map(<[u8]>::to_vec), max: max.map(<[u8]>::to_vec) })
}

impl Values {
    /// The values' encoder for column `descr` holding `a`; None when `encode_column` declines it.
    fn new(descr: &ColumnDescPtr, a: &dyn Array) -> Option<Values> {
        Some(match descr.physical_type() {
            PhysicalType::BOOLEAN => Values::Boolean { min: None, max: None },
            PhysicalType::INT64 => Values::Int64 { min: None, max: None, gathered: Vec::new() },
            _ => {
                let a = a.as_any().downcast_ref::<StringArray>()?;
                dictionary(a)?
            }
        })
    }

    fn encoding(&self) -> Encoding {
        match self {
            Values::Int64 { .. } => Encoding::DELTA_BINARY_PACKED,
            Values::Boolean { .. } => Encoding::PLAIN,
            Values::Dict { .. } => Encoding::RLE_DICTIONARY,
        }
    }

    fn put(&mut self, buf: &mut Vec<u8>, page: &dyn Array) {
        let nulls = page.nulls().filter(|n| n.null_count() > 0);
        match self {
            Values::Dict { entries, indices, next, .. } => {
                let take = &indices[*next..*next + page.len() - page.null_count()];
                *next += take.len();
                dict_indices(buf, take, *entries);
            }
            Values::Int64 { min, max, gathered } => {
                let page = page.as_any().downcast_ref::<Int64Array>().expect("checked by handles");
                let values: &[i64] = match nulls {
                    None => page.values(),
                    Some(nulls) => {
                        // the valid values, a run of them at a time
                        gathered.clear();
                        gathered.reserve(page.len() - page.null_count());
                        for (s, e) in nulls.inner().set_slices() {
                            gathered.extend_from_slice(&page.values()[s..e]);
                        }
                        gathered
                    }
                };
                if let Some((lo, hi)) = delta_binary_packed(buf, values) {
                    *min = Some(min.map_or(lo, |m| m.min(lo)));
                    *max = Some(max.map_or(hi, |m| m.max(hi)));
                }
            }
            Values::Boolean { min, max } => {
                let page = page.as_any().downcast_ref::<BooleanArray>().expect("checked by handles");
                let bits = match nulls {
                    None => page.values().clone(),
                    Some(nulls) => BooleanArray::from(nulls.inner().set_indices().map(|i| page.value(i)).collect::<Vec<bool>>()).values().clone(),
                };
                let (n, ones) = (bits.len(), bits.count_set_bits());
                if n > 0 {
                    *min = Some(min.unwrap_or(true) && ones == n);
                    *max = Some(max.unwrap_or(false) || ones > 0);
                }
                let start = buf.len();
                buf.extend_from_slice(&bits.sliced().as_slice()[..n.div_ceil(8)]);
                if n % 8 != 0 {
                    // the last byte's padding bits: 0
                    buf[start + n / 8] &= (1u8 << (n % 8)) - 1;
                }
            }
        }
    }

    fn statistics(self, nulls: u64) -> Statistics {
        match self {
            Values::Int64 { min, max, .. } => {
                Statistics::Int64(ValueStatistics::new(min, max, None, Some(nulls), false).with_backwards_compatible_min_max(true))
            }
            // booleans and text sort unsigned: arrow-rs keeps the deprecated min/max fields off for them
            Values::Boolean { min, max } => {
                Statistics::Boolean(ValueStatistics::new(min, max, None, Some(nulls), false).with_backwards_compatible_min_max(false))
            }
            Values::Dict { min, max, .. } => Statistics::ByteArray(
                ValueStatistics::new(min.map(ByteArray::from), max.map(ByteArray::from), None, Some(nulls), false)
                    .with_backwards_compatible_min_max(false),
            ),
        }
    }
}

/// RLE_DICTIONARY values: the indices' bit width (a byte, as arrow-rs sizes it: enough for
/// `entries` - 1), then the RLE/bit-packing hybrid: one RLE run at width 0 (a one-entry
/// dictionary), else one bit-packed run of groups of 8, the last one's padding 0.
fn dict_indices(buf: &mut Vec<u8>, idx: &[u64], entries: usize) {
    let w = 64 - (entries.saturating_sub(1) as u64).leading_zeros();
    buf.push(w as u8);
    if idx.is_empty() {
        return;
    }
    if w == 0 {
        uleb(buf, (idx.len() as u64) << 1);
        return;
    }
    let groups = idx.len().div_ceil(8);
    uleb(buf, ((groups as u64) << 1) | 1);
    let start = buf.len();
    buf.resize(start + groups * w as usize, 0);
    for (k, &i) in idx.iter().enumerate() {
        // w <= 32 bits (at most 2^32 entries) at bit k·w: within the 8 bytes from its first byte
        let bit = k * w as usize;
        let at = start + bit / 8;
        let mut word = [0u8; 8];
        let end = (at + 8).min(buf.len());
        word[..end - at].copy_from_slice(&buf[at..end]);
        let v = u64::from_le_bytes(word) | (i << (bit % 8));
        buf[at..end].copy_from_slice(&v.to_le_bytes()[..end - at]);
    }
}

/// One column chunk of `descr` (see `handles`) holding `a`'s rows: its bytes (offsets from 0) and
/// what `SerializedRowGroupWriter::append_column` needs, with the chunk's statistics.
pub fn encode_column(descr: &ColumnDescPtr, a: &dyn Array) -> Result<Option<(Bytes, ColumnCloseResult)>> {
    let Some(mut values) = Values::new(descr, a) else { return Ok(None) };
    let encoding = values.encoding();
    // room reserved for the pages as they come (no buffer grown and copied page by page): a
    // page's levels and values take at most ~9 bytes a row (8 a delta-packed Int64), snappy's
    // output a sixth more, the chunk about as much as the pages' data
    let room = |rows: usize| rows * 9 + 1024;
    let mut sink = TrackedWrite::new(Vec::with_capacity(room(a.len())));
    let (mut compressed, mut uncompressed, mut first, mut pages) = (0i64, 0i64, None, 0i32);
    let mut snappy = snap::raw::Encoder::new();
    let mut buf = Vec::with_capacity(room(a.len().min(PAGE_ROWS)));
    let mut zbuf = Vec::new();
    // snappy into one buffer reused (`compress_vec` allocates and zeroes its worst case a page),
    // the compressed page copied out
    let mut compress = |data: &[u8]| -> Result<Bytes> {
        let need = snap::raw::max_compress_len(data.len());
        if zbuf.len() < need {
            zbuf.resize(need, 0);
        }
        let n = snappy.compress(data, &mut zbuf).map_err(|e| ParquetError::External(Box::new(e)))?;
        Ok(Bytes::copy_from_slice(&zbuf[..n]))
    };
    let mut encodings = vec![Encoding::RLE, encoding];
    let mut stats = Vec::new();
    let mut dict_offset = None;
    {
        let mut pw = SerializedPageWriter::new(&mut sink);
        if let Values::Dict { page, entries, .. } = &values {
            let dp = Page::DictionaryPage { buf: compress(page)?, num_values: *entries as u32, encoding: Encoding::PLAIN, is_sorted: false };
            let spec = pw.write_page(CompressedPage::new(dp, page.len()))?;
            dict_offset = Some(spec.offset as i64);
            compressed += spec.compressed_size as i64;
            uncompressed += spec.uncompressed_size as i64;
            encodings.push(Encoding::PLAIN);
            stats.push(PageEncodingStats { page_type: PageType::DICTIONARY_PAGE, encoding: Encoding::PLAIN, count: 1 });
        }
        let mut at = 0;
        while at < a.len() {
            let n = (a.len() - at).min(PAGE_ROWS);
            let page = a.slice(at, n);
            at += n;
            buf.clear();
            if descr.max_def_level() == 1 {
                def_levels(&mut buf, page.as_ref());
            }
            values.put(&mut buf, page.as_ref());
            let dp = Page::DataPage { buf: compress(&buf)?, num_values: n as u32, encoding, def_level_encoding: Encoding::RLE,
                                      rep_level_encoding: Encoding::RLE, statistics: None };
            let spec = pw.write_page(CompressedPage::new(dp, buf.len()))?;
            first.get_or_insert(spec.offset as i64);
            compressed += spec.compressed_size as i64;
            uncompressed += spec.uncompressed_size as i64;
            pages += 1;
        }
        pw.close()?;
    }
    // RLE even without levels: arrow-rs lists the pages' level encodings whatever the column
    encodings.sort_by_key(|e| *e as i32);
    stats.push(PageEncodingStats { page_type: PageType::DATA_PAGE, encoding, count: pages });
    let meta = ColumnChunkMetaData::builder(Arc::clone(descr))
        .set_compression(Compression::SNAPPY)
        .set_encodings(encodings)
        .set_page_encoding_stats(stats)
        .set_dictionary_page_offset(dict_offset)
        .set_total_compressed_size(compressed)
        .set_total_uncompressed_size(uncompressed)
        .set_num_values(a.len() as i64)
        .set_data_page_offset(first.unwrap_or(0))
        .set_statistics(values.statistics(a.null_count() as u64))
        .build()?;
    let bytes = sink.bytes_written() as u64;
    let close = ColumnCloseResult { bytes_written: bytes, rows_written: a.len() as u64, metadata: meta, bloom_filter: None,
                                    column_index: None, offset_index: None };
    Ok(Some((Bytes::from(sink.into_inner()?), close)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodings.md's second example (7, 5, 3, 1, 2, 3, 4, 5) in our block layout: header 256, 4,
    /// 8, zigzag(7) = 14; min delta −2 (zigzag 3); relative deltas 0 0 0 3 3 3 3 in 2 bits, least
    /// significant first: 0b11_00_00_00 = 0xC0, 0b00_11_11_11 = 0x3F, then the 64-value miniblock's
    /// 14 zero bytes; the three unused miniblocks' widths 0 and no bytes.
    #[test]
    fn delta_binary_packed_matches_the_format_example() {
        let mut out = Vec::new();
        assert_eq!(delta_binary_packed(&mut out, &[7, 5, 3, 1, 2, 3, 4, 5]), Some((1, 7)));
        let mut want = vec![0x80, 0x02, 4, 8, 14, 3, 2, 0, 0, 0, 0xC0, 0x3F];
        want.extend([0; 14]);
        assert_eq!(out, want);
        // one value: the header alone; none: first value 0
        out.clear();
        assert_eq!(delta_binary_packed(&mut out, &[-1]), Some((-1, -1)));
        assert_eq!(out, vec![0x80, 0x02, 4, 1, 1]);
        out.clear();
        assert_eq!(delta_binary_packed(&mut out, &[]), None);
        assert_eq!(out, vec![0x80, 0x02, 4, 0, 0]);
    }

    /// DELTA_BINARY_PACKED as Encodings.md describes it, a step at a time (each miniblock's width
    /// the bit length of its relative deltas' OR, the last one's padding 0): what the one-pass
    /// encoder (widths from the deltas' greatest, the minimum taken off while packing) must equal.
    fn delta_by_steps(v: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        for x in [BLOCK as u64, (BLOCK / MINI) as u64, v.len() as u64, zigzag(v.first().copied().unwrap_or(0))] {
            uleb(&mut out, x);
        }
        let deltas: Vec<i64> = v.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
        for block in deltas.chunks(BLOCK) {
            let min = *block.iter().min().unwrap();
            uleb(&mut out, zigzag(min));
            let minis: Vec<[u64; MINI]> = block.chunks(MINI).map(|c| std::array::from_fn(|i| c.get(i).map_or(0, |d| d.wrapping_sub(min) as u64))).collect();
            let widths: Vec<u32> = minis.iter().map(|m| 64 - m.iter().fold(0, |a, x| a | x).leading_zeros()).collect();
            out.extend(widths.iter().map(|&w| w as u8));
            out.resize(out.len() + BLOCK / MINI - minis.len(), 0);
            for (m, w) in minis.iter().zip(widths) {
                pack_by_value(&mut out, m, w);
            }
        }
        out
    }

    /// The encoder's bytes are the step-by-step ones: lengths around the block and miniblock
    /// sizes; steady and noisy steps; deltas spanning all 64 bits (i64::MIN next to i64::MAX);
    /// one miniblock's deltas all equal (width 0) beside wide ones; and the values' least and greatest.
    #[test]
    fn delta_binary_packed_equals_the_step_by_step_encoding() {
        let mut x = 99u64;
        let mut rnd = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 11
        };
        for n in [1usize, 2, 63, 64, 65, 66, 129, 256, 257, 258, 300, 513, 1000, 4097] {
            for shape in 0..5 {
                let v: Vec<i64> = (0..n as i64).map(|i| match shape {
                    0 => 1_000 + i * 20_000_000,
                    1 => i * 1_000 + (rnd() % 5_000) as i64,
                    2 => [i64::MIN, i64::MAX, 0, -1][(rnd() % 4) as usize],
                    3 => if (i / 64) % 2 == 0 { 7 * i } else { (rnd() as i64) << (rnd() % 20) },
                    _ => -((rnd() % 3) as i64),
                }).collect();
                let mut out = Vec::new();
                let got = delta_binary_packed(&mut out, &v);
                assert_eq!(out, delta_by_steps(&v), "{n} values, shape {shape}");
                assert_eq!(got, Some((*v.iter().min().unwrap(), *v.iter().max().unwrap())));
                // the plain loop too, on a CPU whose dispatch takes AVX-512 for full blocks
                let mut plain = Vec::new();
                assert_eq!(delta_binary_packed_any(&mut plain, &v, false), got, "{n} values, shape {shape}, plain loop");
                assert_eq!(plain, out, "{n} values, shape {shape}, plain loop");
            }
        }
    }

    /// The dictionary's numbers are those of first sight, as a hash map alone gives them: values
    /// repeated, alternating, nulls between, and more distinct ones than SCAN_ENTRIES (the map
    /// built on the way); its page the distinct values in that order.
    #[test]
    fn dictionary_numbers_values_in_the_order_first_seen() {
        let vals: Vec<Option<String>> = (0..400usize)
            .map(|i| (i % 7 != 3).then(|| format!("n{}", if i < 100 { i % 3 } else { (i * 13) % (SCAN_ENTRIES + 9) })))
            .collect();
        let a = StringArray::from_iter(vals.iter().cloned());
        let Some(Values::Dict { page, entries, indices, .. }) = dictionary(&a) else { panic!("a dictionary expected") };
        let mut seen: HashMap<&str, u64> = HashMap::new();
        let (mut want_page, mut want_idx) = (Vec::new(), Vec::new());
        for v in vals.iter().flatten() {
            let next = seen.len() as u64;
            want_idx.push(*seen.entry(v).or_insert_with(|| {
                want_page.extend_from_slice(&(v.len() as u32).to_le_bytes());
                want_page.extend_from_slice(v.as_bytes());
                next
            }));
        }
        assert!(seen.len() > SCAN_ENTRIES);
        assert_eq!((page, entries, indices), (want_page, seen.len(), want_idx));
    }

    /// Every width packs as the value-at-a-time packer does: values of exactly `w` bits (every bit
    /// pattern's top bit set, so a dropped or misplaced high bit shows).
    #[test]
    fn pack_by_width_equals_pack_by_value() {
        let mut x = 7u64;
        for w in 1..=64u32 {
            let mask = if w == 64 { u64::MAX } else { (1 << w) - 1 };
            let v: [u64; MINI] = std::array::from_fn(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if i % 5 == 0 { mask } else { (x >> 7 ^ x << 9) & mask }
            });
            let (mut a, mut b) = (vec![9u8], vec![9u8]);
            pack(&mut a, &v, 0, w);
            pack_by_value(&mut b, &v, w);
            // less a minimum: the same bits as the values less it packed
            let (mut c, mut e) = (vec![9u8], vec![9u8]);
            pack(&mut c, &v.map(|x| x.wrapping_add(12345)), 12345, w);
            pack_by_value(&mut e, &v, w);
            assert_eq!(c, e, "width {w}, less a minimum");
            assert_eq!(a, b, "width {w}");
            assert_eq!(a.len(), 1 + 8 * w as usize);
        }
    }

    /// Levels of 10 rows, rows 1 and 9 null: a bit-packed run of 2 groups (header (2 << 1) | 1 = 5),
    /// 0b1111_1101 then 0b0000_0001 (the six padding levels 0, though the array's bitmap goes on
    /// with valid rows), after a 4-byte length 3; the same rows at a bit offset give the same
    /// bytes; without nulls one RLE run, header 10 << 1 = 20, value 1.
    #[test]
    fn definition_levels_are_the_validity_bitmap() {
        let a = Int64Array::from_iter((0..12).map(|i| (i != 1 && i != 9).then_some(i)));
        let mut out = Vec::new();
        def_levels(&mut out, &a.slice(0, 10));
        assert_eq!(out, vec![3, 0, 0, 0, 5, 0b1111_1101, 0b0000_0001]);
        let b = Int64Array::from_iter((0..13).map(|i| (i != 2 && i != 10).then_some(i)));
        out.clear();
        def_levels(&mut out, &b.slice(1, 10));
        assert_eq!(out, vec![3, 0, 0, 0, 5, 0b1111_1101, 0b0000_0001]);
        out.clear();
        def_levels(&mut out, &Int64Array::from_iter_values(0..10));
        assert_eq!(out, vec![2, 0, 0, 0, 20, 1]);
    }
}
