//! A configuration with settings of its `[sim]` section changed, as `xdma-bench predict
//! --set KEY=VALUE` and `--sweep KEY=V1,V2` give them, and as the reference path is chosen.
//!
//! A setting names a key of the `[sim]` section by its dotted path (`ip.c2h_request_ids`,
//! `timing.link.generation`, `driver.poll_mode`, ...) and gives it a value. [`apply_all`]
//! sets it generically: it knows no key, so every field the section has, now or later, can be
//! set, and the section's own checks ([`SimConfig::from_config`]) judge the result, so a value
//! of the wrong type or out of range comes back as the same [`Error::Config`] that a
//! configuration file with that value gets. This module imports no other of the crate's, so
//! that the reference tables, the sweep and the what-if table can all use it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use xdma::sim::SimConfig;
use xdma::{BackendKind, Config, Error, Result};

/// One key of the `[sim]` section and the value to give it, as `KEY=VALUE` spells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The dotted path of the key inside `[sim]`, e.g. `timing.link.generation`.
    pub key: String,
    /// The value as given: read as a TOML value (an integer, a float, a boolean, an array),
    /// else taken as a string.
    pub value: String,
}

impl Setting {
    /// A setting of `key` to `value`.
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Setting {
        Setting {
            key: key.into(),
            value: value.into(),
        }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

impl FromStr for Setting {
    type Err = Error;
    fn from_str(s: &str) -> Result<Setting> {
        let (key, value) = split_key(s, "KEY=VALUE, e.g. ip.c2h_request_ids=16")?;
        Ok(Setting::new(key, value))
    }
}

/// One key of the `[sim]` section and the values it takes in turn, as `KEY=V1,V2,...` spells
/// it: each value is a setting of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sweep {
    /// The dotted path of the key inside `[sim]`.
    pub key: String,
    /// The values, in the order given.
    pub values: Vec<String>,
}

impl Sweep {
    /// Each value as a setting of the key.
    pub fn settings(&self) -> Vec<Setting> {
        self.values
            .iter()
            .map(|v| Setting::new(self.key.clone(), v.clone()))
            .collect()
    }
}

impl FromStr for Sweep {
    type Err = Error;
    fn from_str(s: &str) -> Result<Sweep> {
        let hint = "KEY=V1,V2,..., e.g. timing.link.lanes=1,2,4,8";
        let (key, values) = split_key(s, hint)?;
        let values = split_values(values);
        if values.iter().any(|v| v.is_empty()) {
            return Err(Error::Config(format!(
                "what-if sweep `{s}`: an empty value between commas; give {hint}"
            )));
        }
        Ok(Sweep {
            key: key.to_string(),
            values,
        })
    }
}

/// `KEY=REST` split at the first `=`, both parts trimmed and neither empty.
fn split_key<'a>(s: &'a str, hint: &str) -> Result<(&'a str, &'a str)> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => Ok((k.trim(), v.trim())),
        _ => Err(Error::Config(format!(
            "what-if `{s}`: give {hint} (KEY is a dotted path inside the [sim] section)"
        ))),
    }
}

/// Values separated by commas, except commas inside brackets, braces or quotes, so that an
/// array or a quoted string can be one value of a sweep.
fn split_values(s: &str) -> Vec<String> {
    let (mut out, mut cur) = (Vec::new(), String::new());
    let (mut depth, mut quote) = (0i32, None::<char>);
    for c in s.chars() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_string());
    out
}

/// The value `text` as the setting gives it: a TOML value where the text is one (`16`,
/// `0.5`, `true`, `"card"`, `[1, 2]`), else the text itself as a string (`round-robin`).
fn parse_value(key: &str, text: &str) -> Result<Value> {
    // Parsed as the right-hand side of one assignment; text that makes more than that one
    // key (a newline and another assignment) is not one value, so it stays a string.
    let doc = format!("v = {text}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(t) if t.len() == 1 => match t.get("v") {
            Some(v) => to_json(v).ok_or_else(|| {
                Error::Config(format!(
                    "[sim] {key} = {text}: not a finite number; the [sim] section's numbers are finite"
                ))
            }),
            None => Ok(Value::String(text.to_string())),
        },
        _ => Ok(Value::String(text.to_string())),
    }
}

/// A TOML value as JSON; `None` for a float that JSON cannot hold (infinite or NaN).
fn to_json(v: &toml::Value) -> Option<Value> {
    Some(match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::Number(serde_json::Number::from_f64(*f)?),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(to_json).collect::<Option<_>>()?),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| Some((k.clone(), to_json(v)?)))
                .collect::<Option<_>>()?,
        ),
    })
}

/// The name of the table that `path` leads to, as a TOML file heads it.
fn table_name(path: &[&str]) -> String {
    if path.is_empty() {
        "[sim]".into()
    } else {
        format!("[sim.{}]", path.join("."))
    }
}

/// Sets `key` (a dotted path) in `tree`, the `[sim]` section as JSON with every field present.
fn set_path(tree: &mut Value, key: &str, value: Value) -> Result<()> {
    let mut parts: Vec<&str> = key.split('.').map(str::trim).collect();
    // A key the section renamed is still taken under its old name, with a warning.
    if let Some(new) = parts
        .first()
        .and_then(|p| xdma::sim::config::renamed_key(p))
    {
        eprintln!(
            "warning: [sim] `{}` is deprecated: it is now called `{new}`; rename it",
            parts[0]
        );
        parts[0] = new;
    }
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Error::Config(format!(
            "[sim] `{key}`: a key is names joined by dots, e.g. ip.c2h_request_ids; this one has an empty part"
        )));
    }
    let mut cur = tree;
    // Whether the keys of the current table are known: an optional table that is not set
    // (e.g. bus_pauses) has none to list, so below it the section's own check judges the keys.
    let mut known = true;
    for (i, part) in parts.iter().enumerate() {
        if cur.is_null() {
            *cur = Value::Object(Map::new());
            known = false;
        }
        let map = match cur {
            Value::Object(m) => m,
            _ => {
                let holder = parts[..i].join(".");
                return Err(Error::Config(format!(
                    "[sim] {key}: `{holder}` is a value, not a table of keys; set `{holder}` itself"
                )));
            }
        };
        if known && !map.contains_key(*part) {
            let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
            keys.sort_unstable();
            return Err(Error::Config(format!(
                "[sim] {key}: {} has no key `{part}`; its keys are: {}",
                table_name(&parts[..i]),
                keys.join(", ")
            )));
        }
        if i + 1 == parts.len() {
            map.insert((*part).to_string(), value);
            return Ok(());
        }
        cur = map.entry((*part).to_string()).or_insert(Value::Null);
    }
    Ok(())
}

/// Removes the fields that are null (optional settings not set), which TOML cannot hold.
fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// `cfg` with `key` of its `[sim]` section set to `value` (see [`apply_all`]).
pub fn apply(cfg: &Config, key: &str, value: &str) -> Result<Config> {
    apply_all(cfg, &[Setting::new(key, value)])
}

/// `cfg` with every setting applied to its `[sim]` section, checked as a whole.
///
/// The section as `cfg` gives it is read and checked ([`SimConfig::from_config`]), written out
/// with every field, each setting's key walked down its dotted path and its value set, and the
/// result read and checked again, so that the section's own rules judge it. A key that is not
/// in the section is an [`Error::Config`] naming it and listing the keys valid where it went
/// astray; a value the section refuses (the wrong type, out of range) is the section's own
/// [`Error::Config`], with the setting named in front when the section's message does not
/// name it. The settings are checked together, so that keys which are only valid together
/// can be given together.
pub fn apply_all(cfg: &Config, settings: &[Setting]) -> Result<Config> {
    for (i, s) in settings.iter().enumerate() {
        if settings[..i].iter().any(|p| p.key == s.key) {
            return Err(Error::Config(format!(
                "[sim] {} is set twice; give each key once",
                s.key
            )));
        }
    }
    let sim = SimConfig::from_config(cfg)?;
    // The walk goes over the section as JSON rather than TOML: TOML has no null, so an
    // optional field that is not set (variant, bus_pauses) would be missing from a TOML
    // table and could not be told from a key that does not exist.
    let mut tree = serde_json::to_value(&sim)
        .map_err(|e| Error::Config(format!("[sim] cannot be written out to be changed: {e}")))?;
    for s in settings {
        let v = parse_value(&s.key, &s.value)?;
        set_path(&mut tree, &s.key, v)?;
    }
    strip_nulls(&mut tree);
    let mut out = cfg.clone();
    out.set_section(BackendKind::Sim, &tree)?;
    SimConfig::from_config(&out).map_err(|e| match e {
        Error::Config(m) if settings.iter().any(|s| m.contains(&s.key)) => Error::Config(m),
        Error::Config(m) => Error::Config(format!(
            "{}: {}",
            settings
                .iter()
                .map(|s| format!("[sim] {} = {}", s.key, s.value))
                .collect::<Vec<_>>()
                .join(", "),
            m.strip_prefix("[sim] ").unwrap_or(&m)
        )),
        other => other,
    })?;
    Ok(out)
}
