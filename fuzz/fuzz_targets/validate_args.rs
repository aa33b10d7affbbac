//! Tool arguments from the model: any bytes, as the raw JSON text a model sends, validated against
//! the schemas of real `#[tool]` functions. Validation must never panic, and arguments it accepts
//! must deserialise into the tool's own argument type (what the engine does next).

#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use toolsmith::prelude::*;

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Point {
    x: f64,
    y: f32,
    label: Option<String>,
}

/// Numbers of every width.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Numbers {
    a: i8,
    b: u8,
    c: i16,
    d: u16,
    e: i32,
    f: u32,
    g: i64,
    h: u64,
    i: f32,
    j: f64,
    k: usize,
}

/// Nested and optional shapes.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Nested {
    name: String,
    unit: Unit,
    points: Vec<Point>,
    tags: HashMap<String, i64>,
    maybe: Option<Box<Point>>,
    flags: Vec<bool>,
    #[serde(default)]
    limit: Option<u32>,
}

/// Take numbers.
#[tool]
fn numbers(args: Numbers) -> String {
    format!("{args:?}")
}

/// Take a nested document.
#[tool]
fn nested(args: Nested) -> String {
    format!("{args:?}")
}

/// Plain parameters.
#[tool]
fn plain(city: String, days: u8, metric: bool, scale: Option<f32>) -> String {
    format!("{city} {days} {metric} {scale:?}")
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct PlainArgs {
    city: String,
    days: u8,
    metric: bool,
    scale: Option<f32>,
}

fn check<T: DeserializeOwned>(tool: impl Into<Tool<()>>, raw: &str) {
    let tool: Tool<()> = tool.into();
    if let Ok(args) = tool.validate_json(raw)
        && let Err(e) = serde_json::from_value::<T>(args.clone())
    {
        panic!("validated arguments {args} do not deserialise: {e}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let Ok(raw) = std::str::from_utf8(rest) else { return };
    match which % 3 {
        0 => check::<Numbers>(numbers, raw),
        1 => check::<Nested>(nested, raw),
        _ => check::<PlainArgs>(plain, raw),
    }
});
