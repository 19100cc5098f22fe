//! A sweep's base scenario parsed once per process, and each run's overrides set into a copy of it
//! here, from the Python values as they are (issue 31): the run's estimate and simulation then take
//! that value, where before each run's scenario went dict -> JSON text (Python) -> a parse for the
//! estimate and another for the run. Only plain values of paths that exist are set here; anything
//! else is left to Python's path (`with_overrides` answers None), which keeps its checks and errors.
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

use crate::errors::ScenarioError;

/// Deeper override values are left to Python's path (a bound on the recursion; json.dumps has its own).
const MAX_DEPTH: usize = 64;

/// A scenario as the core reads it (a JSON value, traces inlined): `estimate_json` and
/// `simulate_native` take it in place of JSON text.
#[pyclass(frozen, module = "jitterlab._native")]
pub struct PreparedScenario {
    value: Arc<Value>,
}

#[pymethods]
impl PreparedScenario {
    /// The scenario given as JSON text, parsed as `simulate_native` parses its text.
    #[new]
    fn new(scenario_json: &str) -> PyResult<Self> { Ok(Self { value: Arc::new(parse_json(scenario_json)?) }) }

    /// A copy with `overrides`, [(path, value)], set in order as `_runprep._set_fast` sets them (a path
    /// a tuple of keys and indexes, every step but the last existing with the right type); None
    /// when one cannot be set here (a step missing, a negative index, a value other than None,
    /// bool, str, int within int64/uint64, finite float, or dicts with str keys and lists of them).
    /// With no overrides, this very scenario (shared: it is never changed).
    fn with_overrides(slf: &Bound<'_, Self>, overrides: &Bound<'_, PyList>) -> PyResult<Option<Py<Self>>> {
        if overrides.is_empty() {
            return Ok(Some(slf.clone().unbind()));
        }
        let mut v = (*slf.get().value).clone();
        for item in overrides.iter() {
            let item = item.cast_into::<PyTuple>()?;
            let (path, val) = (item.get_item(0)?, item.get_item(1)?);
            let Some(path) = path_of(&path)? else { return Ok(None) };
            let Some(val) = plain(&val, 0)? else { return Ok(None) };
            if !set(&mut v, &path, val) {
                return Ok(None);
            }
        }
        Ok(Some(Py::new(slf.py(), Self { value: Arc::new(v) })?))
    }

    /// The runs table's `scenario` column: the scenario's `name` (`default` where it has none);
    /// None for a name that is not a string (the caller reads it from the scenario as a dict).
    fn name_or<'a>(&'a self, default: &'a str) -> Option<&'a str> {
        match self.value.get("name") {
            None => Some(default),
            Some(n) => n.as_str(),
        }
    }

    /// The scenario as JSON text (keys sorted; every float as its shortest round-trip digits).
    fn to_json(&self) -> String { self.value.to_string() }
}

/// The scenario `obj` names for the core: a `PreparedScenario`'s value, or JSON text parsed.
pub fn scenario_of(obj: &Bound<'_, PyAny>) -> PyResult<Arc<Value>> {
    if let Ok(p) = obj.cast::<PreparedScenario>() {
        return Ok(p.get().value.clone());
    }
    Ok(Arc::new(parse_json(obj.extract::<&str>()?)?))
}

pub fn parse_json(scenario_json: &str) -> PyResult<Value> {
    serde_json::from_str(scenario_json).map_err(|e| ScenarioError::new_err(format!("<scenario>: not valid JSON: {e}")))
}

enum Step {
    Key(String),
    Index(usize),
}

/// A path tuple of str keys and int indexes >= 0; None for anything else.
fn path_of(path: &Bound<'_, PyAny>) -> PyResult<Option<Vec<Step>>> {
    let Ok(t) = path.cast::<PyTuple>() else { return Ok(None) };
    let mut out = Vec::with_capacity(t.len());
    for p in t.iter() {
        if p.is_exact_instance_of::<PyString>() {
            let Ok(s) = p.extract::<String>() else { return Ok(None) };
            out.push(Step::Key(s));
        } else if p.is_exact_instance_of::<PyInt>() {
            let Ok(i) = p.extract::<usize>() else { return Ok(None) };
            out.push(Step::Index(i));
        } else {
            return Ok(None);
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

/// `v` as the JSON path would give it to the core (`json.dumps`, then serde_json's parse); None
/// for a value that path treats in its own way or refuses.
fn plain(v: &Bound<'_, PyAny>, depth: usize) -> PyResult<Option<Value>> {
    if depth > MAX_DEPTH {
        return Ok(None);
    }
    Ok(if v.is_none() {
        Some(Value::Null)
    } else if v.is_exact_instance_of::<PyBool>() {
        Some(Value::Bool(v.is_truthy()?))
    } else if v.is_exact_instance_of::<PyString>() {
        // a lone surrogate is not UTF-8: left to the JSON path (and its error)
        v.extract::<String>().ok().map(Value::String)
    } else if v.is_exact_instance_of::<PyInt>() {
        // serde_json's parse: a negative integer as i64, any other as u64
        match v.extract::<i64>() {
            Ok(i) => Some(Value::from(i)),
            Err(_) => v.extract::<u64>().ok().map(Value::from),
        }
    } else if v.is_exact_instance_of::<PyFloat>() {
        float(v)?
    } else if v.is_exact_instance_of::<PyDict>() {
        let d = v.cast::<PyDict>()?;
        let mut m = serde_json::Map::new();
        for (k, x) in d.iter() {
            // json.dumps turns other keys into text of its own: left to it
            if !k.is_exact_instance_of::<PyString>() {
                return Ok(None);
            }
            let Ok(k) = k.extract::<String>() else { return Ok(None) };
            let Some(x) = plain(&x, depth + 1)? else { return Ok(None) };
            m.insert(k, x);
        }
        Some(Value::Object(m))
    } else if v.is_exact_instance_of::<PyList>() {
        let l = v.cast::<PyList>()?;
        let mut a = Vec::with_capacity(l.len());
        for x in l.iter() {
            let Some(x) = plain(&x, depth + 1)? else { return Ok(None) };
            a.push(x);
        }
        Some(Value::Array(a))
    } else {
        None
    })
}

/// A finite float as the JSON path gives it to the core: the double itself, which is serde_json's
/// parse of its `repr` (what json.dumps writes) now that the workspace builds serde_json with
/// `float_roundtrip` (its default parse missed the nearest double for about one random double in
/// five; tests/test_sweep_prepared.py holds both paths to the double, bit for bit).
fn float(v: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    let f = v.cast::<PyFloat>()?.value();
    Ok(serde_json::Number::from_f64(f).map(Value::Number))
}

/// Sets `val` at `path` in `root` where every step but the last exists (an index within its
/// list, a key of its table) and the last names a list entry or a table's key; false (nothing
/// changed) otherwise.
fn set(root: &mut Value, path: &[Step], val: Value) -> bool {
    let Some((last, steps)) = path.split_last() else { return false };
    let mut cur = root;
    for s in steps {
        cur = match (s, cur) {
            (Step::Index(i), Value::Array(a)) => match a.get_mut(*i) {
                Some(x) => x,
                None => return false,
            },
            (Step::Key(k), Value::Object(m)) => match m.get_mut(k) {
                Some(x) => x,
                None => return false,
            },
            _ => return false,
        };
    }
    match (last, cur) {
        (Step::Index(i), Value::Array(a)) => match a.get_mut(*i) {
            Some(x) => *x = val,
            None => return false,
        },
        (Step::Key(k), Value::Object(m)) => {
            m.insert(k.clone(), val);
        }
        _ => return false,
    }
    true
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PreparedScenario>()?;
    Ok(())
}
