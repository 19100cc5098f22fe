//! Percentiles. One definition everywhere: linear interpolation between closest ranks
//! (Hyndman & Fan type 7, numpy's default `linear`), so results match `numpy.percentile`.
use crate::error::{MetricsError, Result};

/// Quantile `p` (0..=1) of an ascending slice; NaN when empty.
pub fn quantile_sorted(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let h = (v.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// Same values as sorting and calling [`quantile_sorted`], by selection (O(n) per quantile
/// instead of O(n log n) once): for a table of 11 percentiles over millions of values.
fn quantiles_by_selection(s: &mut [f64], probs: &[f64]) -> Vec<f64> { select_quantiles(s, probs, f64::total_cmp, |x| x) }

/// `quantiles_by_selection` of `f` of the values `s` (ascending probabilities or not), for a map
/// `f` that never decreases (`f(x) <= f(y)` when `x <= y`): each order statistic of the mapped
/// values is `f` of the values' own, so selecting among the integers gives the same bits as
/// selecting among their images (and an integer compares in one instruction, a float by
/// `total_cmp` in several).
fn quantiles_by_selection_mapped(s: &mut [i64], probs: &[f64], f: impl Fn(i64) -> f64) -> Vec<f64> {
    if s.len() < COUNT_MIN || s.len() > u32::MAX as usize || probs.len() > 4 {
        return select_quantiles(s, probs, i64::cmp, f);
    }
    counted_quantiles(s, probs, f)
}

/// Values from which [`counted_quantiles`] selects by counting (fewer: `select_nth_unstable`).
const COUNT_MIN: usize = 4096;
/// Its buckets: `1 << BUCKET_BITS` of them.
const BUCKET_BITS: u32 = 11;

/// `select_quantiles` of integers by counting: a histogram of the values in 2048 buckets of
/// equal width between their least and greatest finds the bucket of each order statistic the
/// quantiles need (the ranks `lo` and `lo + 1` of [`quantile_sorted`]), and only those buckets'
/// values are selected among. An order statistic is one value whatever finds it, so the same bits
/// as `select_quantiles`, in three passes over the values (least and greatest, counts, the needed
/// buckets' values) without a branch on a value, where selection took ~1.5 partitions of
/// them with a branch each (the largest part of a run's share of a sweep's closing summary once
/// its passes over the rows were fused, issue 31).
fn counted_quantiles(s: &[i64], probs: &[f64], f: impl Fn(i64) -> f64) -> Vec<f64> {
    let n = s.len();
    // (lo, frac) a probability, as quantile_sorted has them
    let at: Vec<(usize, f64)> = probs
        .iter()
        .map(|&p| {
            let h = (n - 1) as f64 * p;
            let lo = h.floor() as usize;
            (lo, h - lo as f64)
        })
        .collect();
    let mut ranks: Vec<usize> = at.iter().flat_map(|&(lo, frac)| [lo, if lo + 1 >= n || frac == 0.0 { lo } else { lo + 1 }]).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let values = order_statistics(s, &ranks);
    let value = |r: usize| values[ranks.binary_search(&r).expect("a needed rank")];
    at.iter()
        .map(|&(lo, frac)| {
            let v_lo = value(lo);
            if lo + 1 >= n || frac == 0.0 { f(v_lo) } else { f(v_lo) + frac * (f(value(lo + 1)) - f(v_lo)) }
        })
        .collect()
}

/// The values of `s` at the ascending ranks `ranks` (each below `s.len()`, at most 8) were `s`
/// sorted: see [`counted_quantiles`].
fn order_statistics(s: &[i64], ranks: &[usize]) -> Vec<i64> {
    let (lo, hi) = min_max(s);
    // offsets from the least value as unsigned: exact whatever the span
    let span = (hi as u64).wrapping_sub(lo as u64);
    if span == 0 {
        return vec![lo; ranks.len()];
    }
    let shift = (u64::BITS - span.leading_zeros()).saturating_sub(BUCKET_BITS);
    let nb = ((span >> shift) + 1) as usize;
    let bucket = move |x: i64| ((x as u64).wrapping_sub(lo as u64) >> shift) as usize;
    // four histograms in turn (consecutive values often share a bucket: one counter would wait
    // on its own previous increment)
    let mut h = vec![0u32; 4 * nb];
    let (h01, h23) = h.split_at_mut(2 * nb);
    let ((h0, h1), (h2, h3)) = (h01.split_at_mut(nb), h23.split_at_mut(nb));
    let mut quads = s.chunks_exact(4);
    for q in &mut quads {
        h0[bucket(q[0])] += 1;
        h1[bucket(q[1])] += 1;
        h2[bucket(q[2])] += 1;
        h3[bucket(q[3])] += 1;
    }
    for &x in quads.remainder() {
        h0[bucket(x)] += 1;
    }
    let count: Vec<usize> = (0..nb).map(|b| (h0[b] + h1[b] + h2[b] + h3[b]) as usize).collect();
    // each rank's bucket
    let mut at: Vec<usize> = Vec::with_capacity(ranks.len());
    let (mut below, mut b) = (0usize, 0usize);
    for &r in ranks {
        while r >= below + count[b] {
            below += count[b];
            b += 1;
        }
        at.push(b);
    }
    // the values of those buckets (in `s`' order), and each rank among them: less the values of
    // the buckets below its own that are left out
    let mut keep = vec![0u8; nb];
    for &b in &at {
        keep[b] = 1;
    }
    let (mut left_out, mut b) = (0usize, 0usize);
    let mut within = Vec::with_capacity(ranks.len());
    for (&r, &rb) in ranks.iter().zip(&at) {
        while b < rb {
            left_out += if keep[b] == 0 { count[b] } else { 0 };
            b += 1;
        }
        within.push(r - left_out);
    }
    let kept: usize = (0..nb).filter(|&b| keep[b] == 1).map(|b| count[b]).sum();
    let mut part = vec![0i64; kept + 1];
    let mut k = 0usize;
    for &x in s {
        part[k] = x;
        k += usize::from(keep[bucket(x)]);
    }
    part.truncate(kept);
    // counted again where many are left (half the values or more in one bucket: its span 2048
    // times narrower), else selected among
    let one_bucket = at.first() == at.last();
    if part.len() >= COUNT_MIN && (2 * part.len() <= s.len() || one_bucket) {
        return order_statistics(&part, &within);
    }
    within.iter().map(|&r| *part.select_nth_unstable(r).1).collect()
}

avx2_dispatch! {
    /// The least and greatest of `s` (i64::MAX, i64::MIN when empty).
    fn min_max(s: &[i64]) -> (i64, i64) = min_max_any
}

#[inline(always)]
fn min_max_any(s: &[i64]) -> (i64, i64) {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for &x in s {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    (lo, hi)
}

/// The selection behind both: `s` ordered by `cmp`, each quantile `f` of its order statistics,
/// interpolated as [`quantile_sorted`] does.
fn select_quantiles<T: Copy>(s: &mut [T], probs: &[f64], cmp: impl Fn(&T, &T) -> std::cmp::Ordering, f: impl Fn(T) -> f64) -> Vec<f64> {
    let n = s.len();
    if n == 0 {
        return vec![f64::NAN; probs.len()];
    }
    let mut order: Vec<usize> = (0..probs.len()).collect();
    order.sort_by(|&a, &b| probs[a].total_cmp(&probs[b]));
    let mut out = vec![f64::NAN; probs.len()];
    // Ascending quantiles: after selecting index k, everything right of k is >= s[k], so the
    // next selection only needs s[k..] — the ranges shrink as p grows.
    let mut start = 0usize;
    for &i in &order {
        let h = (n - 1) as f64 * probs[i];
        let lo = h.floor() as usize;
        // (same index as the previous quantile: already in place)
        let v_lo = if lo >= start { *s[start..].select_nth_unstable_by(lo - start, &cmp).1 } else { s[lo] };
        start = lo;
        let frac = h - lo as f64;
        out[i] = if lo + 1 >= n || frac == 0.0 {
            f(v_lo)
        } else {
            let v_hi = s[lo + 1..].iter().copied().min_by(&cmp).expect("lo + 1 < n");
            f(v_lo) + frac * (f(v_hi) - f(v_lo))
        };
    }
    out
}

/// [`grouped_quantiles`]' quantiles of one group, `f` of the values `s` (reordered), `f` never
/// decreasing: the same bits as `grouped_quantiles` of the mapped values (at most 16 probabilities
/// by integer selection, more by that function itself).
pub fn quantiles_mapped(s: &mut [i64], probs: &[f64], f: impl Fn(i64) -> f64) -> Result<Vec<f64>> {
    check_probs(probs)?;
    if probs.len() <= 16 {
        return Ok(quantiles_by_selection_mapped(s, probs, f));
    }
    let v: Vec<f64> = s.iter().map(|&x| f(x)).collect();
    Ok(grouped_quantiles(&v, &vec![0; v.len()], 1, probs)?.0)
}

fn check_probs(probs: &[f64]) -> Result<()> {
    if probs.iter().any(|p| !(0.0..=1.0).contains(p)) {
        return Err(MetricsError::InvalidParameter {
            name: "q",
            reason: "quantiles must lie in [0, 1]".into(),
        });
    }
    Ok(())
}

/// Pooled quantiles per group: `values[i]` belongs to group `group[i] < n_groups`. Returns a
/// row-major `n_groups x probs.len()` matrix (NaN for empty groups) and the count per group.
pub fn grouped_quantiles(values: &[f64], group: &[u32], n_groups: usize, probs: &[f64]) -> Result<(Vec<f64>, Vec<u64>)> {
    check_probs(probs)?;
    if values.len() != group.len() {
        return Err(MetricsError::LengthMismatch { column: "group", expected: values.len(), got: group.len() });
    }
    let mut counts = vec![0u64; n_groups];
    for &g in group {
        if g as usize >= n_groups {
            return Err(MetricsError::InvalidParameter { name: "group", reason: format!("group code {g} >= {n_groups}") });
        }
        counts[g as usize] += 1;
    }
    // Counting sort into groups, then sort each group's values.
    let mut start = vec![0usize; n_groups + 1];
    for g in 0..n_groups {
        start[g + 1] = start[g] + counts[g] as usize;
    }
    let mut fill = start.clone();
    let mut buf = vec![0f64; values.len()];
    for (&v, &g) in values.iter().zip(group) {
        buf[fill[g as usize]] = v;
        fill[g as usize] += 1;
    }
    let mut out = Vec::with_capacity(n_groups * probs.len());
    for g in 0..n_groups {
        let s = &mut buf[start[g]..start[g + 1]];
        if probs.len() <= 16 {
            out.extend(quantiles_by_selection(s, probs));
        } else {
            s.sort_unstable_by(|a, b| a.total_cmp(b));
            out.extend(probs.iter().map(|&p| quantile_sorted(s, p)));
        }
    }
    Ok((out, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type7_matches_numpy() {
        // numpy.percentile([1,2,3,4], [0,25,50,90,100]) = [1, 1.75, 2.5, 3.7, 4]
        let v = [1.0, 2.0, 3.0, 4.0];
        let got: Vec<f64> = [0.0, 0.25, 0.5, 0.9, 1.0].iter().map(|&p| quantile_sorted(&v, p)).collect();
        let want = [1.0, 1.75, 2.5, 3.7, 4.0];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn selection_equals_sorting() {
        // Pseudo-random values with duplicates; 11 Table 1 quantiles by both paths.
        let mut x = 12345u64;
        let mut v: Vec<f64> = (0..1001)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 40) % 97) as f64 - 48.0
            })
            .collect();
        let probs = [0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.96, 0.97, 0.98, 0.99, 1.0];
        let sel = quantiles_by_selection(&mut v.clone(), &probs);
        // Unsorted probability lists and repeats work too.
        let mixed = [0.5, 0.0, 0.5, 1.0, 0.33];
        let sel2 = quantiles_by_selection(&mut v.clone(), &mixed);
        v.sort_unstable_by(|a, b| a.total_cmp(b));
        let srt: Vec<f64> = probs.iter().map(|&p| quantile_sorted(&v, p)).collect();
        assert_eq!(sel, srt);
        let srt2: Vec<f64> = mixed.iter().map(|&p| quantile_sorted(&v, p)).collect();
        assert_eq!(sel2, srt2);
        // NaN sorts last (total_cmp): a median between 1 and NaN is NaN on both paths.
        let mut w = vec![f64::NAN, 1.0];
        assert!(quantiles_by_selection(&mut w, &[0.5])[0].is_nan());
        w.sort_unstable_by(f64::total_cmp);
        assert!(quantile_sorted(&w, 0.5).is_nan());
    }

    /// Integer selection through a non-decreasing map (ns to s, as the summary's OWDs) equals the
    /// floats' own: ties, negative values, probabilities unsorted and repeated, 17 of them (the
    /// sorting path), one value, none.
    #[test]
    fn mapped_selection_equals_the_mapped_values_quantiles() {
        let mut x = 99u64;
        let v: Vec<i64> = (0..2001)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) % 5_000_000_007) as i64 - 1_000_000_000
            })
            .chain([7, 7, 7, i64::MAX, i64::MAX - 1, i64::MIN])
            .collect();
        let f = |x: i64| x as f64 / 1e9;
        let few = [0.99, 0.5, 0.0, 0.5, 1.0, 0.333];
        let many: Vec<f64> = (0..17).map(|k| (k * 7 % 17) as f64 / 16.0).collect();
        for probs in [&few[..], &many[..]] {
            for n in [0, 1, 2, 10, v.len()] {
                let mapped: Vec<f64> = v[..n].iter().map(|&x| f(x)).collect();
                let want = grouped_quantiles(&mapped, &vec![0; n], 1, probs).unwrap().0;
                let got = quantiles_mapped(&mut v[..n].to_vec(), probs, f).unwrap();
                assert_eq!(got.iter().map(|q| q.to_bits()).collect::<Vec<_>>(), want.iter().map(|q| q.to_bits()).collect::<Vec<_>>(), "{n} values");
            }
        }
        assert!(quantiles_mapped(&mut [1], &[1.5], f).is_err());
    }

    /// Counting's order statistics equal sorting's: many values (the counting path) spread,
    /// clustered in one bucket with outliers, all equal, at the ends of i64, and ranks that fall
    /// in one bucket, in neighbouring ones and at the ends.
    #[test]
    fn counted_quantiles_equal_sorted_ones() {
        let mut x = 5u64;
        let mut rnd = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 20
        };
        let spread: Vec<i64> = (0..20_011).map(|_| (rnd() % 300_000_000) as i64 + 10_000_000).collect();
        let clustered: Vec<i64> = (0..9_000).map(|i| if i % 1000 == 7 { 1_000_000_000_000 } else { 20_000_000 + (rnd() % 5) as i64 }).collect();
        let ends: Vec<i64> = (0..5_000).map(|i| [i64::MIN, i64::MAX, 0, -1, i64::MIN + 1][i % 5]).collect();
        let equal = vec![42i64; COUNT_MIN];
        let few_values: Vec<i64> = (0..COUNT_MIN as i64 + 3).map(|i| i % 3).collect();
        let f = |x: i64| x as f64 / 1e9;
        for v in [&spread, &clustered, &ends, &equal, &few_values] {
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let mapped: Vec<f64> = sorted.iter().map(|&x| f(x)).collect();
            for probs in [&[0.5, 0.99][..], &[1.0, 0.0][..], &[0.25, 0.2500001, 0.75, 0.5][..], &[0.999_99][..]] {
                let want: Vec<u64> = probs.iter().map(|&p| quantile_sorted(&mapped, p).to_bits()).collect();
                let got: Vec<u64> = counted_quantiles(v, probs, f).iter().map(|q| q.to_bits()).collect();
                assert_eq!(got, want, "{probs:?}");
                assert_eq!(quantiles_mapped(&mut v.clone(), probs, f).unwrap().iter().map(|q| q.to_bits()).collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn groups_are_pooled_separately() {
        let (q, n) = grouped_quantiles(&[5.0, 1.0, 10.0, 3.0, 20.0], &[0, 0, 1, 0, 1], 3, &[0.0, 0.5, 1.0]).unwrap();
        assert_eq!(n, vec![3, 2, 0]);
        assert_eq!(&q[0..3], &[1.0, 3.0, 5.0]);
        assert_eq!(&q[3..6], &[10.0, 15.0, 20.0]);
        assert!(q[6].is_nan());
        assert!(grouped_quantiles(&[1.0], &[0], 1, &[1.5]).is_err());
        assert!(grouped_quantiles(&[1.0], &[4], 1, &[0.5]).is_err());
    }
}
