//! Reading scenario tables with exact error messages. A [`Params`] wraps one table (a JSON object
//! made from the TOML file), hands out typed values by key, remembers which keys were read, and
//! [`Params::finish`] rejects the rest, so every error names the key path:
//! `links.bottleneck.rate: must be > 0, got "-2Mbit"`.
//!
//! Units are strings, parsed here and nowhere else (the Python side calls these parsers through
//! `jitterlab._native`): rates "4Mbit", "100kbit/s" (tc(8)'s bit units, case-insensitive; "…bps" is
//! refused because tc reads it as bytes); durations "25ms", "1.5s", "200us", "1sec"; sizes "80B",
//! "64kB" (SI, 1000), "64KiB" (1024), "28MB", "500pkt". Every value must fit the tables' int64
//! nanoseconds and bytes. The table is in docs/scenarios.md.
//!
//! Over 600 lines: its unit tests (the last hundred lines) sit beside the unit parsers they pin.
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::time::{Rate, Time};

/// What kind of value a key was read as: the scenario model's types, as the accessors below see
/// them. [`record`] collects one [`Read`] per access so that `schema.rs` can describe the format
/// from the parser itself instead of from a copy of its key lists.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Str,
    /// A string from a fixed list; `required` when the key has no default.
    Choice { choices: Vec<String>, required: bool },
    Bool,
    Number,
    Integer,
    Duration,
    Rate,
    Size,
    Table,
    /// `[[key]]`: an array of tables.
    Tables,
    /// `[key.NAME]`: a table of named tables.
    NamedTables,
    Strings,
    /// Read raw and checked by hand (several shapes are accepted).
    Any,
    /// Only its presence was tested.
    Presence,
    /// The table's reader called [`Params::finish`]: unknown keys are refused there.
    Closed,
}

/// One key read by a [`Params`]: the table's path, the key, and how it was read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Read {
    pub table: String,
    pub key: String,
    pub kind: Kind,
}

thread_local! {
    // The one piece of global state in the crate, and only while `record` runs: it observes which
    // keys are read, never changes what is read or built (no result depends on it).
    static RECORDER: std::cell::RefCell<Option<Vec<Read>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` and returns, with its result, every key read by any [`Params`] on this thread meanwhile.
pub fn record<T>(f: impl FnOnce() -> T) -> (T, Vec<Read>) {
    let outer = RECORDER.with(|r| r.borrow_mut().replace(Vec::new()));
    let out = f();
    let reads = RECORDER.with(|r| std::mem::replace(&mut *r.borrow_mut(), outer)).unwrap_or_default();
    (out, reads)
}

fn note(table: &str, key: &str, kind: Kind) {
    RECORDER.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            v.push(Read { table: table.to_string(), key: key.to_string(), kind });
        }
    });
}

/// How a unit string is written, for the schema: the unit suffixes the parsers accept for `kind`
/// (Duration, Rate or Size), whether they are matched ignoring ASCII case, and whether "/s" may
/// follow (rates). `None` for other kinds.
pub fn unit_syntax(kind: &Kind) -> Option<(Vec<&'static str>, bool, bool)> {
    match kind {
        Kind::Duration => Some((DURATION_UNITS.iter().map(|(u, _)| *u).collect(), true, false)),
        Kind::Rate => Some((RATE_UNITS.iter().map(|(u, _)| *u).collect(), true, true)),
        Kind::Size => Some((SIZE_UNITS.iter().map(|(u, _, _)| *u).collect(), false, false)),
        _ => None,
    }
}

/// A scenario error: the dotted key path and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {msg}")]
pub struct ConfigError {
    pub path: String,
    pub msg: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, msg: impl Into<String>) -> Self { ConfigError { path: path.into(), msg: msg.into() } }
}

/// A queue limit or transfer size: bytes, or packets when written with "pkt".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    Packets(u64),
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// Splits "12.5ms" into (12.5, "ms"). Rejects empty numbers, NaN and infinities.
fn split_unit(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    // The number ends at the first character that cannot be part of it; an "e" only counts as an
    // exponent when a digit (or sign and digit) follows, so "5e3ms" is 5000 ms and no unit here
    // starts with e/E.
    let b = s.as_bytes();
    let mut idx = 0;
    while idx < b.len() {
        let c = b[idx];
        let exp = (c == b'e' || c == b'E')
            && idx > 0
            && b.get(idx + 1).is_some_and(|n| n.is_ascii_digit() || ((*n == b'+' || *n == b'-') && b.get(idx + 2).is_some_and(|d| d.is_ascii_digit())));
        if c.is_ascii_digit() || c == b'.' || ((c == b'-' || c == b'+') && (idx == 0 || b[idx - 1] == b'e' || b[idx - 1] == b'E')) || exp {
            idx += 1;
        } else {
            break;
        }
    }
    let (num, unit) = s.split_at(idx);
    let x: f64 = num.trim().parse().ok()?;
    if !x.is_finite() {
        return None;
    }
    Some((x, unit.trim().to_string()))
}

/// The largest value a table column can hold: times are int64 ns, sizes int64 bytes (design.md).
pub const I64_MAX_F: f64 = 9_223_372_036_854_775_807.0;

/// Duration units, following tc(8)'s time units (case-insensitive: s, sec, secs, ms, msec, msecs,
/// us, usec, usecs) plus ns and min. A bare number is refused (tc reads it as µs, others as s).
const DURATION_UNITS: &[(&str, f64)] = &[
    ("ns", 1.0), ("nsec", 1.0), ("nsecs", 1.0),
    ("us", 1e3), ("µs", 1e3), ("usec", 1e3), ("usecs", 1e3),
    ("ms", 1e6), ("msec", 1e6), ("msecs", 1e6),
    ("s", 1e9), ("sec", 1e9), ("secs", 1e9),
    ("min", 60e9),
];

/// Rate units in bits per second, tc(8)'s bit units (case-insensitive, optional "/s"):
/// bit, kbit, mbit, gbit, tbit (SI) and kibit, mibit, gibit (IEC). tc(8) reads "bps", "kbps",
/// "mbps" as *bytes* per second while most people mean bits, so every "…bps" is refused with a hint.
const RATE_UNITS: &[(&str, f64)] = &[
    ("bit", 1.0), ("kbit", 1e3), ("mbit", 1e6), ("gbit", 1e9), ("tbit", 1e12),
    ("kibit", 1024.0), ("mibit", 1048576.0), ("gibit", 1073741824.0),
];

/// Size units: B (bytes), kB/KB, MB, GB (SI, 1000), KiB, MiB, GiB (1024), pkt (packets).
/// tc(8) reads "kb"/"k" as 1024 bytes; scenarios write SI or IEC explicitly, and the testbed hands
/// tc plain byte counts, so no size string reaches tc.
const SIZE_UNITS: &[(&str, f64, bool)] = &[
    ("B", 1.0, false), ("byte", 1.0, false), ("bytes", 1.0, false),
    ("kB", 1e3, false), ("KB", 1e3, false), ("MB", 1e6, false), ("GB", 1e9, false),
    ("KiB", 1024.0, false), ("MiB", 1048576.0, false), ("GiB", 1073741824.0, false),
    ("pkt", 1.0, true), ("pkts", 1.0, true), ("p", 1.0, true), ("packets", 1.0, true),
];

/// A duration in integer nanoseconds (may be negative: clock offsets). Errors name the rule.
pub fn duration_ns(s: &str) -> Result<i64, String> {
    let (x, u) = split_unit(s).ok_or_else(|| format!("expected a duration like \"25ms\", got {s:?}"))?;
    if u.is_empty() {
        return Err(format!("a duration needs a unit (ns, us, ms, s, min), got {s:?}"));
    }
    let k = DURATION_UNITS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&u) || *n == u)
        .map(|(_, k)| *k)
        .ok_or_else(|| format!("unknown duration unit {u:?} in {s:?} (use ns, us, ms, s, min)"))?;
    let ns = (x * k).round();
    if ns.abs() >= I64_MAX_F {
        return Err(format!("{s:?} is out of range (durations must stay within ±292 years, the int64-nanosecond limit)"));
    }
    Ok(ns as i64)
}

/// A rate in bits per second (> 0, within int64).
pub fn rate_bps(s: &str) -> Result<u64, String> {
    let (x, u) = split_unit(s).ok_or_else(|| format!("expected a rate like \"4Mbit\", got {s:?}"))?;
    let unit = u.strip_suffix("/s").unwrap_or(&u);
    if unit.is_empty() {
        return Err(format!("a rate needs a unit (bit, kbit, Mbit, Gbit), got {s:?}"));
    }
    let lower = unit.to_ascii_lowercase();
    if lower.ends_with("bps") {
        let prefix = &unit[..unit.len() - 3];
        return Err(format!(
            "ambiguous rate unit {unit:?} in {s:?}: tc(8) reads \"{prefix}bps\" as {prefix}bytes per second; write bits as \"{num}{p}bit\" (or bytes times 8)",
            num = fmt_num(x),
            p = if prefix.is_empty() { String::new() } else { prefix.to_string() },
        ));
    }
    let k = RATE_UNITS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(unit))
        .map(|(_, k)| *k)
        .ok_or_else(|| format!("unknown rate unit {unit:?} in {s:?} (use bit, kbit, Mbit, Gbit; bytes per second are refused as ambiguous)"))?;
    let bps = (x * k).round();
    if bps < 1.0 {
        return Err(format!("must be > 0, got {s:?}"));
    }
    if bps >= I64_MAX_F {
        return Err(format!("{s:?} is out of range (at most 9.2e18 bit/s)"));
    }
    Ok(bps as u64)
}

/// A size: (count, true when in packets). >= 0, within int64.
pub fn size_value(s: &str) -> Result<(u64, bool), String> {
    let (x, u) = split_unit(s).ok_or_else(|| format!("expected a size like \"64kB\" or \"500pkt\", got {s:?}"))?;
    if u.is_empty() {
        return Err(format!("a size needs a unit (B, kB, MB, KiB, MiB, pkt), got {s:?}"));
    }
    let Some((_, k, pkts)) = SIZE_UNITS.iter().find(|(n, _, _)| *n == u) else {
        let hint = match u.to_ascii_lowercase().as_str() {
            "kb" | "k" | "mb" | "m" | "gb" | "g" => " (write kB = 1000 B or KiB = 1024 B; tc(8) reads \"kb\" as 1024 B)",
            "kbit" | "mbit" | "bit" => " (sizes are in bytes or packets)",
            _ => "",
        };
        return Err(format!("unknown size unit {u:?} in {s:?}{hint} (use B, kB, MB, GB, KiB, MiB, GiB, pkt)"));
    };
    let n = (x * k).round();
    if n < 0.0 {
        return Err(format!("must be >= 0, got {s:?}"));
    }
    if n >= I64_MAX_F {
        return Err(format!("{s:?} is out of range (at most 9.2e18)"));
    }
    if *pkts && x.fract() != 0.0 {
        return Err(format!("a packet count must be whole, got {s:?}"));
    }
    Ok((n as u64, *pkts))
}

fn fmt_num(x: f64) -> String { if x.fract() == 0.0 && x.abs() < 1e15 { format!("{}", x as i64) } else { format!("{x}") } }

/// A duration in seconds (f64), for distribution parameters. Same rules as [`duration_ns`].
pub fn parse_duration(s: &str) -> Result<f64, String> { duration_ns(s).map(|ns| ns as f64 * 1e-9) }

/// A rate in bits per second as f64. Same rules as [`rate_bps`].
pub fn parse_rate(s: &str) -> Result<f64, String> { rate_bps(s).map(|b| b as f64) }

/// A size as (value, in packets). Same rules as [`size_value`].
pub fn parse_size(s: &str) -> Result<(f64, bool), String> { size_value(s).map(|(n, p)| (n as f64, p)) }

/// Edit distance with adjacent transpositions (optimal string alignment), for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Whether `typed` looks like a typo of `known`: same first letter and at most one edit for keys
/// of up to 4 characters, two for longer ones (so "max" is never taken for "min", nor "trace" for
/// "rate").
pub fn near_miss(typed: &str, known: &str) -> bool {
    if typed == known || typed.chars().next() != known.chars().next() {
        return false;
    }
    let limit = if known.chars().count() <= 4 { 1 } else { 2 };
    edit_distance(typed, known) <= limit
}

/// One table of the scenario being read.
#[derive(Debug)]
pub struct Params {
    path: String,
    map: Map<String, Value>,
    used: BTreeSet<String>,
    /// Every key asked for, present or not: the known keys of this table, for "did you mean".
    asked: BTreeSet<String>,
}

impl Params {
    /// Wraps `v` found at `path` ("" for the root). Errors when `v` is not a table.
    pub fn new(path: &str, v: &Value) -> Result<Params, ConfigError> {
        match v {
            Value::Object(m) => Ok(Params { path: path.to_string(), map: m.clone(), used: BTreeSet::new(), asked: BTreeSet::new() }),
            other => Err(ConfigError::new(if path.is_empty() { "<root>" } else { path }, format!("expected a table, got {}", type_name(other)))),
        }
    }

    pub fn path(&self) -> &str { &self.path }

    /// A fresh reader over the same table (nothing marked read).
    pub fn duplicate(&self) -> Params { Params { path: self.path.clone(), map: self.map.clone(), used: BTreeSet::new(), asked: BTreeSet::new() } }

    /// The full path of `key` in this table.
    pub fn key_path(&self, key: &str) -> String {
        if key.is_empty() {
            return if self.path.is_empty() { "<root>".into() } else { self.path.clone() };
        }
        if self.path.is_empty() { key.to_string() } else { format!("{}.{}", self.path, key) }
    }

    /// An error at `key`. A "missing …" error becomes an unknown-key error when the table holds an
    /// unread key that looks like a typo of the missing one (`delya` for `delay`): the typo is the
    /// user's mistake, so it is checked before the missing key is reported.
    pub fn err(&self, key: &str, msg: impl Into<String>) -> ConfigError {
        let msg = msg.into();
        if msg.starts_with("missing") && !key.is_empty() && !self.map.contains_key(key) {
            if let Some(typo) = self.map.keys().find(|k| !self.used.contains(*k) && !self.asked.contains(*k) && near_miss(k, key)) {
                return ConfigError::new(self.key_path(typo), format!("unknown key (did you mean {key:?}?)"));
            }
        }
        ConfigError::new(self.key_path(key), msg)
    }

    pub fn has(&self, key: &str) -> bool {
        note(&self.path, key, Kind::Presence);
        self.map.contains_key(key)
    }

    pub fn keys(&self) -> Vec<String> { self.map.keys().cloned().collect() }

    /// Records `key` as a required choice of `choices` for the schema (crate::schema) without
    /// reading it: for a caller that checks the value itself, with its own message.
    pub fn note_choice(&self, key: &str, choices: &[&str]) {
        note(&self.path, key, Kind::Choice { choices: choices.iter().map(|c| c.to_string()).collect(), required: true });
    }

    fn take(&mut self, key: &str) -> Option<Value> {
        self.asked.insert(key.to_string());
        let v = self.map.get(key).cloned();
        if v.is_some() {
            self.used.insert(key.to_string());
        }
        v
    }

    /// Marks `key` as read without reading it (for keys handled elsewhere).
    pub fn mark_used(&mut self, key: &str) {
        note(&self.path, key, Kind::Any);
        self.asked.insert(key.to_string());
        self.used.insert(key.to_string());
    }

    /// Errors for every key that was never read, naming the first one and the known ones.
    pub fn finish(self) -> Result<(), ConfigError> {
        note(&self.path, "", Kind::Closed);
        for k in self.map.keys() {
            if !self.used.contains(k) {
                // a near miss of a known key; one the table lacks is the likelier intent
                let mut near = self.asked.iter().filter(|a| near_miss(k, a));
                let first = near.clone().find(|a| !self.map.contains_key(*a));
                if let Some(m) = first.or_else(|| near.next()) {
                    return Err(ConfigError::new(self.key_path(k), format!("unknown key (did you mean {m:?}?)")));
                }
                let known: Vec<&str> = self.asked.iter().map(|s| s.as_str()).filter(|s| !s.ends_with("_data")).collect();
                let hint = if known.is_empty() { String::new() } else { format!(" (known here: {})", known.join(", ")) };
                return Err(ConfigError::new(self.key_path(k), format!("unknown key{hint}")));
            }
        }
        Ok(())
    }

    pub fn str_opt(&mut self, key: &str) -> Result<Option<String>, ConfigError> {
        note(&self.path, key, Kind::Str);
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(key, format!("expected a string, got {}", type_name(&v)))),
        }
    }
    pub fn str(&mut self, key: &str) -> Result<String, ConfigError> {
        self.str_opt(key)?.ok_or_else(|| self.err(key, "missing"))
    }
    /// A string restricted to `choices`.
    pub fn choice(&mut self, key: &str, choices: &[&str], default: Option<&str>) -> Result<String, ConfigError> {
        note(&self.path, key, Kind::Choice { choices: choices.iter().map(|c| c.to_string()).collect(), required: default.is_none() });
        let s = match (self.str_opt(key)?, default) {
            (Some(s), _) => s,
            (None, Some(d)) => return Ok(d.to_string()),
            (None, None) => return Err(self.err(key, format!("missing (one of {})", choices.join(", ")))),
        };
        if choices.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(self.err(key, format!("must be one of {}, got {s:?}", choices.join(", "))))
        }
    }

    pub fn bool_or(&mut self, key: &str, default: bool) -> Result<bool, ConfigError> {
        note(&self.path, key, Kind::Bool);
        match self.take(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(v) => Err(self.err(key, format!("expected true or false, got {}", show(&v)))),
        }
    }

    pub fn f64_opt(&mut self, key: &str) -> Result<Option<f64>, ConfigError> {
        note(&self.path, key, Kind::Number);
        match self.take(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(v) => Err(self.err(key, format!("expected a number, got {}", show(&v)))),
        }
    }
    pub fn f64_or(&mut self, key: &str, default: f64) -> Result<f64, ConfigError> { Ok(self.f64_opt(key)?.unwrap_or(default)) }
    pub fn f64(&mut self, key: &str) -> Result<f64, ConfigError> { self.f64_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    pub fn u64_opt(&mut self, key: &str) -> Result<Option<u64>, ConfigError> {
        note(&self.path, key, Kind::Integer);
        match self.take(key) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                // the tables hold int64: a count beyond it could not be written after the run
                Some(u) if u > i64::MAX as u64 => Err(self.err(key, format!("{u} is out of range (at most 2^63-1)"))),
                Some(u) => Ok(Some(u)),
                None => Err(self.err(key, format!("expected a whole number >= 0, got {n}"))),
            },
            Some(v) => Err(self.err(key, format!("expected a whole number, got {}", show(&v)))),
        }
    }
    pub fn u64_or(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> { Ok(self.u64_opt(key)?.unwrap_or(default)) }
    pub fn u64(&mut self, key: &str) -> Result<u64, ConfigError> { self.u64_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    fn unit_str(&mut self, key: &str, what: &str) -> Result<Option<(String, Value)>, ConfigError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some((s.clone(), Value::String(s)))),
            Some(v) => Err(self.err(key, format!("expected {what} as a string with a unit, got {}", show(&v)))),
        }
    }

    /// A duration >= 0.
    pub fn duration_opt(&mut self, key: &str) -> Result<Option<Time>, ConfigError> {
        note(&self.path, key, Kind::Duration);
        let Some((s, v)) = self.unit_str(key, "a duration")? else { return Ok(None) };
        let ns = duration_ns(&s).map_err(|m| self.err(key, m))?;
        if ns < 0 {
            return Err(self.err(key, format!("must be >= 0, got {}", show(&v))));
        }
        Ok(Some(Time(ns as u64)))
    }
    pub fn duration(&mut self, key: &str) -> Result<Time, ConfigError> { self.duration_opt(key)?.ok_or_else(|| self.err(key, "missing")) }
    pub fn duration_or(&mut self, key: &str, d: Time) -> Result<Time, ConfigError> { Ok(self.duration_opt(key)?.unwrap_or(d)) }
    /// A duration in seconds as f64 (for distribution parameters).
    pub fn seconds_opt(&mut self, key: &str) -> Result<Option<f64>, ConfigError> {
        note(&self.path, key, Kind::Duration);
        let Some((s, v)) = self.unit_str(key, "a duration")? else { return Ok(None) };
        let x = parse_duration(&s).map_err(|m| self.err(key, m))?;
        if x < 0.0 {
            return Err(self.err(key, format!("must be >= 0, got {}", show(&v))));
        }
        Ok(Some(x))
    }

    /// A rate > 0.
    pub fn rate_opt(&mut self, key: &str) -> Result<Option<Rate>, ConfigError> {
        note(&self.path, key, Kind::Rate);
        let Some((s, _)) = self.unit_str(key, "a rate")? else { return Ok(None) };
        Ok(Some(Rate(rate_bps(&s).map_err(|m| self.err(key, m))?)))
    }
    pub fn rate(&mut self, key: &str) -> Result<Rate, ConfigError> { self.rate_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    /// A size (bytes or packets) >= 0.
    pub fn size_opt(&mut self, key: &str) -> Result<Option<Size>, ConfigError> {
        note(&self.path, key, Kind::Size);
        let Some((s, _)) = self.unit_str(key, "a size")? else { return Ok(None) };
        let (n, pkts) = size_value(&s).map_err(|m| self.err(key, m))?;
        Ok(Some(if pkts { Size::Packets(n) } else { Size::Bytes(n) }))
    }
    pub fn size(&mut self, key: &str) -> Result<Size, ConfigError> { self.size_opt(key)?.ok_or_else(|| self.err(key, "missing")) }
    /// A size that must be in bytes.
    pub fn bytes_opt(&mut self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.size_opt(key)? {
            None => Ok(None),
            Some(Size::Bytes(b)) => Ok(Some(b)),
            Some(Size::Packets(_)) => Err(self.err(key, "must be in bytes (B, KB, MB), not packets")),
        }
    }
    pub fn bytes(&mut self, key: &str) -> Result<u64, ConfigError> { self.bytes_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    /// A sub-table.
    pub fn table_opt(&mut self, key: &str) -> Result<Option<Params>, ConfigError> {
        note(&self.path, key, Kind::Table);
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(None),
            Some(v) => Params::new(&path, &v).map(Some),
        }
    }
    pub fn table(&mut self, key: &str) -> Result<Params, ConfigError> { self.table_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    /// An array of tables (`[[flows]]`); each element's path is `key[i]`.
    pub fn tables(&mut self, key: &str) -> Result<Vec<Params>, ConfigError> {
        note(&self.path, key, Kind::Tables);
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(vec![]),
            Some(Value::Array(items)) => items.iter().enumerate().map(|(i, v)| Params::new(&format!("{path}[{i}]"), v)).collect(),
            Some(v) => Err(self.err(key, format!("expected an array of tables, got {}", type_name(&v)))),
        }
    }

    /// The named sub-tables of a table (`[links.NAME]`), in key order.
    pub fn named_tables(&mut self, key: &str) -> Result<Vec<(String, Params)>, ConfigError> {
        note(&self.path, key, Kind::NamedTables);
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(vec![]),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| Params::new(&format!("{path}.{k}"), v).map(|p| (k.clone(), p))).collect(),
            Some(v) => Err(self.err(key, format!("expected a table of named tables, got {}", type_name(&v)))),
        }
    }

    /// A raw value (for arrays of numbers/strings).
    pub fn value_opt(&mut self, key: &str) -> Option<Value> {
        note(&self.path, key, Kind::Any);
        self.take(key)
    }

    /// An array of strings.
    pub fn strings(&mut self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        note(&self.path, key, Kind::Strings);
        match self.take(key) {
            None => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(ConfigError::new(format!("{}[{i}]", self.key_path(key)), format!("expected a string, got {}", type_name(other)))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(self.err(key, format!("expected an array of strings, got {}", type_name(&v)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn units() {
        assert_eq!(parse_rate("4Mbit").unwrap(), 4e6);
        assert_eq!(parse_rate("100 kbit/s").unwrap(), 1e5);
        assert_eq!(parse_duration("25ms").unwrap(), 0.025);
        assert_eq!(parse_duration("1.5s").unwrap(), 1.5);
        assert_eq!(parse_size("64KB").unwrap(), (64000.0, false));
        assert_eq!(parse_size("64KiB").unwrap(), (65536.0, false));
        assert_eq!(parse_size("500pkt").unwrap(), (500.0, true));
        assert!(parse_duration("25").unwrap_err().contains("needs a unit"));
        assert!(parse_rate("4MB/s").unwrap_err().contains("unknown rate unit"));
    }

    #[test]
    fn units_follow_tc() {
        // tc(8): bit units case-insensitive; "/s" optional
        assert_eq!(rate_bps("4mbit").unwrap(), 4_000_000);
        assert_eq!(rate_bps("4MBIT/s").unwrap(), 4_000_000);
        assert_eq!(rate_bps("2kibit").unwrap(), 2048);
        assert_eq!(rate_bps("1.5Gbit").unwrap(), 1_500_000_000);
        // tc reads bps as bytes per second: refused, with the bit spelling as the hint
        for s in ["4mbps", "4Mbps", "100kbps", "8bps", "4MBps"] {
            let e = rate_bps(s).unwrap_err();
            assert!(e.contains("ambiguous") && e.contains("bit"), "{s}: {e}");
        }
        assert!(rate_bps("4mbps").unwrap_err().contains("\"4mbit\""));
        // durations: tc's sec/msec/usec spellings, any case
        assert_eq!(duration_ns("1sec").unwrap(), 1_000_000_000);
        assert_eq!(duration_ns("2 msec").unwrap(), 2_000_000);
        assert_eq!(duration_ns("-1.5ms").unwrap(), -1_500_000);
        assert_eq!(duration_ns("5e3ms").unwrap(), 5_000_000_000);
        assert_eq!(duration_ns("3MIN").unwrap(), 180_000_000_000);
        assert!(duration_ns("5").unwrap_err().contains("needs a unit"));
        // sizes
        assert_eq!(size_value("372kB").unwrap(), (372_000, false));
        assert_eq!(size_value("64KiB").unwrap(), (65_536, false));
        assert_eq!(size_value("500pkt").unwrap(), (500, true));
        assert!(size_value("64kb").unwrap_err().contains("tc(8) reads"));
        assert!(size_value("1.5pkt").unwrap_err().contains("whole"));
    }

    #[test]
    fn values_fit_int64() {
        // int64 ns ends at 9.22e18 ns = 9.22e9 s (292 years): 9e9 s fits, 1e10 s does not
        assert!(duration_ns("9e9s").is_ok());
        assert!(duration_ns("1e10s").unwrap_err().contains("out of range"));
        assert!(duration_ns("1e12s").unwrap_err().contains("out of range"));
        assert!(rate_bps("1e20Mbit").unwrap_err().contains("out of range"));
        assert!(rate_bps("9e18bit").is_ok());
        assert!(size_value("1e19B").unwrap_err().contains("out of range"));
        let v = json!({"n": 9_223_372_036_854_775_808u64});
        let mut p = Params::new("x", &v).unwrap();
        assert!(p.u64("n").unwrap_err().to_string().contains("out of range"));
    }

    #[test]
    fn typo_reported_before_missing() {
        let v = json!({"from": "a", "to": "b", "rate": "1Mbit", "delya": "5ms"});
        let mut p = Params::new("links.x", &v).unwrap();
        p.str("from").unwrap();
        p.rate("rate").unwrap();
        assert_eq!(p.duration("delay").unwrap_err().to_string(), "links.x.delya: unknown key (did you mean \"delay\"?)");
        // a missing key with no look-alike stays "missing"; "min" is never taken for "max"
        let v = json!({"min": "1ms"});
        let mut j = Params::new("j", &v).unwrap();
        assert_eq!(j.duration("max").unwrap_err().to_string(), "j.max: missing");
        // a typo of an optional key is caught by finish() with the suggestion
        let v = json!({"queu": {}});
        let mut q = Params::new("l", &v).unwrap();
        assert!(q.table_opt("queue").unwrap().is_none());
        assert_eq!(q.finish().unwrap_err().to_string(), "l.queu: unknown key (did you mean \"queue\"?)");
        assert!(near_miss("delya", "delay"));
        assert!(!near_miss("trace", "rate"));
        assert!(!near_miss("min", "max"));
    }

    #[test]
    fn errors_name_the_path() {
        let v = json!({"links": {"bottleneck": {"rate": "-2Mbit", "delay": "5ms", "colour": "red"}}});
        let mut root = Params::new("", &v).unwrap();
        let mut links = root.named_tables("links").unwrap();
        let (_, ref mut b) = links[0];
        let e = b.rate("rate").unwrap_err();
        assert_eq!(e.to_string(), "links.bottleneck.rate: must be > 0, got \"-2Mbit\"");
        b.duration("delay").unwrap();
        let (_, b) = links.pop().unwrap();
        let e = b.finish().unwrap_err();
        assert!(e.to_string().starts_with("links.bottleneck.colour: unknown key"), "{e}");
    }

    #[test]
    fn wrong_types() {
        let v = json!({"n": "three", "d": 5, "t": [1]});
        let mut p = Params::new("x", &v).unwrap();
        assert_eq!(p.u64("n").unwrap_err().to_string(), "x.n: expected a whole number, got \"three\"");
        assert_eq!(p.duration("d").unwrap_err().to_string(), "x.d: expected a duration as a string with a unit, got 5");
        assert!(p.table("t").unwrap_err().to_string().contains("x.t: expected a table"));
    }
}
