//! Values at their limits: arguments nested deeper than a stack allows.
//!
//! Deep values are built and taken apart without recursion, and the code under test runs on a
//! thread with a 2 MiB stack (a tokio worker's), so a recursive walk that comes back shows as a
//! crash of this test binary.

use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolOutcome, ToolReturnPart,
};
use toolsmith::prelude::*;
use toolsmith::validation::{MAX_NESTING, Validator};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Runs `f` on a thread with a 2 MiB stack, the size of a tokio worker's.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().unwrap()
}

/// Arrays nested `depth` levels deep around `null`.
fn deep_array(depth: usize) -> Value {
    let mut v = Value::Null;
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// Objects nested `depth` levels deep, each `{"level": n, "child": ...}`.
fn deep_object(depth: usize) -> Value {
    let mut v = Value::Null;
    for level in (0..depth).rev() {
        let mut m = serde_json::Map::new();
        m.insert("level".into(), json!(level));
        m.insert("child".into(), v);
        v = Value::Object(m);
    }
    v
}

/// `{"x": v}` (the `json!` macro would copy `v` by serialising it, which recurses).
fn x(v: Value) -> Value {
    Value::Object([("x".to_string(), v)].into_iter().collect())
}

/// Drops a value without recursing.
fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

fn call(name: &str, args: Value, id: &str) -> ModelResponsePart {
    ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))
}

/// A model whose first response makes `calls` and whose next one says "done".
fn calls_then_done(calls: Vec<(&'static str, Value)>) -> FunctionModel {
    let calls = std::sync::Mutex::new(Some(calls));
    FunctionModel::sync(move |_, _| match calls.lock().unwrap().take() {
        Some(calls) => ModelResponse::new(
            calls.into_iter().enumerate().map(|(i, (name, args))| call(name, args, &format!("call{i}"))).collect(),
        ),
        None => ModelResponse::text("done"),
    })
}

/// The tool returns of a run, in call order.
fn returns(messages: &[ModelMessage]) -> Vec<ToolReturnPart> {
    messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Deep values are errors, never stack overflows (issue 15, item 6)
// ---------------------------------------------------------------------------------------------

/// Validates `{"x": <depth levels>}` against a schema on a small stack; the input is taken apart
/// afterwards without recursion.
fn validate_deep(schema: Value, depth: usize) -> Result<Value, Vec<toolsmith::validation::ErrorDetail>> {
    on_small_stack(move || {
        let validator = Validator::compile(&schema).unwrap();
        let input = x(deep_array(depth));
        let out = validator.validate(&input);
        dismantle(input);
        out
    })
}

#[test]
fn arguments_nested_too_deeply_are_one_recursion_loop_error() {
    let schemas = [
        json!({"type": "object", "properties": {"x": {}}}),
        json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
        json!({"type": "object", "properties": {"x": {"type": "array"}}}),
        json!({"$ref": "#/$defs/T", "$defs": {"T": {"type": "object", "properties": {"x": {"$ref": "#/$defs/L"}}},
               "L": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/L"}}, {"type": "null"}]}}}),
    ];
    for schema in schemas {
        for depth in [1_000, 100_000] {
            let errors = validate_deep(schema.clone(), depth).unwrap_err();
            assert_eq!(errors.len(), 1, "{schema}");
            let e = &errors[0];
            assert_eq!(e.kind, "recursion_loop");
            assert_eq!(e.msg, "Recursion error - cyclic reference detected");
            assert_eq!(e.input, Value::Null);
            // Located at the first array past the limit: `x`, then 126 indexes.
            assert_eq!(e.loc.len(), MAX_NESTING);
            assert_eq!(e.loc[0], "x".into());
            assert!(e.loc[1..].iter().all(|l| *l == 0.into()));
        }
    }
}

#[test]
fn values_and_text_have_the_same_nesting_limit() {
    on_small_stack(|| {
        let any = Validator::compile(&json!({})).unwrap();
        let at_limit = deep_array(MAX_NESTING);
        let past = deep_array(MAX_NESTING + 1);
        // serde_json reads the one from text and refuses the other...
        assert_eq!(any.validate_str(&at_limit.to_string()).unwrap(), at_limit);
        let text_err = any.validate_str(&past.to_string()).unwrap_err();
        assert_eq!(text_err[0].kind, "json_invalid");
        assert!(text_err[0].msg.starts_with("Invalid JSON: recursion limit exceeded"), "{}", text_err[0].msg);
        // ...and so does the validator as a value.
        assert_eq!(any.validate(&at_limit).unwrap(), at_limit);
        assert_eq!(any.validate(&past).unwrap_err()[0].kind, "recursion_loop");
    });
}

#[test]
fn a_recursive_schema_validates_input_at_the_limit_on_a_small_stack() {
    // A model with an optional child of its own type: the deepest the validator recurses
    // per level of input (object, nullable, object...).
    let schema = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "title": "Node",
            "properties": {"level": {"type": "integer"}, "child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
            "required": ["level"]}}
    });
    on_small_stack(move || {
        let v = Validator::compile(&schema).unwrap();
        let input = deep_object(MAX_NESTING);
        assert_eq!(v.validate(&input).unwrap(), input);
        // A bad leaf at the bottom: its error is located all the way down.
        let mut bad = deep_object(MAX_NESTING);
        let mut leaf = &mut bad;
        for _ in 0..MAX_NESTING - 1 {
            leaf = &mut leaf["child"];
        }
        leaf["level"] = json!("deep");
        let errors = v.validate(&bad).unwrap_err();
        assert_eq!(errors[0].kind, "int_parsing");
        assert_eq!(errors[0].loc.len(), MAX_NESTING);
        assert_eq!(errors[0].loc.last(), Some(&"level".into()));
    });
}

/// Takes any value.
#[tool]
fn take_any(x: Value) -> String {
    format!("{}", x.is_array())
}

/// Takes an integer.
#[tool]
fn take_int(x: i64) -> i64 {
    x
}

#[test]
fn deep_arguments_from_a_function_model_are_retried_not_a_crash() {
    let retried = on_small_stack(|| {
        let model = calls_then_done(vec![
            ("take_any", x(deep_array(1_000))),
            ("take_int", x(deep_array(1_000))),
            ("take_any", json!({"x": [[1]]})),
        ]);
        let agent = Agent::builder(model).tools([take_any, take_int]).build().unwrap();
        let result = agent.run("go").run_sync().unwrap();
        assert_eq!(result.output(), "done");
        returns(result.all_messages())
    });
    assert_eq!(retried.len(), 3);
    for part in &retried[..2] {
        assert_eq!(part.outcome, ToolOutcome::Retried, "{part:?}");
        assert_eq!(part.content[0]["type"], "recursion_loop");
        assert_eq!(part.content[0]["loc"].as_array().unwrap().len(), MAX_NESTING);
    }
    assert_eq!(retried[2].outcome, ToolOutcome::Success);
    assert_eq!(retried[2].content, json!("true"));
}
