//! The catalogue tools of SCENARIOS.md, written with toolsmith's own `#[tool]` macro.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::ToolSpec;
use toolsmith::messages::{BinaryContent, UserContent};
use toolsmith::prelude::*;

/// A tool result typed like the Python twin's `-> dict`: any JSON object, with Pydantic's schema for
/// `dict` (`{"additionalProperties": true, "type": "object"}`, which `IncludeToolReturnSchemas` shows).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Dict(Value);

impl JsonSchema for Dict {
    fn schema_name() -> Cow<'static, str> {
        "Dict".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"additionalProperties": true, "type": "object"})
    }
}

/// The result of `get_player_name`: the deps as they are, typed like the Python twin's `-> str`
/// (the Python function returns `ctx.deps` unchecked, whatever its type).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct DepsAsStr(Value);

impl JsonSchema for DepsAsStr {
    fn schema_name() -> Cow<'static, str> {
        "DepsAsStr".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string"})
    }
}

/// Roll a six-sided die and return the result.
#[tool]
pub fn roll_dice() -> String {
    "4".into()
}

/// Get the player's name.
#[tool]
pub fn get_player_name(ctx: RunContext<Value>) -> DepsAsStr {
    DepsAsStr(ctx.deps)
}

/// Add two integers.
///
/// # Arguments
/// * `x` - first addend
/// * `y` - second addend
#[tool]
pub fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Add two numbers (sum must not exceed the configured limit).
#[tool]
pub fn add_numbers(_ctx: RunContext, x: i64, y: i64) -> i64 {
    x + y
}

#[tool]
pub fn greet(name: String) -> String {
    format!("hello {name}")
}

/// Echo the message back.
#[tool]
pub fn echo(message: String) -> String {
    message
}

/// A `float` parameter as the reference's Python function receives it: validation makes every
/// number a float (as Pydantic does), and a value a hook put in place of the arguments reaches
/// the function unvalidated, an integer staying an integer (an `f64` would make it `3.0`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PyFloat(serde_json::Number);

impl JsonSchema for PyFloat {
    fn schema_name() -> Cow<'static, str> {
        f64::schema_name()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        f64::json_schema(generator)
    }
}

/// Get me foobar.
///
/// # Arguments
/// * `a` - apple pie
/// * `b` - banana cake
/// * `c` - carrot smoothie
#[tool]
pub fn foobar(a: i64, b: String, c: BTreeMap<String, Vec<PyFloat>>) -> Dict {
    Dict(json!({"a": a, "b": b, "c": c}))
}

/// This is a Foobar
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "Foobar")]
pub struct Foobar {
    x: i64,
    y: String,
    #[serde(default = "default_z")]
    #[schemars(default = "default_z")]
    z: f64,
}

#[allow(clippy::approx_constant)] // the catalogue's default is the literal 3.14
fn default_z() -> f64 {
    3.14
}

#[tool]
pub fn foobar_model(f: Foobar) -> Dict {
    Dict(json!({"x": f.x, "y": f.y, "z": f.z}))
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct User {
    name: String,
    age: i64,
}

/// Get the user.
#[tool]
pub fn get_user() -> User {
    User { name: "John".into(), age: 30 }
}

/// Look something up.
///
/// # Arguments
/// * `query` - what to look up
#[tool]
pub fn flaky(query: String) -> Result<String, ModelRetry> {
    if query == "bad" {
        return Err(ModelRetry::new(format!("The query '{query}' is not allowed. Please provide a different query.")));
    }
    Ok("Success!".into())
}

/// A tool that always asks for a retry.
#[tool]
pub fn always_retry(reason: String) -> Result<String, ModelRetry> {
    Err(ModelRetry::new(reason))
}

/// Succeed once ctx.retry reaches n.
#[tool]
pub fn retry_until(ctx: RunContext, n: i64) -> Result<String, ModelRetry> {
    if (ctx.retry as i64) < n {
        return Err(ModelRetry::new(format!("retry {}", ctx.retry)));
    }
    Ok(format!("ok after {} retries", ctx.retry))
}

/// Report the retry state.
#[tool]
pub fn retry_state(ctx: RunContext) -> Dict {
    Dict(json!({"retry": ctx.retry, "max_retries": ctx.max_retries, "last_attempt": ctx.last_attempt()}))
}

/// Sleep for ms milliseconds.
#[tool]
pub async fn slow(ms: i64) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms.max(0) as u64)).await;
    format!("slept {ms}")
}

/// Always fails.
#[tool]
pub fn boom() -> Result<String, ToolError> {
    Err(ToolError::failed("kaboom"))
}

#[tool]
pub fn launch_potato(target: String) -> String {
    format!("Potato launched at {target}!")
}

/// Delete a file.
#[tool]
pub fn delete_file(path: String) -> String {
    format!("File '{path}' deleted")
}

/// Update a file.
#[tool]
pub fn update_file(ctx: RunContext, path: String, content: String) -> Result<String, ApprovalRequired> {
    if path.ends_with(".env") && !ctx.tool_call_approved {
        return Err(ApprovalRequired::with_metadata(json!({"reason": "protected", "path": path})));
    }
    Ok(format!("File '{path}' updated: '{content}'"))
}

/// Calculate the answer to a question.
#[tool]
pub fn calculate_answer(ctx: RunContext, question: String) -> Result<String, CallDeferred> {
    let _ = question;
    let id = ctx.tool_call_id.unwrap_or_default();
    Err(CallDeferred::with_metadata(json!({"task": format!("task-{id}")})))
}

/// Click at coordinates and show before/after screenshots.
#[tool]
pub fn click_and_capture(x: i64, y: i64) -> ToolReturn {
    ToolReturn::new(format!("Successfully clicked at ({x}, {y})"))
        .with_content(vec![
            UserContent::text("Before:"),
            BinaryContent::new(b"\x89PNG", "image/png").into(),
            UserContent::text("After:"),
            BinaryContent::new(b"\x89PNG", "image/png").into(),
        ])
        .with_metadata(json!({"coordinates": {"x": x, "y": y}}))
}

/// Calculate monthly mortgage payment for a home loan.
#[tool]
pub fn mortgage_calculator(principal: f64, rate: f64, years: i64) -> String {
    let r = rate / 100.0 / 12.0;
    let n = (years * 12) as f64;
    let f = (1.0 + r).powf(n);
    let payment = principal * r * f / (f - 1.0);
    format!("${payment:.2}/month")
}

/// The catalogue tool with this name.
pub fn lookup(name: &str) -> Option<ToolSpec> {
    Some(match name {
        "roll_dice" => roll_dice,
        "get_player_name" => get_player_name,
        "add" => add,
        "add_numbers" => add_numbers,
        "greet" => greet,
        "echo" => echo,
        "foobar" => foobar,
        "foobar_model" => foobar_model,
        "get_user" => get_user,
        "flaky" => flaky,
        "always_retry" => always_retry,
        "retry_until" => retry_until,
        "retry_state" => retry_state,
        "slow" => slow,
        "boom" => boom,
        "launch_potato" => launch_potato,
        "delete_file" => delete_file,
        "update_file" => update_file,
        "calculate_answer" => calculate_answer,
        "click_and_capture" => click_and_capture,
        "mortgage_calculator" => mortgage_calculator,
        _ => return None,
    })
}
