//! The validation API as the rest of the crate (and its users) see it.

use serde_json::{Value, json};
use toolsmith::validation::{ErrorDetail, LocItem, Options, SchemaError, Validator, parse_json_args};

fn weather_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
            "units": {"enum": ["metric", "imperial"]},
            "point": {"$ref": "#/$defs/Point"}
        },
        "required": ["city"],
        "additionalProperties": false,
        "$defs": {
            "Point": {
                "type": "object",
                "title": "Point",
                "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                "required": ["lat", "lon"]
            }
        }
    })
}

#[test]
fn coerces_fills_defaults_and_orders_keys_by_schema() {
    let v = Validator::compile(&weather_schema()).unwrap();
    let out = v.validate(&json!({"point": {"lon": "2.35", "lat": 48}, "city": "Paris"})).unwrap();
    assert_eq!(out.to_string(), r#"{"city":"Paris","days":3,"point":{"lat":48.0,"lon":2.35}}"#);
    let out = v.validate_str(r#"{"city": "Paris", "days": "7", "units": "metric"}"#).unwrap();
    assert_eq!(out.to_string(), r#"{"city":"Paris","days":7,"units":"metric"}"#);
}

#[test]
fn reports_every_error_in_pydantic_shape() {
    let v = Validator::compile(&weather_schema()).unwrap();
    let errors = v.validate(&json!({"city": "", "days": 30, "units": "kelvin", "point": [1, 2], "q": 1})).unwrap_err();
    let expected = json!([
        {"type": "string_too_short", "loc": ["city"], "msg": "String should have at least 1 character", "input": ""},
        {"type": "less_than_equal", "loc": ["days"], "msg": "Input should be less than or equal to 14", "input": 30},
        {"type": "literal_error", "loc": ["units"], "msg": "Input should be 'metric' or 'imperial'", "input": "kelvin"},
        {"type": "model_type", "loc": ["point"], "msg": "Input should be a valid dictionary or instance of Point", "input": [1, 2]},
        {"type": "extra_forbidden", "loc": ["q"], "msg": "Extra inputs are not permitted", "input": 1}
    ]);
    assert_eq!(serde_json::to_value(&errors).unwrap(), expected);

    // Arguments sent as a string are checked in pydantic's JSON mode, which words a few
    // type errors differently.
    let errors = v.validate_str(r#"{"city": "x", "point": [1, 2]}"#).unwrap_err();
    assert_eq!(errors[0].msg, "Input should be an object");
    assert_eq!(errors[0].loc, vec![LocItem::Key("point".into())]);
}

#[test]
fn raw_arguments() {
    let v = Validator::compile(&weather_schema()).unwrap();
    let errors = v.validate_str(r#"{"city": "Paris""#).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, "json_invalid");
    assert_eq!(errors[0].msg, "Invalid JSON: EOF while parsing an object at line 1 column 16");
    assert_eq!(parse_json_args("").unwrap(), json!({}));
    let err: ErrorDetail = parse_json_args("nope").unwrap_err();
    assert_eq!(err.msg, "Invalid JSON: expected ident at line 1 column 2");
}

#[test]
fn structured_output_options() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}});
    let v = Validator::compile_with(&schema, Options { fill_defaults: true, nullable_optionals: true }).unwrap();
    assert_eq!(v.validate(&json!({"a": 1})).unwrap(), json!({"a": 1, "b": null}));
}

#[test]
fn bad_schemas_are_reported() {
    let err: SchemaError = Validator::compile(&json!({"$ref": "#/$defs/Nope"})).unwrap_err();
    assert_eq!(err.path(), "#");
    assert!(err.to_string().contains("points to nothing"), "{err}");
}
