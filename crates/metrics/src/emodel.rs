//! ITU-T G.107 (06/2015) E-model: R = Ro − Is − Id − Ie,eff + A, and MOS from R (Annex B).
//!
//! Every equation is the Recommendation's (§7.2 Ro, §7.3 Is, §7.4 Id, §7.5 Ie,eff; Annex B
//! MOS). The transmission parameters default to G.107 Table 3, which gives R = 93.2 (§7.7).
//! For a one-way media path we
//! set the echo path delay T and the absolute delay Ta to the mouth-to-ear delay and the round
//! trip Tr = 2·T (echo well controlled at TELR = 65 dB, so T matters little).
//! Ie and Bpl of the codec presets are from ITU-T G.113 Appendix I.

/// G.107 Table 3 default values (dB, dBm0, dB(A)); delays are passed per evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub slr: f64,
    pub rlr: f64,
    pub stmr: f64,
    pub lstr: f64,
    pub ds: f64,
    pub telr: f64,
    pub wepl: f64,
    pub qdu: f64,
    pub nc: f64,
    pub nfor: f64,
    pub ps: f64,
    pub pr: f64,
    pub a: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            slr: 8.0,
            rlr: 2.0,
            stmr: 15.0,
            lstr: 18.0,
            ds: 3.0,
            telr: 65.0,
            wepl: 110.0,
            qdu: 1.0,
            nc: -70.0,
            nfor: -64.0,
            ps: 35.0,
            pr: 35.0,
            a: 0.0,
        }
    }
}

/// A codec preset: equipment impairment Ie, packet-loss robustness Bpl (G.113 Appendix I) and
/// the delay it adds to the mouth-to-ear path (packetisation + look-ahead, our assumption).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Codec {
    pub ie: f64,
    pub bpl: f64,
    pub delay_ms: f64,
}

/// G.711 without PLC, random loss: Ie 0, Bpl 4.3; 20 ms packets.
pub const G711: Codec = Codec { ie: 0.0, bpl: 4.3, delay_ms: 20.0 };
/// G.711 with PLC (G.711 Appendix I), random loss: Ie 0, Bpl 25.1; 20 ms packets.
pub const G711_PLC: Codec = Codec { ie: 0.0, bpl: 25.1, delay_ms: 20.0 };
/// G.729A (+VAD): Ie 11, Bpl 19.0; two 10 ms frames per packet + 5 ms look-ahead.
pub const G729A: Codec = Codec { ie: 11.0, bpl: 19.0, delay_ms: 25.0 };

fn lg(x: f64) -> f64 {
    x.log10()
}

/// Delay impairment Idd (§7.4): 0 up to Ta = 100 ms, then growing smoothly with
/// X = log2(Ta/100). It is ≈ 3 at 200 ms and ≈ 24 at 400 ms — not a cliff to MOS 1 above 100 ms.
pub fn idd(ta_ms: f64) -> f64 {
    if ta_ms <= 100.0 {
        return 0.0;
    }
    let x = lg(ta_ms / 100.0) / lg(2.0);
    25.0 * ((1.0 + x.powi(6)).powf(1.0 / 6.0) - 3.0 * (1.0 + (x / 3.0).powi(6)).powf(1.0 / 6.0) + 2.0)
}

/// Effective equipment impairment (§7.5); `ppl` in percent. Capped at 95, the value
/// of total loss, because very bursty estimates can push the quotient above 1.
pub fn ie_eff(ie: f64, bpl: f64, ppl: f64, burst_r: f64) -> f64 {
    if ppl <= 0.0 {
        return ie;
    }
    (ie + (95.0 - ie) * ppl / (ppl / burst_r + bpl)).min(95.0)
}

/// Transmission rating R for mouth-to-ear delay `ta_ms`, loss `ppl` (%) and `burst_r`.
pub fn r_factor(p: &Params, ta_ms: f64, codec_ie: f64, codec_bpl: f64, ppl: f64, burst_r: f64) -> f64 {
    let t = ta_ms.max(0.0);
    let tr = 2.0 * t;
    // §7.2 basic signal-to-noise ratio Ro.
    let olr = p.slr + p.rlr;
    let nfo = p.nfor + p.rlr;
    let pre = p.pr + 10.0 * lg(1.0 + 10f64.powf((10.0 - p.lstr) / 10.0));
    let nor = p.rlr - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
    let nos = p.ps - p.slr - p.ds - 100.0 + 0.004 * (p.ps - olr - p.ds - 14.0).powi(2);
    let no = 10.0
        * lg(10f64.powf(p.nc / 10.0) + 10f64.powf(nos / 10.0) + 10f64.powf(nor / 10.0) + 10f64.powf(nfo / 10.0));
    let ro = 15.0 - 1.5 * (p.slr + no);
    // §7.3 simultaneous impairment Is = Iolr + Ist + Iq.
    let xolr = olr + 0.2 * (64.0 + no - p.rlr);
    let iolr = 20.0 * ((1.0 + (xolr / 8.0).powi(8)).powf(1.0 / 8.0) - xolr / 8.0);
    let stmro = -10.0 * lg(10f64.powf(-p.stmr / 10.0) + (-t / 4.0).exp() * 10f64.powf(-p.telr / 10.0));
    let ist = 12.0 * (1.0 + ((stmro - 13.0) / 6.0).powi(8)).powf(1.0 / 8.0)
        - 28.0 * (1.0 + ((stmro + 1.0) / 19.4).powi(35)).powf(1.0 / 35.0)
        - 13.0 * (1.0 + ((stmro - 3.0) / 33.0).powi(13)).powf(1.0 / 13.0)
        + 29.0;
    let q = 37.0 - 15.0 * lg(p.qdu);
    let g = 1.07 + 0.258 * q + 0.0602 * q * q;
    let z = 46.0 / 30.0 - g / 40.0;
    let y = (ro - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
    let iq = 15.0 * lg(1.0 + 10f64.powf(y) + 10f64.powf(z));
    let is = iolr + ist + iq;
    // §7.4 delay impairment Id = Idte + Idle + Idd.
    let roe = -1.5 * (no - p.rlr);
    let mut terv = p.telr - 40.0 * lg((1.0 + t / 10.0) / (1.0 + t / 150.0)) + 6.0 * (-0.3 * t * t).exp();
    if p.stmr < 9.0 {
        terv += ist / 2.0;
    }
    let re = 80.0 + 2.5 * (terv - 14.0);
    let mut idte = ((roe - re) / 2.0 + ((roe - re).powi(2) / 4.0 + 100.0).sqrt() - 1.0) * (1.0 - (-t).exp());
    if p.stmr > 20.0 {
        idte = (idte * idte + ist * ist).sqrt();
    }
    let rle = 10.5 * (p.wepl + 7.0) * (tr + 1.0).powf(-0.25);
    let idle = (ro - rle) / 2.0 + ((ro - rle).powi(2) / 4.0 + 169.0).sqrt();
    let id = idte + idle + idd(ta_ms);
    ro - is - id - ie_eff(codec_ie, codec_bpl, ppl, burst_r) + p.a
}

/// MOS (conversational quality estimate) from R, G.107 Annex B.
pub fn mos_from_r(r: f64) -> f64 {
    if r.is_nan() {
        f64::NAN
    } else if r < 0.0 {
        1.0
    } else if r > 100.0 {
        4.5
    } else {
        1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_r_is_93_2() {
        // G.107 (06/2015) §7.7: with all parameters at their Table 3 defaults, R = 93.2.
        let r = r_factor(&Params::default(), 0.0, 0.0, 4.3, 0.0, 1.0);
        assert!((r - 93.2).abs() < 0.05, "R = {r}");
        // MOS(93.2) = 1 + 3.262 + 93.2·33.2·6.8·7e-6 = 4.4093 (Annex B, the familiar "4.4").
        assert!((mos_from_r(r) - 4.409).abs() < 0.002);
    }

    #[test]
    fn idd_hand_computed_and_no_cliff() {
        // Ta = 200 ms: X = 1 → 25·(2^(1/6) − 3·(1 + 3^-6)^(1/6) + 2) = 3.0445.
        assert!((idd(200.0) - 3.0445).abs() < 1e-3, "{}", idd(200.0));
        // Ta = 400 ms: X = 2 → 25·(65^(1/6) − 3·(1 + (2/3)^6)^(1/6) + 2) = 24.08.
        assert!((idd(400.0) - 24.08).abs() < 0.01, "{}", idd(400.0));
        assert_eq!(idd(100.0), 0.0);
        // The pitfall: just above 100 ms Idd is ~0 and MOS stays ~4.4, not 1.
        assert!(idd(101.0) < 1e-6);
        let p = Params::default();
        let r101 = r_factor(&p, 101.0, 0.0, 4.3, 0.0, 1.0);
        assert!(mos_from_r(r101) > 4.2, "R(101 ms) = {r101}");
        // R falls monotonically with delay.
        let rs: Vec<f64> = [0.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0, 600.0].iter().map(|&t| r_factor(&p, t, 0.0, 4.3, 0.0, 1.0)).collect();
        assert!(rs.windows(2).all(|w| w[1] <= w[0] + 1e-9), "{rs:?}");
    }

    #[test]
    fn delay_curve_decomposes_into_idd_and_echo_terms() {
        // Not a published table: at T = Ta the talker-echo term Idte (TELR 65 dB) grows by
        // ~2.5 between 0 and 100 ms and Idd is still 0, so R(100) = 90.66; from 100 to 200 ms
        // Idd adds 3.04 (hand-computed above). Values checked against a hand evaluation of
        // the §7.4 equations with the Table 3 defaults.
        let p = Params::default();
        let r = |t: f64| r_factor(&p, t, 0.0, 4.3, 0.0, 1.0);
        assert!((r(100.0) - 90.664).abs() < 0.01, "{}", r(100.0));
        assert!((r(200.0) - 85.805).abs() < 0.01, "{}", r(200.0));
        assert!((r(400.0) - 62.247).abs() < 0.01, "{}", r(400.0));
    }

    #[test]
    fn ie_eff_random_and_bursty_loss() {
        // G.711+PLC, 1 % random loss: 95·1/(1 + 25.1) = 3.6398.
        assert!((ie_eff(0.0, 25.1, 1.0, 1.0) - 3.63985).abs() < 1e-4);
        // G.729A, 2 %, BurstR 2: 11 + 84·2/(1 + 19) = 19.4.
        assert!((ie_eff(11.0, 19.0, 2.0, 2.0) - 19.4).abs() < 1e-12);
        // No loss: Ie; total loss: capped at 95.
        assert_eq!(ie_eff(11.0, 19.0, 0.0, 1.0), 11.0);
        assert_eq!(ie_eff(0.0, 4.3, 100.0, 1000.0), 95.0);
    }

    #[test]
    fn mos_mapping_annex_b() {
        assert_eq!(mos_from_r(-5.0), 1.0);
        assert_eq!(mos_from_r(120.0), 4.5);
        // R = 50: 1 + 1.75 + 50·(−10)·50·7e-6 = 2.575.
        assert!((mos_from_r(50.0) - 2.575).abs() < 1e-12);
        assert!(mos_from_r(f64::NAN).is_nan());
    }
}
