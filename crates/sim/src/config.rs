//! Reading scenario tables with exact error messages. A [`Params`] wraps one table (a JSON object
//! made from the TOML file), hands out typed values by key, remembers which keys were read, and
//! [`Params::finish`] rejects the rest, so every error names the key path:
//! `links.bottleneck.rate: must be > 0, got "-2Mbit"`.
//!
//! Units are strings: rates "4Mbit", "4Mbps", "100kbit/s"; durations "25ms", "1.5s", "200us";
//! sizes "80B", "64KB" (SI, 1000), "64KiB" (1024), "28MB", "500pkt".
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::time::{Rate, Time};

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
    let idx = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
        .unwrap_or(s.len());
    // "e" inside a unit (e.g. none today) would be ambiguous; units here never start with e/E.
    let (num, unit) = s.split_at(idx);
    let x: f64 = num.trim().parse().ok()?;
    if !x.is_finite() {
        return None;
    }
    Some((x, unit.trim().to_string()))
}

pub fn parse_duration(s: &str) -> Result<f64, String> {
    let (x, u) = split_unit(s).ok_or_else(|| format!("expected a duration like \"25ms\", got {s:?}"))?;
    let k = match u.as_str() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "min" => 60.0,
        "" => return Err(format!("a duration needs a unit (ns, us, ms, s, min), got {s:?}")),
        _ => return Err(format!("unknown duration unit {u:?} in {s:?} (use ns, us, ms, s, min)")),
    };
    Ok(x * k)
}

pub fn parse_rate(s: &str) -> Result<f64, String> {
    let (x, u) = split_unit(s).ok_or_else(|| format!("expected a rate like \"4Mbit\", got {s:?}"))?;
    let u = u.trim_end_matches("/s");
    let k = match u {
        "bit" | "bps" => 1.0,
        "kbit" | "kbps" | "Kbit" | "Kbps" => 1e3,
        "Mbit" | "Mbps" | "mbit" => 1e6,
        "Gbit" | "Gbps" | "gbit" => 1e9,
        "" => return Err(format!("a rate needs a unit (bit, kbit, Mbit, Gbit), got {s:?}")),
        _ => return Err(format!("unknown rate unit {u:?} in {s:?} (use bit, kbit, Mbit, Gbit; bytes are not accepted to avoid ambiguity)")),
    };
    Ok(x * k)
}

pub fn parse_size(s: &str) -> Result<(f64, bool), String> {
    let (x, u) = split_unit(s).ok_or_else(|| format!("expected a size like \"64KB\" or \"500pkt\", got {s:?}"))?;
    let (k, pkts) = match u.as_str() {
        "B" | "byte" | "bytes" => (1.0, false),
        "KB" | "kB" => (1e3, false),
        "MB" => (1e6, false),
        "GB" => (1e9, false),
        "KiB" => (1024.0, false),
        "MiB" => (1024.0 * 1024.0, false),
        "GiB" => (1024.0 * 1024.0 * 1024.0, false),
        "pkt" | "pkts" | "p" | "packets" => (1.0, true),
        "" => return Err(format!("a size needs a unit (B, KB, MB, KiB, MiB, pkt), got {s:?}")),
        _ => return Err(format!("unknown size unit {u:?} in {s:?} (use B, KB, MB, KiB, MiB, pkt)")),
    };
    Ok((x * k, pkts))
}

/// One table of the scenario being read.
#[derive(Debug)]
pub struct Params {
    path: String,
    map: Map<String, Value>,
    used: BTreeSet<String>,
}

impl Params {
    /// Wraps `v` found at `path` ("" for the root). Errors when `v` is not a table.
    pub fn new(path: &str, v: &Value) -> Result<Params, ConfigError> {
        match v {
            Value::Object(m) => Ok(Params { path: path.to_string(), map: m.clone(), used: BTreeSet::new() }),
            other => Err(ConfigError::new(if path.is_empty() { "<root>" } else { path }, format!("expected a table, got {}", type_name(other)))),
        }
    }

    pub fn path(&self) -> &str { &self.path }

    /// A fresh reader over the same table (nothing marked read).
    pub fn duplicate(&self) -> Params { Params { path: self.path.clone(), map: self.map.clone(), used: BTreeSet::new() } }

    /// The full path of `key` in this table.
    pub fn key_path(&self, key: &str) -> String {
        if key.is_empty() {
            return if self.path.is_empty() { "<root>".into() } else { self.path.clone() };
        }
        if self.path.is_empty() { key.to_string() } else { format!("{}.{}", self.path, key) }
    }

    pub fn err(&self, key: &str, msg: impl Into<String>) -> ConfigError { ConfigError::new(self.key_path(key), msg) }

    pub fn has(&self, key: &str) -> bool { self.map.contains_key(key) }

    pub fn keys(&self) -> Vec<String> { self.map.keys().cloned().collect() }

    fn take(&mut self, key: &str) -> Option<Value> {
        let v = self.map.get(key).cloned();
        if v.is_some() {
            self.used.insert(key.to_string());
        }
        v
    }

    /// Marks `key` as read without reading it (for keys handled elsewhere).
    pub fn mark_used(&mut self, key: &str) { self.used.insert(key.to_string()); }

    /// Errors for every key that was never read, naming the first one and the known ones.
    pub fn finish(self) -> Result<(), ConfigError> {
        for k in self.map.keys() {
            if !self.used.contains(k) {
                let known: Vec<&str> = self.used.iter().map(|s| s.as_str()).collect();
                let hint = if known.is_empty() { String::new() } else { format!(" (keys read here: {})", known.join(", ")) };
                return Err(self.err(k, format!("unknown key{hint}")));
            }
        }
        Ok(())
    }

    pub fn str_opt(&mut self, key: &str) -> Result<Option<String>, ConfigError> {
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
        match self.take(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(v) => Err(self.err(key, format!("expected true or false, got {}", show(&v)))),
        }
    }

    pub fn f64_opt(&mut self, key: &str) -> Result<Option<f64>, ConfigError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(v) => Err(self.err(key, format!("expected a number, got {}", show(&v)))),
        }
    }
    pub fn f64_or(&mut self, key: &str, default: f64) -> Result<f64, ConfigError> { Ok(self.f64_opt(key)?.unwrap_or(default)) }
    pub fn f64(&mut self, key: &str) -> Result<f64, ConfigError> { self.f64_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    pub fn u64_opt(&mut self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
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
        let Some((s, v)) = self.unit_str(key, "a duration")? else { return Ok(None) };
        let x = parse_duration(&s).map_err(|m| self.err(key, m))?;
        if x < 0.0 {
            return Err(self.err(key, format!("must be >= 0, got {}", show(&v))));
        }
        Ok(Some(Time::from_secs_f64(x)))
    }
    pub fn duration(&mut self, key: &str) -> Result<Time, ConfigError> { self.duration_opt(key)?.ok_or_else(|| self.err(key, "missing")) }
    pub fn duration_or(&mut self, key: &str, d: Time) -> Result<Time, ConfigError> { Ok(self.duration_opt(key)?.unwrap_or(d)) }
    /// A duration in seconds as f64 (for distribution parameters).
    pub fn seconds_opt(&mut self, key: &str) -> Result<Option<f64>, ConfigError> {
        let Some((s, v)) = self.unit_str(key, "a duration")? else { return Ok(None) };
        let x = parse_duration(&s).map_err(|m| self.err(key, m))?;
        if x < 0.0 {
            return Err(self.err(key, format!("must be >= 0, got {}", show(&v))));
        }
        Ok(Some(x))
    }

    /// A rate > 0.
    pub fn rate_opt(&mut self, key: &str) -> Result<Option<Rate>, ConfigError> {
        let Some((s, v)) = self.unit_str(key, "a rate")? else { return Ok(None) };
        let x = parse_rate(&s).map_err(|m| self.err(key, m))?;
        if !(x >= 1.0) {
            return Err(self.err(key, format!("must be > 0, got {}", show(&v))));
        }
        Ok(Some(Rate(x.round() as u64)))
    }
    pub fn rate(&mut self, key: &str) -> Result<Rate, ConfigError> { self.rate_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    /// A size (bytes or packets) >= 0.
    pub fn size_opt(&mut self, key: &str) -> Result<Option<Size>, ConfigError> {
        let Some((s, v)) = self.unit_str(key, "a size")? else { return Ok(None) };
        let (x, pkts) = parse_size(&s).map_err(|m| self.err(key, m))?;
        if x < 0.0 {
            return Err(self.err(key, format!("must be >= 0, got {}", show(&v))));
        }
        let n = x.round() as u64;
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
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(None),
            Some(v) => Params::new(&path, &v).map(Some),
        }
    }
    pub fn table(&mut self, key: &str) -> Result<Params, ConfigError> { self.table_opt(key)?.ok_or_else(|| self.err(key, "missing")) }

    /// An array of tables (`[[flows]]`); each element's path is `key[i]`.
    pub fn tables(&mut self, key: &str) -> Result<Vec<Params>, ConfigError> {
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(vec![]),
            Some(Value::Array(items)) => items.iter().enumerate().map(|(i, v)| Params::new(&format!("{path}[{i}]"), v)).collect(),
            Some(v) => Err(self.err(key, format!("expected an array of tables, got {}", type_name(&v)))),
        }
    }

    /// The named sub-tables of a table (`[links.NAME]`), in key order.
    pub fn named_tables(&mut self, key: &str) -> Result<Vec<(String, Params)>, ConfigError> {
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(vec![]),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| Params::new(&format!("{path}.{k}"), v).map(|p| (k.clone(), p))).collect(),
            Some(v) => Err(self.err(key, format!("expected a table of named tables, got {}", type_name(&v)))),
        }
    }

    /// A raw value (for arrays of numbers/strings).
    pub fn value_opt(&mut self, key: &str) -> Option<Value> { self.take(key) }

    /// An array of strings.
    pub fn strings(&mut self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
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
