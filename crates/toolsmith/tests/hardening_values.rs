//! Values at their limits: arguments and histories nested deeper than a stack allows, histories
//! that must read back exactly, and numbers outside the range of a tool's Rust parameter types.
//!
//! Deep values are built and taken apart without recursion, and the code under test runs on a
//! thread with a 2 MiB stack (a tokio worker's), so a recursive walk that comes back shows as a
//! crash of this test binary.

use proptest::prelude::*;
use proptest::test_runner::Config;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith::ToolSpec;
use toolsmith::messages::{
    MAX_HISTORY_DEPTH, ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart,
    ToolOutcome, ToolReturnPart, history_from_value, history_to_json, parse_history, try_history_to_json,
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

/// Takes every tool call's arguments and tool return's content out of a history and drops
/// them without recursing.
fn dismantle_history(messages: Vec<ModelMessage>) {
    for mut m in messages {
        match &mut m {
            ModelMessage::Response(r) => {
                for p in &mut r.parts {
                    if let ModelResponsePart::ToolCall(c) = p {
                        dismantle(std::mem::take(&mut c.args));
                    }
                }
            }
            ModelMessage::Request(r) => {
                for p in &mut r.parts {
                    if let ModelRequestPart::ToolReturn(t) = p {
                        dismantle(std::mem::take(&mut t.content));
                    }
                }
            }
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

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
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

#[test]
fn arguments_too_deep_for_the_history_are_dropped_without_recursion() {
    let retried = on_small_stack(|| {
        let model = calls_then_done(vec![("take_any", x(deep_array(100_000))), ("take_any", json!({"x": [[1]]}))]);
        let agent = Agent::builder(model).tools([take_any, take_int]).build().unwrap();
        let result = agent.run("go").run_sync().unwrap();
        assert_eq!(result.output(), "done");
        // The history is written and read back.
        let written = toolsmith::messages::history_to_json(result.all_messages());
        assert!(toolsmith::messages::parse_history(&written).is_ok());
        returns(result.all_messages())
    });
    assert_eq!(retried.len(), 2);
    assert_eq!(retried[0].outcome, ToolOutcome::Retried, "{:?}", retried[0]);
    assert_eq!(retried[1].outcome, ToolOutcome::Success);
}

/// A history whose one tool call has `args` as its arguments.
fn history_with_args(args: Value) -> Vec<ModelMessage> {
    vec![
        ModelRequest::user_prompt("go").into(),
        ModelResponse::new(vec![call("t", args, "c1")]).into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success("t", json!("ok"), "c1"))]).into(),
    ]
}

#[test]
fn histories_nested_too_deeply_are_errors_when_read() {
    for depth in [1_000, 100_000] {
        let (from_value, from_text) = on_small_stack(move || {
            let value = serde_json::json!([{"kind": "response", "parts": [
                {"part_kind": "tool-call", "tool_name": "t", "tool_call_id": "c1", "args": {}}]}]);
            let mut value = value;
            value[0]["parts"][0]["args"]["x"] = deep_array(depth);
            // Written by hand: serde_json's writer recurses.
            let text = format!(
                r#"[{{"kind": "response", "parts": [{{"part_kind": "tool-call", "tool_name": "t", "tool_call_id": "c1", "args": {{"x": {}null{}}}}}]}}]"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let from_value = history_from_value(value).map(|_| ()).unwrap_err();
            let from_text = parse_history(&text).map(|_| ()).unwrap_err();
            (from_value, from_text)
        });
        for err in [&from_value, &from_text] {
            assert!(err.is_too_deep(), "{err}");
            assert!(err.to_string().contains(&format!("more than {MAX_HISTORY_DEPTH} levels deep")), "{err}");
        }
        assert!(from_value.to_string().contains("(in message 0)"), "{from_value}");
        assert!(from_text.to_string().contains("(at line 1 column "), "{from_text}");
    }
}

#[test]
fn histories_nested_too_deeply_are_refused_or_flattened_when_written() {
    for depth in [1_000, 100_000] {
        on_small_stack(move || {
            let history = history_with_args(x(deep_array(depth)));
            let err = try_history_to_json(&history).unwrap_err();
            assert!(err.is_too_deep(), "{err}");
            assert!(err.to_string().contains("(in message 1)"), "{err}");
            // history_to_json writes what lies past the limit as a string of its JSON text...
            let text = history_to_json(&history);
            let read = parse_history(&text).unwrap();
            // ...so that it reads back, and writes again unchanged.
            assert_eq!(try_history_to_json(&read).unwrap(), text);
            assert!(text.contains(r#""[[[["#), "the part past the limit is a string of JSON text");
            assert_eq!(read.len(), 3);
            dismantle_history(history);
            dismantle_history(read);
        });
    }
}

#[test]
fn histories_up_to_the_limit_are_read_and_written_on_a_small_stack() {
    // The args sit at level 5 (list, message, parts, part, args).
    let depth = MAX_HISTORY_DEPTH - 4;
    on_small_stack(move || {
        let history = history_with_args(deep_array(depth));
        let text = try_history_to_json(&history).unwrap();
        assert_eq!(history_to_json(&history), text);
        assert_eq!(parse_history(&text).unwrap(), history);
        let value: Value = {
            let mut de = serde_json::Deserializer::from_str(&text);
            de.disable_recursion_limit();
            serde::Deserialize::deserialize(&mut de).unwrap()
        };
        assert_eq!(history_from_value(value).unwrap(), history);
        // One level more is too deep for both.
        let deeper = history_with_args(deep_array(depth + 1));
        assert!(try_history_to_json(&deeper).unwrap_err().is_too_deep());
        let text = history_to_json(&deeper);
        assert!(parse_history(&text).is_ok());
    });
}

// ---------------------------------------------------------------------------------------------
// Every history written reads back, exactly (issue 15, item 13)
// ---------------------------------------------------------------------------------------------

/// Returns a document nested `levels` deep.
#[tool]
fn nested_document(levels: u32) -> Value {
    deep_object(levels as usize)
}

#[test]
fn a_tool_returning_a_deeply_nested_document_writes_a_readable_history() {
    let messages = on_small_stack(|| {
        let model = calls_then_done(vec![("nested_document", json!({"levels": 200}))]);
        let agent = Agent::builder(model).tools([nested_document]).build().unwrap();
        agent.run("go").run_sync().unwrap().all_messages().to_vec()
    });
    let returned = &returns(&messages)[0];
    assert_eq!(returned.outcome, ToolOutcome::Success);
    assert_eq!(returned.content, deep_object(200));
    // Deeper than serde_json reads by default...
    let text = history_to_json(&messages);
    assert!(serde_json::from_str::<Value>(&text).is_err());
    // ...and read back all the same, from text and from a value, on a small stack.
    let (from_text, from_value) = on_small_stack(move || {
        let from_text = parse_history(&text).unwrap();
        let value = serde_json::to_value(&from_text).unwrap();
        (from_text, history_from_value(value).unwrap())
    });
    assert_eq!(from_text, messages);
    assert_eq!(from_value, messages);
}

/// Any JSON value: every kind of number (floats from every bit pattern), strings, nesting.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<u64>()
            .prop_map(f64::from_bits)
            .prop_filter("JSON holds finite numbers", |f| f.is_finite())
            .prop_map(Value::from),
        any::<f64>().prop_filter("JSON holds finite numbers", |f| f.is_finite()).prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// `None` for `null`: an optional field that is `null` reads back as absent.
fn optional(v: Value) -> Option<Value> {
    (!v.is_null()).then_some(v)
}

/// A history carrying the values where histories carry values.
fn history_of(values: [Value; 5], text: String) -> Vec<ModelMessage> {
    let [args, content, metadata, details, extra] = values;
    let mut ret = ToolReturnPart::success("t", content, "c1");
    ret.metadata = optional(metadata).map(Box::new);
    let mut response = ModelResponse::new(vec![
        call("t", args, "c1"),
        ModelResponsePart::Text(toolsmith::messages::TextPart::new(text.clone())),
    ]);
    response.provider_details = optional(details).map(Box::new);
    let mut request = ModelRequest::user_prompt(text);
    request.metadata = optional(extra).map(Box::new);
    vec![request.into(), response.into(), ModelRequest::new(vec![ModelRequestPart::ToolReturn(ret)]).into()]
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn every_f64_reads_back_exactly(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        let history = history_with_args(json!({"x": x}));
        let read = parse_history(&history_to_json(&history)).unwrap();
        let ModelMessage::Response(r) = &read[1] else { panic!("a response") };
        let ModelResponsePart::ToolCall(c) = &r.parts[0] else { panic!("a call") };
        prop_assert_eq!(c.args["x"].as_f64().unwrap().to_bits(), x.to_bits());
    }

    #[test]
    fn histories_with_random_values_read_back_exactly(
        values in [any_json(), any_json(), any_json(), any_json(), any_json()],
        text in any::<String>(),
    ) {
        let history = history_of(values, text);
        let written = history_to_json(&history);
        prop_assert_eq!(&try_history_to_json(&history).unwrap(), &written);
        let read = parse_history(&written).unwrap();
        prop_assert_eq!(&read, &history);
        prop_assert_eq!(history_to_json(&read), written);
        prop_assert_eq!(history_from_value(serde_json::to_value(&history).unwrap()).unwrap(), history);
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers outside a Rust parameter's range are errors naming the field (issue 15, item 14)
// ---------------------------------------------------------------------------------------------

macro_rules! echo_tools {
    ($($name:ident: $ty:ty),* $(,)?) => {
        $(
            /// Returns its argument.
            #[tool]
            fn $name(v: $ty) -> $ty {
                v
            }
        )*
    };
}

echo_tools!(
    echo_i8: i8, echo_u8: u8, echo_i16: i16, echo_u16: u16, echo_i32: i32, echo_u32: u32,
    echo_i64: i64, echo_u64: u64, echo_isize: isize, echo_usize: usize, echo_f32: f32, echo_f64: f64,
);

/// The integer tools and their types' ranges.
const INT_TOOLS: [(&str, i128, i128); 10] = [
    ("echo_i8", i8::MIN as i128, i8::MAX as i128),
    ("echo_u8", 0, u8::MAX as i128),
    ("echo_i16", i16::MIN as i128, i16::MAX as i128),
    ("echo_u16", 0, u16::MAX as i128),
    ("echo_i32", i32::MIN as i128, i32::MAX as i128),
    ("echo_u32", 0, u32::MAX as i128),
    ("echo_i64", i64::MIN as i128, i64::MAX as i128),
    ("echo_u64", 0, u64::MAX as i128),
    ("echo_isize", isize::MIN as i128, isize::MAX as i128),
    ("echo_usize", 0, usize::MAX as i128),
];

fn number_agent(calls: Vec<(&'static str, Value)>) -> Agent {
    let model = calls_then_done(calls);
    Agent::builder(model)
        .tools([
            echo_i8, echo_u8, echo_i16, echo_u16, echo_i32, echo_u32, echo_i64, echo_u64, echo_isize, echo_usize,
            echo_f32, echo_f64,
        ])
        .build()
        .unwrap()
}

/// Runs one call of each tool with the given argument and returns the tool returns.
fn run_calls(calls: Vec<(&'static str, Value)>) -> Vec<ToolReturnPart> {
    let n = calls.len();
    let result = number_agent(calls).run("go").run_sync().unwrap();
    let parts = returns(result.all_messages());
    assert_eq!(parts.len(), n);
    parts
}

/// A JSON integer: any i128 in the range JSON numbers hold exactly (i64 and u64).
fn json_int(i: i128) -> Value {
    match i64::try_from(i) {
        Ok(i) => json!(i),
        Err(_) => json!(u64::try_from(i).unwrap()),
    }
}

/// The error a value out of `[min, max]` gets: Pydantic's, for `conint(ge=min, le=max)`.
fn range_error(v: i128, min: i128, max: i128, input: Value) -> Value {
    if v > max {
        json!([{"type": "less_than_equal", "loc": ["v"], "msg": format!("Input should be less than or equal to {max}"), "input": input}])
    } else {
        assert!(v < min);
        json!([{"type": "greater_than_equal", "loc": ["v"], "msg": format!("Input should be greater than or equal to {min}"), "input": input}])
    }
}

/// Any integer a JSON number holds exactly.
fn any_json_int() -> impl Strategy<Value = i128> {
    prop_oneof![
        any::<i64>().prop_map(i128::from),
        any::<u64>().prop_map(i128::from),
        any::<i8>().prop_map(i128::from),
        any::<u16>().prop_map(i128::from),
        any::<i32>().prop_map(i128::from),
        // Right at the edges of every type.
        prop::sample::select(vec![
            -129,
            -128,
            127,
            128,
            255,
            256,
            -32769,
            -32768,
            32767,
            32768,
            65535,
            65536,
            -2147483649,
            -2147483648,
            2147483647,
            2147483648,
            4294967295,
            4294967296,
            -1,
            0,
        ]),
    ]
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn integers_in_range_reach_the_tool_and_others_are_range_errors(values in prop::collection::vec(any_json_int(), 10)) {
        let calls = INT_TOOLS.iter().zip(&values).map(|((name, ..), v)| (*name, json!({"v": json_int(*v)}))).collect();
        let parts = run_calls(calls);
        for ((name, min, max), (v, part)) in INT_TOOLS.iter().zip(values.iter().zip(&parts)) {
            let input = json_int(*v);
            if (*min..=*max).contains(v) {
                prop_assert_eq!(part.outcome, ToolOutcome::Success, "{} {}", name, v);
                prop_assert_eq!(&part.content, &input);
            } else {
                prop_assert_eq!(part.outcome, ToolOutcome::Retried, "{} {}", name, v);
                prop_assert_eq!(&part.content, &range_error(*v, *min, *max, input), "{}", name);
            }
        }
    }

    #[test]
    fn integers_given_as_strings_are_checked_after_coercion(v in any_json_int()) {
        let calls = INT_TOOLS.iter().map(|(name, ..)| (*name, json!({"v": v.to_string()}))).collect();
        let parts = run_calls(calls);
        for ((name, min, max), part) in INT_TOOLS.iter().zip(&parts) {
            if (*min..=*max).contains(&v) {
                prop_assert_eq!(&part.content, &json_int(v), "{}", name);
            } else {
                prop_assert_eq!(&part.content, &range_error(v, *min, *max, json!(v.to_string())), "{}", name);
            }
        }
    }

    #[test]
    fn floats_reach_the_tool_exactly_and_f32_never_gets_infinity(bits in any::<u64>(), small in any::<u32>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        let y = f64::from(f32::from_bits(small));
        prop_assume!(y.is_finite());
        let parts = run_calls(vec![("echo_f64", json!({"v": x})), ("echo_f32", json!({"v": x})), ("echo_f32", json!({"v": y}))]);
        // f64 takes every finite number, exactly.
        prop_assert_eq!(parts[0].content.as_f64().unwrap().to_bits(), x.to_bits());
        // f32 takes what it can hold (rounded to the nearest f32), and refuses the rest.
        let max = f64::from(f32::MAX);
        if x.abs() <= max {
            prop_assert_eq!(parts[1].content.as_f64().unwrap(), f64::from(x as f32));
        } else {
            let (kind, msg) = if x > 0.0 {
                ("less_than_equal", format!("Input should be less than or equal to {max}"))
            } else {
                ("greater_than_equal", format!("Input should be greater than or equal to {}", -max))
            };
            prop_assert_eq!(&parts[1].content, &json!([{"type": kind, "loc": ["v"], "msg": msg, "input": x}]));
        }
        prop_assert_eq!(parts[2].content.as_f64().unwrap().to_bits(), y.to_bits());
    }
}

#[test]
fn the_f32_bound_is_worded_as_pydantic_words_a_float_bound() {
    let parts = run_calls(vec![("echo_f32", json!({"v": 1e300})), ("echo_f32", json!({"v": "-1e39"}))]);
    assert_eq!(
        parts[0].content,
        json!([{"type": "less_than_equal", "loc": ["v"],
                "msg": "Input should be less than or equal to 340282346638528860000000000000000000000", "input": 1e300}])
    );
    assert_eq!(parts[1].content[0]["type"], "greater_than_equal");
    assert_eq!(parts[1].content[0]["input"], "-1e39");
}

/// Sizes of things.
#[derive(Deserialize, JsonSchema)]
struct Sizes {
    /// A small count.
    small: u8,
    /// A big count.
    big: i32,
    /// A ratio.
    ratio: f32,
    /// Counts.
    counts: Vec<u16>,
    /// An optional limit.
    limit: Option<u32>,
}

/// Takes sizes.
#[tool]
fn take_sizes(sizes: Sizes) -> String {
    format!("{} {} {} {:?} {:?}", sizes.small, sizes.big, sizes.ratio, sizes.counts, sizes.limit)
}

#[test]
fn a_struct_parameters_fields_are_bounded_and_named() {
    let model = calls_then_done(vec![
        ("take_sizes", json!({"small": 1, "big": 2, "ratio": 0.5, "counts": [1, 2], "limit": 3})),
        ("take_sizes", json!({"small": 1000, "big": 3000000000u64, "ratio": 1e40, "counts": [1, 70000], "limit": -1})),
        (
            "take_sizes",
            json!({"sizes": {"small": 1, "big": -3000000000i64, "ratio": 0, "counts": [], "limit": 5000000000u64}}),
        ),
    ]);
    let agent = Agent::builder(model).tools([take_sizes]).build().unwrap();
    let parts = returns(agent.run("go").run_sync().unwrap().all_messages());
    assert_eq!(parts[0].content, json!("1 2 0.5 [1, 2] Some(3)"));
    let errors: Vec<(String, String, String)> = parts[1]
        .content
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["type"].as_str().unwrap().into(), e["loc"].to_string(), e["msg"].as_str().unwrap().into()))
        .collect();
    let expect = |t: &str, loc: &str, msg: &str| (t.to_string(), loc.to_string(), msg.to_string());
    assert_eq!(
        errors,
        vec![
            expect("less_than_equal", r#"["small"]"#, "Input should be less than or equal to 255"),
            expect("less_than_equal", r#"["big"]"#, "Input should be less than or equal to 2147483647"),
            expect(
                "less_than_equal",
                r#"["ratio"]"#,
                "Input should be less than or equal to 340282346638528860000000000000000000000"
            ),
            expect("less_than_equal", r#"["counts",1]"#, "Input should be less than or equal to 65535"),
            expect("greater_than_equal", r#"["limit"]"#, "Input should be greater than or equal to 0"),
        ]
    );
    // Wrapped under the parameter's name, the errors point inside the wrapper.
    let errors = parts[2].content.as_array().unwrap();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["loc"], json!(["big"]));
    assert_eq!(errors[0]["msg"], "Input should be greater than or equal to -2147483648");
    assert_eq!(errors[1]["loc"], json!(["limit"]));
    assert_eq!(errors[1]["msg"], "Input should be less than or equal to 4294967295");
}

#[test]
fn tool_new_bounds_its_argument_struct_too() {
    let tool: Tool<()> =
        Tool::new("sizes", |_ctx: RunContext<()>, s: Sizes| async move { Ok::<_, ModelRetry>(format!("{}", s.big)) });
    let model = calls_then_done(vec![("sizes", json!({"small": 1, "big": 1e10, "ratio": 0, "counts": []}))]);
    let agent = Agent::builder(model).tools([tool]).build().unwrap();
    let parts = returns(agent.run("go").run_sync().unwrap().all_messages());
    assert_eq!(
        parts[0].content,
        json!([{"type": "less_than_equal", "loc": ["big"], "msg": "Input should be less than or equal to 2147483647", "input": 1e10}])
    );
}

/// What `#[tool]` makes of `fn(v: T)`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct V<T> {
    v: T,
}

#[test]
fn the_schemas_the_model_sees_are_unchanged() {
    // Byte for byte what the schema functions without formats (the code path used before the
    // validator read formats) give: the formats the validator reads are not in the definitions.
    use toolsmith::tool::schema::{args_schema, model_schema};
    let text = |v: &Value| serde_json::to_string(v).unwrap();
    let def = |t: Tool<()>| text(&t.definition().parameters_json_schema);
    assert_eq!(def(take_sizes.into()), text(&model_schema::<Sizes>().0));
    assert!(!def(take_sizes.into()).contains("format"));
    let sizes: Tool<()> =
        Tool::new("sizes", |_ctx: RunContext<()>, s: Sizes| async move { Ok::<_, ModelRetry>(s.small) });
    assert_eq!(def(sizes), text(&args_schema::<Sizes>().0));
    let echoes: [(ToolSpec, Value); 12] = [
        (echo_i8, args_schema::<V<i8>>().0),
        (echo_u8, args_schema::<V<u8>>().0),
        (echo_i16, args_schema::<V<i16>>().0),
        (echo_u16, args_schema::<V<u16>>().0),
        (echo_i32, args_schema::<V<i32>>().0),
        (echo_u32, args_schema::<V<u32>>().0),
        (echo_i64, args_schema::<V<i64>>().0),
        (echo_u64, args_schema::<V<u64>>().0),
        (echo_isize, args_schema::<V<isize>>().0),
        (echo_usize, args_schema::<V<usize>>().0),
        (echo_f32, args_schema::<V<f32>>().0),
        (echo_f64, args_schema::<V<f64>>().0),
    ];
    for (tool, expected) in echoes {
        assert_eq!(def(tool.into()), text(&expected), "{}", tool.name());
    }
    // As they were: i8 keeps schemars' bounds, i32 and f32 have none.
    assert_eq!(
        def(echo_i8.into()),
        r#"{"type":"object","additionalProperties":false,"properties":{"v":{"type":"integer","maximum":127,"minimum":-128}},"required":["v"]}"#
    );
    let v = |t: ToolSpec| Tool::<()>::from(t).definition().parameters_json_schema["properties"]["v"].to_string();
    assert_eq!(v(echo_i32), r#"{"type":"integer"}"#);
    assert_eq!(v(echo_u64), r#"{"type":"integer","minimum":0}"#);
    assert_eq!(v(echo_f32), r#"{"type":"number"}"#);
}
