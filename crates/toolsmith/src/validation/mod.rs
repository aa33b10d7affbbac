//! Validation of tool arguments against their JSON schema, the way Pydantic v2 does it.
//!
//! A [`Validator`] is compiled once from a JSON schema into a tree of nodes (with `$ref`s
//! resolved and regexes compiled), then validates and coerces values in Pydantic's lax mode:
//! `"60"` becomes `60` for an integer, `1` becomes `1.0` for a number, `"yes"` becomes `true`
//! for a boolean, and so on. Every error is reported at once, in Pydantic's shape and order,
//! so that the retry prompt a model sees is the one Pydantic AI would have sent.
//!
//! ```
//! # use toolsmith::validation::Validator;
//! # use serde_json::json;
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
//!     "required": ["x", "y"],
//! });
//! let validator = Validator::compile(&schema).unwrap();
//! assert_eq!(validator.validate(&json!({"x": "1", "y": 2})), Ok(json!({"x": 1, "y": 2})));
//! let errors = validator.validate_str(r#"{"x": "one"}"#).unwrap_err();
//! assert_eq!(errors[0].kind, "int_parsing");
//! assert_eq!(errors[1].kind, "missing");
//! ```
//!
//! # How schemas map to Pydantic types
//!
//! `integer`, `number`, `string`, `boolean` and `null` are `int`, `float`, `str`, `bool` and
//! `None`; `enum` and `const` are `Literal[...]`; `anyOf`/`oneOf` (and `type` lists) are
//! smart-mode unions, with a `null` member making them `Optional[...]`; `oneOf` with a
//! `discriminator` is a tagged union; an array is a `list` (a `tuple` with `prefixItems`). An
//! object with `properties` is a model when it has a `title` or is a named `$defs` entry (its
//! errors then name it), and a `TypedDict` otherwise; extra keys are dropped unless
//! `additionalProperties` is `true` or a schema (then they are kept, after validation) or
//! `false` (then they are errors). An object without `properties` is a `dict`. `format` and
//! unknown keywords are ignored, except in the schemas of tools made from Rust functions and
//! types (`#[tool]`, `Tool::new`), where the numeric formats schemars writes (`int32`, `uint8`,
//! `float`...) bound values to the Rust type's range: an argument the type cannot hold is a
//! `less_than_equal` / `greater_than_equal` error at its field, as for Pydantic's
//! `conint(ge=..., le=...)` (the formats are taken out of the schema the model sees).
//!
//! # Differences from Pydantic
//!
//! A JSON value cannot hold everything a Python value can, so integers beyond the 64-bit range
//! give `int_parsing_size` (Pydantic returns a big int) and strings such as `"inf"` or `"nan"`
//! for a number give `finite_number` (Pydantic returns the float). `pattern`s use the `regex`
//! crate's syntax (Pydantic falls back to Python's `re` for look-arounds and backreferences).
//! Raw JSON is parsed by serde_json, which rejects `NaN`, `Infinity` and out-of-range numbers
//! that Pydantic's parser accepts; its error messages are otherwise the same.
//!
//! # Nesting limit
//!
//! Arguments may nest arrays and objects at most [`MAX_NESTING`] (127) levels deep: as deep as
//! serde_json's parser reads from text (its recursion limit of 128 counts the level being
//! read), so arguments sent as text and as a value have the same limit. Deeper text is
//! `json_invalid` (`"Invalid JSON: recursion limit exceeded at line 1 column 128"`); a deeper
//! value is refused before anything walks it, with one `recursion_loop` error (Pydantic's
//! error when its recursion guard trips: `"Recursion error - cyclic reference detected"`) located
//! at the first array or object past the limit, with a `null` input. Validation also gives up
//! with that error when a schema sends it more than a few hundred subschemas deep.

mod check;
pub(crate) mod depth;
mod node;
mod schema;
#[cfg(test)]
mod tests;
pub(crate) mod text;
mod unchanged;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How deeply arrays and objects may nest in the arguments a [`Validator`] accepts (see the
/// [module documentation](self#nesting-limit)).
pub const MAX_NESTING: usize = 127;

/// One validation error, serialised as `{"type", "loc", "msg", "input"}` like Pydantic's
/// `ValidationError.errors(include_url=False, include_context=False)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Pydantic's error type, such as `int_parsing`, `missing` or `extra_forbidden`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where the error is: object keys and array indexes from the root of the input.
    pub loc: Vec<LocItem>,
    /// The human-readable message, word for word as Pydantic writes it.
    pub msg: String,
    /// The offending input value (the whole object for `missing`); absent (null) in an error
    /// sent to the model after another with the same root input (see [`errors_for_model`]).
    #[serde(default)]
    pub input: Value,
}

/// Validation errors as a tool's retried return carries them: the JSON list of [`ErrorDetail`]s,
/// where the errors at the root (a location of at most one key) share one `input`, the whole value: the first
/// keeps it, a later one drops it when it is that same value (a distinct input stays, as does a
/// nested error's), as Pydantic AI sends them.
///
/// ```
/// use serde_json::json;
/// use toolsmith::validation::{Validator, errors_for_model};
///
/// let v = Validator::compile(&json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}))?;
/// let errors = v.validate(&json!({})).unwrap_err();
/// assert_eq!(
///     errors_for_model(&errors),
///     json!([
///         {"type": "missing", "loc": ["a"], "msg": "Field required", "input": {}},
///         {"type": "missing", "loc": ["b"], "msg": "Field required"}
///     ])
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn errors_for_model(errors: &[ErrorDetail]) -> Value {
    let mut root_input: Option<&Value> = None;
    let items = errors
        .iter()
        .map(|e| {
            let mut item = serde_json::Map::with_capacity(4);
            item.insert("type".into(), Value::String(e.kind.clone()));
            item.insert("loc".into(), serde_json::to_value(&e.loc).unwrap_or_default());
            item.insert("msg".into(), Value::String(e.msg.clone()));
            let keep = if e.loc.len() > 1 {
                true
            } else {
                match root_input {
                    None => {
                        root_input = Some(&e.input);
                        true
                    }
                    Some(first) => *first != e.input,
                }
            };
            if keep {
                item.insert("input".into(), e.input.clone());
            }
            Value::Object(item)
        })
        .collect();
    Value::Array(items)
}

/// One element of an error's location: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LocItem {
    /// An object key (or a union member's tag); serialises as a JSON string.
    Key(String),
    /// An array index; serialises as a JSON integer.
    Index(usize),
}

impl From<&str> for LocItem {
    fn from(key: &str) -> Self {
        LocItem::Key(key.to_owned())
    }
}

impl From<String> for LocItem {
    fn from(key: String) -> Self {
        LocItem::Key(key)
    }
}

impl From<usize> for LocItem {
    fn from(index: usize) -> Self {
        LocItem::Index(index)
    }
}

impl fmt::Display for LocItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocItem::Key(key) => f.write_str(key),
            LocItem::Index(index) => write!(f, "{index}"),
        }
    }
}

impl ErrorDetail {
    /// A `value_error` at the root, as Pydantic reports an exception raised by a validator:
    /// `{"type":"value_error","loc":[],"msg":"Value error, {message}","input":null}`.
    ///
    /// Used when deserialising validated arguments into a typed struct fails.
    pub fn value_error(message: impl Into<String>) -> Self {
        ErrorDetail {
            kind: "value_error".to_owned(),
            loc: Vec::new(),
            msg: format!("Value error, {}", message.into()),
            input: Value::Null,
        }
    }

    /// The `json_invalid` error for a raw argument string that is not valid JSON:
    /// `"Invalid JSON: {serde_json's message}"`, with the raw string as input.
    pub fn json_invalid(raw: &str, err: &serde_json::Error) -> Self {
        ErrorDetail {
            kind: "json_invalid".to_owned(),
            loc: Vec::new(),
            msg: format!("Invalid JSON: {err}"),
            input: Value::String(raw.to_owned()),
        }
    }
}

impl fmt::Display for ErrorDetail {
    /// Formats the error like one entry of Pydantic's `ValidationError` text:
    /// the dotted location (if any), then the message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.loc.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{item}")?;
        }
        if !self.loc.is_empty() {
            f.write_str(": ")?;
        }
        f.write_str(&self.msg)
    }
}

/// A JSON schema that cannot be compiled into a [`Validator`], such as one with a dangling
/// `$ref`, an unknown `type` or an invalid `pattern`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON schema at {path}: {message}")]
pub struct SchemaError {
    path: String,
    message: String,
}

impl SchemaError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        SchemaError { path: path.into(), message: message.into() }
    }

    /// Where in the schema the problem is, as a JSON pointer fragment such as
    /// `#/properties/point/$ref`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong there.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// How a [`Validator`] fills in properties that the input leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    /// Insert a missing optional property's `default` into the output (Pydantic does; on by
    /// default).
    pub fill_defaults: bool,
    /// Take an optional property that has no `default` as nullable: `null` when missing, and an
    /// explicit `null` accepted (for structured outputs, whose optional fields are always
    /// present; off by default).
    pub nullable_optionals: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { fill_defaults: true, nullable_optionals: false }
    }
}

/// A JSON schema compiled for fast validation in Pydantic v2's lax mode.
///
/// Cheap to clone (the compiled tree is shared) and safe to share between threads.
#[derive(Debug, Clone)]
pub struct Validator {
    inner: Arc<schema::Compiled>,
    /// A key whose object is accepted in place of the arguments themselves (see
    /// [`Validator::with_envelope`]).
    envelope: Option<Arc<str>>,
}

impl Validator {
    /// Compiles `schema` with the default [`Options`] (defaults filled in, optional properties
    /// without a default left out).
    pub fn compile(schema: &Value) -> Result<Validator, SchemaError> {
        Self::compile_with(schema, Options::default())
    }

    /// Compiles `schema` with the given [`Options`].
    pub fn compile_with(schema: &Value, options: Options) -> Result<Validator, SchemaError> {
        Ok(Validator { inner: Arc::new(schema::compile(schema, options, false)?), envelope: None })
    }

    /// Compiles the schema schemars generated for Rust arguments, `format`s still in it: the
    /// numeric ones (`int32`, `uint8`, `float`...) bound each value to its Rust type's range, so
    /// that an argument the type cannot hold is a `less_than_equal` / `greater_than_equal`
    /// error naming the field and the bound (as for Pydantic's `conint(le=...)`), not a failure
    /// to deserialise nor, for `f32`, an infinity. The union tags of errors stay `int` and
    /// `float`, as for Pydantic's unconstrained `int` and `float`.
    pub(crate) fn compile_for_rust_types(schema: &Value) -> Result<Validator, SchemaError> {
        Ok(Validator { inner: Arc::new(schema::compile(schema, Options::default(), true)?), envelope: None })
    }

    /// Also accepts the arguments wrapped as `{key: {...}}`: a tool whose only parameter is a
    /// struct (the schema is the struct's own) may be called with the struct under the
    /// parameter's name, as Pydantic AI accepts. Errors then point inside the wrapper.
    pub fn with_envelope(mut self, key: impl Into<Arc<str>>) -> Self {
        self.envelope = Some(key.into());
        self
    }

    fn unwrap<'v>(&self, input: &'v Value) -> &'v Value {
        match (&self.envelope, input) {
            (Some(key), Value::Object(m)) if m.len() == 1 => m.get(&**key).unwrap_or(input),
            _ => input,
        }
    }

    /// The options this validator was compiled with.
    pub fn options(&self) -> Options {
        self.inner.options
    }

    /// Validates and coerces `input`: `Ok` with the coerced value, or `Err` with every error,
    /// in the order Pydantic reports them.
    ///
    /// Errors are worded as in Pydantic's Python mode, which Pydantic AI uses for arguments a
    /// model sent as an object.
    pub fn validate(&self, input: &Value) -> Result<Value, Vec<ErrorDetail>> {
        check::validate(&self.inner, self.unwrap(input), false)
    }

    /// Like [`validate`](Self::validate), for arguments a model sent as a raw JSON string.
    ///
    /// A string that is not valid JSON gives one `json_invalid` error; an empty (or
    /// all-whitespace) string stands for `{}`. Errors are worded as in Pydantic's JSON mode
    /// (`validate_json`), which differs from Python mode for a few type errors: `"Input should
    /// be a valid array"` rather than `"... a valid list"`, `"Input should be an object"`
    /// rather than `"... a valid dictionary"`, `"Input should be null"` rather than `"... None"`.
    pub fn validate_str(&self, raw: &str) -> Result<Value, Vec<ErrorDetail>> {
        let value = parse_json_args(raw).map_err(|e| vec![e])?;
        let input = self.unwrap(&value);
        if self.unchanged(input) {
            // The parsed value is the validated one: moved out, not copied (unless it was
            // wrapped in the envelope).
            return Ok(if std::ptr::eq(input, &value) { value } else { input.clone() });
        }
        check::validate(&self.inner, input, true)
    }

    /// [`validate`](Self::validate), borrowing `input` when it is the validated value itself
    /// (valid as it is: nothing coerced, filled in or dropped, and not wrapped in the envelope),
    /// else the validated copy.
    pub(crate) fn validate_in_place<'v>(
        &self,
        input: &'v Value,
    ) -> Result<std::borrow::Cow<'v, Value>, Vec<ErrorDetail>> {
        let inner = self.unwrap(input);
        if self.unchanged(inner) {
            return Ok(if std::ptr::eq(inner, input) {
                std::borrow::Cow::Borrowed(input)
            } else {
                std::borrow::Cow::Owned(inner.clone())
            });
        }
        check::validate(&self.inner, inner, false).map(std::borrow::Cow::Owned)
    }

    /// [`validate`](Self::validate) of an owned value: `input` itself when it is valid as it
    /// is (nothing coerced, filled in or dropped), without a copy.
    pub(crate) fn validate_owned(&self, input: Value) -> Result<Value, Vec<ErrorDetail>> {
        let inner = self.unwrap(&input);
        if self.unchanged(inner) {
            return Ok(if std::ptr::eq(inner, &input) { input } else { inner.clone() });
        }
        check::validate(&self.inner, inner, false)
    }

    /// Whether validating `input` (unwrapped) would give it back as it is. Deep input is left
    /// to the validation, which refuses it.
    fn unchanged(&self, input: &Value) -> bool {
        unchanged::unchanged(&self.inner, input)
    }

    /// Validates a value parsed from JSON text, with the messages of JSON input ("Input should
    /// be a valid array", "Input should be an object", ...).
    pub(crate) fn validate_parsed(&self, value: &Value) -> Result<Value, Vec<ErrorDetail>> {
        check::validate(&self.inner, self.unwrap(value), true)
    }
}

/// Parses raw JSON arguments without validating them (for tools that skip validation).
///
/// An empty (or all-whitespace) string stands for `{}`; invalid JSON gives a `json_invalid`
/// error.
// The error is returned by value as the public API promises; this is not a hot path.
#[allow(clippy::result_large_err)]
pub fn parse_json_args(raw: &str) -> Result<Value, ErrorDetail> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(raw).map_err(|e| ErrorDetail::json_invalid(raw, &e))
}
