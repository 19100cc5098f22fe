//! A JSON Schema of the scenario format (draft 2020-12), generated from the parser itself.
//!
//! Nothing here lists a key. [`crate::config::record`] watches every key a [`Params`] reads and
//! how it reads it (a duration, a rate, a choice from a registry, a table…); this module drives
//! [`crate::scenario::build`] from an empty document, and from each document adds what the parser
//! asked for: a key it reported missing, a key it looked for and did not find, each other value of
//! a choice (every queue discipline, congestion control, traffic kind, stack profile, jitter
//! distribution), each table it would read. A new document is explored further only while it makes
//! the parser read something not seen before (coverage-guided, as a fuzzer), so the walk ends; the
//! order is fixed, so the schema is the same bytes on every run.
//!
//! What the schema says: every table's keys and their types (units as the parsers write them), the
//! variants of a table with a required choice (a queue's `kind`, a traffic entry's `kind`, a jitter's
//! `dist`), and unknown keys refused wherever the parser refuses them. What it leaves to the parser
//! (`jitterlab validate`): which keys are required, ranges, and rules across keys (node names,
//! "give either sack or recovery"). Keys the parser reads raw because it accepts several shapes
//! (`sack`, `delack`, a trace) carry no type.
//!
//! [`Params`]: crate::config::Params
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{json, Map, Value};

use crate::config::{record, unit_syntax, Kind, Read};

/// Builds tried at most: a guard only, the walk ends by itself (after about 44 000 builds, 3 s, today).
const MAX_BUILDS: usize = 500_000;

/// A table's schema written out this large (bytes of JSON) or larger, found at several places
/// (a queue under every link form), is written once under `$defs` and referred to.
const SHARED_BYTES: usize = 400;

/// One step of a normalised table path: a key, any name of a `[key.NAME]` table, or any element
/// of a `[[key]]` array.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    Key(String),
    Name,
    Item,
}

/// A concrete path as written in errors ("links.l.queue", "traffic[0]"), split into keys and indices.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Key(String),
    Index(usize),
}

fn parse_path(p: &str) -> Vec<Step> {
    let mut out = vec![];
    if p.is_empty() || p == "<root>" {
        return out;
    }
    for part in p.split('.') {
        let (name, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(Step::Key(name.to_string()));
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            if let Ok(i) = idx.trim_end_matches(']').parse() {
                out.push(Step::Index(i));
            }
        }
    }
    out
}

fn get<'a>(doc: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, s| match s {
        Step::Key(k) => v.get(k),
        Step::Index(i) => v.get(*i),
    })
}

fn get_mut<'a>(doc: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(doc, |v, s| match s {
        Step::Key(k) => v.get_mut(k),
        Step::Index(i) => v.get_mut(*i),
    })
}

/// `doc` with `key` of the table at `table` set to `value` (None when that table is not there).
fn with(doc: &Value, table: &[Step], key: &str, value: Value) -> Option<Value> {
    let mut d = doc.clone();
    get_mut(&mut d, table)?.as_object_mut()?.insert(key.to_string(), value);
    Some(d)
}

/// Values to try for a key read as `kind`: plain, valid ones (a value the parser then rejects
/// ends that branch, which costs nothing but coverage). Names "a" and "b" are the nodes a link
/// written by the walk connects, so traffic between them builds.
fn samples(kind: &Kind) -> Vec<Value> {
    match kind {
        Kind::Str => vec![json!("a"), json!("b")],
        Kind::Choice { choices, .. } => choices.iter().map(|c| json!(c)).collect(),
        Kind::Bool => vec![json!(true), json!(false)],
        Kind::Number => vec![json!(0.5)],
        Kind::Integer => vec![json!(1)],
        Kind::Duration => vec![json!("1s")],
        Kind::Rate => vec![json!("1Mbit")],
        Kind::Size => vec![json!("1000B"), json!("10pkt")],
        Kind::Table => vec![json!({})],
        Kind::Tables => vec![json!([{}])],
        Kind::NamedTables => vec![json!({"a": {}})],
        Kind::Strings => vec![json!(["a"])],
        Kind::Any => vec![json!(true), json!(1), json!("1s"), json!({})],
        // only tested for: a table, a string or a number may be what makes it count
        Kind::Presence => vec![json!({}), json!("a"), json!(1)],
        Kind::Closed => vec![],
    }
}

/// `p` with each name of a `[key.NAME]` table (a key under a path in `named`) and each array
/// index replaced by a wildcard: the table's place in the format.
fn norm(p: &[Step], named: &BTreeSet<Vec<Step>>) -> Vec<Seg> {
    p.iter()
        .enumerate()
        .map(|(i, s)| match s {
            Step::Index(_) => Seg::Item,
            Step::Key(_) if i > 0 && named.contains(&p[..i]) => Seg::Name,
            Step::Key(k) => Seg::Key(k.clone()),
        })
        .collect()
}

/// The keys of one table variant, each with the kinds it was read as.
type Keys = BTreeMap<String, BTreeSet<Kind>>;

/// What the walk learnt: per normalised table and variant (the value of its required choice, if
/// any), each key and the kinds it was read as; the tables that refuse unknown keys.
#[derive(Default)]
struct Model {
    keys: BTreeMap<(Vec<Seg>, Option<String>), Keys>,
    closed: BTreeSet<Vec<Seg>>,
    /// Per table, its required choice (the discriminant) and that choice's values.
    discriminant: BTreeMap<Vec<Seg>, (String, Vec<String>)>,
}

impl Model {
    /// Adds one build's reads; returns how many were new.
    fn add(&mut self, doc: &Value, reads: &[Read], named: &BTreeSet<Vec<Step>>) -> usize {
        let norm = |p: &[Step]| norm(p, named);
        // the variant of each concrete table: the value its required choice holds in `doc`
        let mut variant: BTreeMap<String, String> = BTreeMap::new();
        for r in reads {
            if let Kind::Choice { choices, required: true } = &r.kind {
                let v = get(doc, &parse_path(&r.table)).and_then(|t| t.get(&r.key)).and_then(Value::as_str);
                if let Some(v) = v.filter(|v| choices.iter().any(|c| c == v)) {
                    variant.entry(r.table.clone()).or_insert_with(|| v.to_string());
                }
            }
        }
        let mut new = 0;
        for r in reads {
            let table = norm(&parse_path(&r.table));
            if r.kind == Kind::Closed {
                new += usize::from(self.closed.insert(table));
                continue;
            }
            if let Kind::Choice { choices, required: true } = &r.kind {
                let e = self.discriminant.entry(table.clone()).or_insert_with(|| (r.key.clone(), vec![]));
                if e.0 == r.key {
                    for c in choices {
                        if !e.1.contains(c) {
                            e.1.push(c.clone());
                        }
                    }
                }
            }
            let kinds = self.keys.entry((table, variant.get(&r.table).cloned())).or_default().entry(r.key.clone()).or_default();
            new += usize::from(kinds.insert(r.kind.clone()));
        }
        new
    }
}

/// Walks the parser from an empty scenario; returns what it read.
fn explore() -> Model {
    let mut model = Model::default();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut named: BTreeSet<Vec<Step>> = BTreeSet::new();
    let mut errors: BTreeSet<(Vec<Seg>, String)> = BTreeSet::new();
    let mut queue: VecDeque<Value> = VecDeque::from([json!({})]);
    let mut builds = 0;
    while let Some(doc) = queue.pop_front() {
        if builds >= MAX_BUILDS || !seen.insert(doc.to_string()) {
            continue;
        }
        builds += 1;
        let (res, mut reads) = record(|| crate::scenario::build(&doc, 1).map(|_| ()));
        // a choice reads its key as a string too: the choice is what the parser accepts
        let choices: BTreeSet<(String, String)> = reads.iter().filter(|r| matches!(r.kind, Kind::Choice { .. })).map(|r| (r.table.clone(), r.key.clone())).collect();
        reads.retain(|r| r.kind != Kind::Str || !choices.contains(&(r.table.clone(), r.key.clone())));
        for r in &reads {
            if r.kind == Kind::NamedTables {
                let mut p = parse_path(&r.table);
                p.push(Step::Key(r.key.clone()));
                named.insert(p);
            }
        }
        let missing = match &res {
            Err(e) if e.msg.starts_with("missing") => Some(e.path.clone()),
            _ => None,
        };
        let mut new = model.add(&doc, &reads, &named);
        // a refusal seen for the first time (at this place, for this reason): each key beside the
        // refused one is taken away in turn, so that a key that excludes another ("give one
        // capacity: rate or cellular") is read without it
        if let Err(e) = &res {
            if !e.msg.starts_with("missing") {
                let mut table = parse_path(&e.path);
                let key = table.pop();
                let place = format!("{:?}", key);
                if errors.insert((norm(&table, &named), place)) {
                    new += 1;
                    if let (Some(Step::Key(key)), Some(t)) = (key, get(&doc, &table).and_then(Value::as_object)) {
                        for k in t.keys().filter(|k| **k != key) {
                            let mut d = doc.clone();
                            if let Some(m) = get_mut(&mut d, &table).and_then(Value::as_object_mut) {
                                m.remove(k);
                            }
                            queue.push_back(d);
                        }
                    }
                }
            }
        }
        // the key the parser reported missing, with each value of the kind it was read as: tried
        // first (depth first), as nothing past it is read until it is there
        if let Some(path) = missing {
            let mut steps = parse_path(&path);
            if let Some(Step::Key(key)) = steps.pop() {
                let kinds: BTreeSet<&Kind> = reads.iter().filter(|r| r.key == key && parse_path(&r.table) == steps).map(|r| &r.kind).collect();
                let fills: Vec<Value> = kinds.into_iter().flat_map(samples).filter_map(|v| with(&doc, &steps, &key, v)).collect();
                for d in fills.into_iter().rev() {
                    queue.push_front(d);
                }
            }
            continue;
        }
        if new == 0 {
            continue;
        }
        // every key looked for and not found; every other value of each choice
        for r in &reads {
            let table = parse_path(&r.table);
            let Some(t) = get(&doc, &table).and_then(Value::as_object) else { continue };
            let present = t.get(&r.key);
            let tries: Vec<Value> = match (&r.kind, present) {
                (Kind::Choice { choices, .. }, Some(v)) => choices.iter().map(|c| json!(c)).filter(|c| c != v).collect(),
                (k, None) => samples(k),
                _ => vec![],
            };
            queue.extend(tries.into_iter().filter_map(|v| with(&doc, &table, &r.key, v)));
        }
    }
    model
}

/// The JSON Schema of one unit string (a number, then one of the parser's units).
fn unit_schema(kind: &Kind) -> Value {
    let (units, ignore_case, per_second) = unit_syntax(kind).expect("a unit kind");
    let esc = |u: &str| -> String {
        u.chars()
            .map(|c| {
                if ignore_case && c.is_ascii_alphabetic() {
                    format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                } else if c.is_ascii_alphanumeric() || !c.is_ascii() {
                    c.to_string()
                } else {
                    format!("\\{c}")
                }
            })
            .collect()
    };
    // longest first, so that "msec" is not cut at "ms" by a backtracking-free reader
    let mut units: Vec<&str> = units;
    units.sort_by_key(|u| std::cmp::Reverse(u.len()));
    let alt: Vec<String> = units.iter().map(|u| esc(u)).collect();
    let suffix = if per_second { "(/s)?" } else { "" };
    let what = match kind {
        Kind::Duration => "a duration, e.g. \"25ms\"",
        Kind::Rate => "a rate in bits per second, e.g. \"4Mbit\"",
        _ => "a size in bytes or packets, e.g. \"64kB\" or \"500pkt\"",
    };
    json!({
        "type": "string",
        "description": what,
        "pattern": format!("^\\s*[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?\\s*({}){suffix}\\s*$", alt.join("|")),
    })
}

struct Emit<'a> {
    m: &'a Model,
}

impl Emit<'_> {
    /// The schema of the value of `key` read as `kinds` in table `at`.
    fn value(&self, at: &[Seg], key: &str, kinds: &BTreeSet<Kind>) -> Value {
        let mut child = at.to_vec();
        child.push(Seg::Key(key.to_string()));
        let has_table = |p: &[Seg]| self.m.keys.keys().any(|(t, _)| t == p);
        let choice = kinds.iter().any(|k| matches!(k, Kind::Choice { .. }));
        let mut alts: Vec<Value> = vec![];
        for k in kinds {
            alts.push(match k {
                Kind::Presence | Kind::Closed => continue,
                Kind::Str if choice => continue,
                Kind::Str => json!({"type": "string"}),
                Kind::Choice { choices, .. } => json!({"enum": choices}),
                Kind::Bool => json!({"type": "boolean"}),
                Kind::Number => json!({"type": "number"}),
                Kind::Integer => json!({"type": "integer", "minimum": 0}),
                Kind::Duration | Kind::Rate | Kind::Size => unit_schema(k),
                Kind::Table => self.table(&child),
                Kind::Tables => {
                    let mut item = child.clone();
                    item.push(Seg::Item);
                    json!({"type": "array", "items": self.table(&item)})
                }
                Kind::NamedTables => {
                    let mut name = child.clone();
                    name.push(Seg::Name);
                    json!({"type": "object", "additionalProperties": self.table(&name)})
                }
                Kind::Strings => json!({"type": "array", "items": {"type": "string"}}),
                // read raw: any shape, but a table there is read as one (when the walk saw it)
                Kind::Any if has_table(&child) => json!({"anyOf": [{"not": {"type": "object"}}, self.table(&child)]}),
                Kind::Any => return json!({}),
            });
        }
        // choices read with different lists (never today) are merged by anyOf like other kinds
        alts.dedup();
        match alts.len() {
            0 => json!({}),
            1 => alts.pop().expect("one"),
            _ => json!({"anyOf": alts}),
        }
    }

    fn props(&self, at: &[Seg], variants: &[Option<&str>]) -> Map<String, Value> {
        let mut keys: BTreeMap<String, BTreeSet<Kind>> = BTreeMap::new();
        for v in variants {
            if let Some(k) = self.m.keys.get(&(at.to_vec(), v.map(str::to_string))) {
                for (key, kinds) in k {
                    keys.entry(key.clone()).or_default().extend(kinds.iter().cloned());
                }
            }
        }
        keys.iter().filter(|(k, _)| !k.is_empty()).map(|(k, kinds)| (k.clone(), self.value(at, k, kinds))).collect()
    }

    /// The schema of the table at `at`.
    fn table(&self, at: &[Seg]) -> Value {
        let closed = self.m.closed.contains(at);
        let seen: Vec<Option<&str>> = self.m.keys.keys().filter(|(t, _)| t == at).map(|(_, v)| v.as_deref()).collect();
        let Some((d, choices)) = self.m.discriminant.get(at) else {
            let mut s = json!({"type": "object", "properties": self.props(at, &seen)});
            if closed {
                s["additionalProperties"] = json!(false);
            }
            return s;
        };
        let mut all_of = vec![];
        for c in choices.iter().filter(|c| seen.contains(&Some(c.as_str()))) {
            let mut then = json!({"properties": self.props(at, &[None, Some(c)])});
            if closed {
                then["additionalProperties"] = json!(false);
            }
            all_of.push(json!({"if": {"properties": {d.clone(): {"const": c}}, "required": [d]}, "then": then}));
        }
        // without its choice the parser stops there (or skips the table): any key of any variant
        let mut then = json!({"properties": self.props(at, &seen)});
        if closed {
            then["additionalProperties"] = json!(false);
        }
        all_of.push(json!({"if": {"not": {"required": [d]}}, "then": then}));
        json!({"type": "object", "properties": {d.clone(): {"enum": choices}}, "allOf": all_of})
    }
}

/// Counts each table schema of at least SHARED_BYTES, children first, with the shortest key it is
/// found under (its name in `$defs`) and the order it was first met in.
fn count_tables(v: &Value, hint: &str, seen: &mut BTreeMap<String, (usize, String, usize)>, order: &mut usize) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let h = if matches!(k.as_str(), "properties" | "allOf" | "anyOf" | "then" | "if" | "items" | "additionalProperties") { hint } else { k };
                count_tables(x, h, seen, order);
            }
            if v.get("type") == Some(&json!("object")) {
                let text = v.to_string();
                if text.len() >= SHARED_BYTES {
                    *order += 1;
                    let e = seen.entry(text).or_insert_with(|| (0, hint.to_string(), *order));
                    e.0 += 1;
                    // named after the shortest key it is found under ("queue", not "core_queue")
                    if (hint.len(), hint) < (e.1.len(), e.1.as_str()) {
                        e.1 = hint.to_string();
                    }
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| count_tables(x, hint, seen, order)),
        _ => {}
    }
}

fn use_refs(v: &mut Value, names: &BTreeMap<String, String>, top: bool) {
    if !top && v.get("type") == Some(&json!("object")) {
        if let Some(n) = names.get(&v.to_string()) {
            *v = json!({"$ref": format!("#/$defs/{n}")});
            return;
        }
    }
    match v {
        Value::Object(m) => m.values_mut().for_each(|x| use_refs(x, names, false)),
        Value::Array(a) => a.iter_mut().for_each(|x| use_refs(x, names, false)),
        _ => {}
    }
}

/// `s` with every large table schema found more than once written once, under `$defs`.
fn share(mut s: Value) -> (Value, Map<String, Value>) {
    let mut seen = BTreeMap::new();
    count_tables(&s, "scenario", &mut seen, &mut 0);
    let mut shared: Vec<(usize, String, String)> = seen.into_iter().filter(|(_, (n, _, _))| *n > 1).map(|(text, (_, hint, order))| (order, hint, text)).collect();
    shared.sort();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut used: BTreeSet<String> = BTreeSet::new();
    for (_, hint, text) in &shared {
        let mut name = hint.clone();
        let mut i = 2;
        while !used.insert(name.clone()) {
            name = format!("{hint}_{i}");
            i += 1;
        }
        names.insert(text.clone(), name);
    }
    let mut defs = Map::new();
    for (text, name) in &names {
        let mut body: Value = serde_json::from_str(text).expect("our own JSON");
        use_refs(&mut body, &names, true);
        defs.insert(name.clone(), body);
    }
    use_refs(&mut s, &names, true);
    (s, defs)
}

/// The scenario format's JSON Schema (the TOML document as parsed into JSON).
pub fn scenario_schema() -> Value {
    let m = explore();
    let (mut s, defs) = share(Emit { m: &m }.table(&[]));
    let obj = s.as_object_mut().expect("the root is a table");
    let mut head = Map::new();
    head.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
    head.insert("title".into(), json!("jitterlab scenario"));
    head.insert(
        "description".into(),
        json!("Generated by `jitterlab schema` from the scenario parser: keys, types, units and choices. Required keys, ranges and rules across keys are checked by `jitterlab validate`."),
    );
    head.extend(std::mem::take(obj));
    if !defs.is_empty() {
        head.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_keys_and_indices() {
        assert_eq!(parse_path(""), vec![]);
        assert_eq!(parse_path("traffic[2].queue"), vec![Step::Key("traffic".into()), Step::Index(2), Step::Key("queue".into())]);
        assert_eq!(parse_path("links.l.reverse"), vec![Step::Key("links".into()), Step::Key("l".into()), Step::Key("reverse".into())]);
    }
}
