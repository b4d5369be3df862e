//! A checker of JSON objects field by field, for the contract ([`super`]): each read names the
//! field it takes and its type and range, and a refusal names the field by its path
//! (`records[3].ttftMs`) and says what was expected and what came. Once every field the schema names
//! is read, [`Obj::no_other_fields`] refuses any other. O(fields) per object.

use super::Invalid;
use serde_json::{Map, Value};

/// The plausible range of a number, and what it means, for the message.
pub(super) struct Range {
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) meaning: &'static str,
}

/// An object being checked, with the path prefix of its fields and the fields read so far.
pub(super) struct Obj<'a> {
    pub(super) map: &'a Map<String, Value>,
    pub(super) path: String,
    /// Every field the schema names is required, or optional and read when present, so once all of
    /// them are read, a field not read is one the schema does not name.
    pub(super) read: Vec<&'static str>,
}

impl<'a> Obj<'a> {
    pub(super) fn new(map: &'a Map<String, Value>, path: String) -> Obj<'a> {
        Obj { map, path, read: Vec::new() }
    }

    pub(super) fn invalid(&self, key: &str, problem: String) -> Invalid {
        Invalid { field: Some(format!("{}{key}", self.path)), problem }
    }

    pub(super) fn get(&mut self, key: &'static str) -> Result<&'a Value, Invalid> {
        let value = self.map.get(key).ok_or_else(|| self.invalid(key, "required field is missing".into()))?;
        self.read.push(key);
        Ok(value)
    }

    /// Refuses a field that was not read; called once every field of the object has been.
    /// O(fields × fields read).
    pub(super) fn no_other_fields(&self) -> Result<(), Invalid> {
        if self.map.len() == self.read.len() {
            return Ok(());
        }
        match self.map.keys().find(|k| !self.read.contains(&k.as_str())) {
            // The name is the sender's: cut short, so a huge key is not echoed back whole.
            Some(unknown) => Err(self.invalid(&cut(unknown, 64), "unknown field: the schema (beacon.v1) does not name it".into())),
            None => Ok(()),
        }
    }

    pub(super) fn wrong(&self, key: &str, expected: &str, got: &Value) -> Invalid {
        self.invalid(key, format!("expected {expected}, got {}", kind(got)))
    }

    pub(super) fn out_of_range(&self, key: &str, range: &Range, got: &Value) -> Invalid {
        self.invalid(key, format!("must be between {} and {} ({}), got {}", range.min, range.max, range.meaning, show(got)))
    }

    /// A number within `range`, read from `v` (a field's value, `expected` naming the type wanted).
    pub(super) fn number_in(&self, key: &str, v: &Value, range: &Range, expected: &str) -> Result<f64, Invalid> {
        let f = v.as_f64().ok_or_else(|| self.wrong(key, expected, v))?;
        if !(range.min..=range.max).contains(&f) {
            return Err(self.out_of_range(key, range, v));
        }
        Ok(f)
    }

    pub(super) fn number(&mut self, key: &'static str, range: &Range) -> Result<f64, Invalid> {
        let v = self.get(key)?;
        self.number_in(key, v, range, "a number")
    }

    pub(super) fn nullable_number(&mut self, key: &'static str, range: &Range) -> Result<Option<f64>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        self.number_in(key, v, range, "a number or null").map(Some)
    }

    /// A number within `range`, or `None` when the field is absent (`null` is refused: the schema
    /// allows a number only).
    pub(super) fn optional_number(&mut self, key: &'static str, range: &Range) -> Result<Option<f64>, Invalid> {
        if !self.map.contains_key(key) {
            return Ok(None);
        }
        self.number(key, range).map(Some)
    }

    /// An integer within `range` (whose bounds are integers far below 2^53, so the cast is exact).
    pub(super) fn integer_in(&self, key: &str, v: &Value, range: &Range, expected: &str) -> Result<i64, Invalid> {
        let f = v.as_f64().ok_or_else(|| self.wrong(key, expected, v))?;
        if f.fract() != 0.0 {
            return Err(self.invalid(key, format!("expected an integer, got {}", show(v))));
        }
        if !(range.min..=range.max).contains(&f) {
            return Err(self.out_of_range(key, range, v));
        }
        Ok(f as i64)
    }

    pub(super) fn integer(&mut self, key: &'static str, range: &Range) -> Result<i64, Invalid> {
        let v = self.get(key)?;
        self.integer_in(key, v, range, "an integer")
    }

    pub(super) fn nullable_integer(&mut self, key: &'static str, range: &Range) -> Result<Option<i64>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        self.integer_in(key, v, range, "an integer or null").map(Some)
    }

    pub(super) fn boolean(&mut self, key: &'static str) -> Result<bool, Invalid> {
        let v = self.get(key)?;
        v.as_bool().ok_or_else(|| self.wrong(key, "true or false", v))
    }

    pub(super) fn nullable_string(&mut self, key: &'static str, max_chars: usize) -> Result<Option<String>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        let s = v.as_str().ok_or_else(|| self.wrong(key, "a string or null", v))?;
        let n = s.chars().count();
        if n > max_chars {
            return Err(self.invalid(key, format!("must be at most {max_chars} characters long, got {n}")));
        }
        Ok(Some(s.to_owned()))
    }

    pub(super) fn one_of(&mut self, key: &'static str, allowed: &[&str], nullable: bool) -> Result<Option<String>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() && nullable {
            return Ok(None);
        }
        match v.as_str() {
            Some(s) if allowed.contains(&s) => Ok(Some(s.to_owned())),
            _ => {
                let list: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                let null = if nullable { " or null" } else { "" };
                Err(self.invalid(key, format!("expected one of {}{null}, got {}", list.join(", "), show(v))))
            }
        }
    }

    pub(super) fn object(&mut self, key: &'static str) -> Result<Obj<'a>, Invalid> {
        let v = self.get(key)?;
        let map = v.as_object().ok_or_else(|| self.wrong(key, "an object", v))?;
        Ok(Obj::new(map, format!("{}{key}.", self.path)))
    }

    pub(super) fn nullable_object(&mut self, key: &'static str) -> Result<Option<Obj<'a>>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        let map = v.as_object().ok_or_else(|| self.wrong(key, "an object or null", v))?;
        Ok(Some(Obj::new(map, format!("{}{key}.", self.path))))
    }}

pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value for an error message, cut short.
pub(super) fn show(v: &Value) -> String {
    cut(&v.to_string(), 80)
}

/// `s` up to `max` characters, with `…` when cut.
pub(super) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s.to_owned(),
    }
}
