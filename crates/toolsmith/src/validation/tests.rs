//! Unit tests. The expected outputs were taken from pydantic 2.12 (pydantic-core 2.41) by
//! validating the same inputs against the Python types these schemas stand for.

use serde_json::{Value, json};

use super::*;

fn validator(schema: Value) -> Validator {
    match Validator::compile(&schema) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

/// The outcome as `{"ok": value}` or `{"errors": [...]}`, the shape the pydantic table uses.
fn outcome(result: Result<Value, Vec<ErrorDetail>>) -> Value {
    match result {
        Ok(v) => json!({ "ok": v }),
        Err(errors) => json!({ "errors": errors }),
    }
}

/// `(name, schema, input, expected in Python mode, expected in JSON mode when it differs)`,
/// each expectation as pydantic printed it.
#[rustfmt::skip]
const PYDANTIC_CASES: &[(&str, &str, &str, &str, &str)] = &[
    ("conformance_xy#0", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "additionalProperties": false}"##, r##"{"x": "not a number", "z": 1}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["x"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "not a number"}, {"type": "missing", "loc": ["y"], "msg": "Field required", "input": {"x": "not a number", "z": 1}}, {"type": "extra_forbidden", "loc": ["z"], "msg": "Extra inputs are not permitted", "input": 1}]}"##, r##""##),
    ("conformance_xy#1", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "additionalProperties": false}"##, r##"{"x": 1, "y": 2}"##, r##"{"ok": {"x": 1, "y": 2}}"##, r##""##),
    ("conformance_xy#2", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "additionalProperties": false}"##, r##"{"y": 2, "x": "3"}"##, r##"{"ok": {"x": 3, "y": 2}}"##, r##""##),
    ("missing_population#0", r##"{"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"}}, "required": ["city", "population"]}"##, r##"{"city": "Paris"}"##, r##"{"errors": [{"type": "missing", "loc": ["population"], "msg": "Field required", "input": {"city": "Paris"}}]}"##, r##""##),
    ("missing_population#1", r##"{"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"}}, "required": ["city", "population"]}"##, r##"{"city": "Paris", "population": "2100000"}"##, r##"{"ok": {"city": "Paris", "population": 2100000}}"##, r##""##),
    ("int#0", r##"{"type": "integer"}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("int#1", r##"{"type": "integer"}"##, r##"1.0"##, r##"{"ok": 1}"##, r##""##),
    ("int#2", r##"{"type": "integer"}"##, r##"1.5"##, r##"{"errors": [{"type": "int_from_float", "loc": [], "msg": "Input should be a valid integer, got a number with a fractional part", "input": 1.5}]}"##, r##""##),
    ("int#3", r##"{"type": "integer"}"##, r##""60""##, r##"{"ok": 60}"##, r##""##),
    ("int#4", r##"{"type": "integer"}"##, r##"" 60 ""##, r##"{"ok": 60}"##, r##""##),
    ("int#5", r##"{"type": "integer"}"##, r##""+5""##, r##"{"ok": 5}"##, r##""##),
    ("int#6", r##"{"type": "integer"}"##, r##""-5""##, r##"{"ok": -5}"##, r##""##),
    ("int#7", r##"{"type": "integer"}"##, r##""1_000""##, r##"{"ok": 1000}"##, r##""##),
    ("int#8", r##"{"type": "integer"}"##, r##""1.0""##, r##"{"ok": 1}"##, r##""##),
    ("int#9", r##"{"type": "integer"}"##, r##""1.00""##, r##"{"ok": 1}"##, r##""##),
    ("int#10", r##"{"type": "integer"}"##, r##""1.50""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "1.50"}]}"##, r##""##),
    ("int#11", r##"{"type": "integer"}"##, r##""1.""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "1."}]}"##, r##""##),
    ("int#12", r##"{"type": "integer"}"##, r##""1e3""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "1e3"}]}"##, r##""##),
    ("int#13", r##"{"type": "integer"}"##, r##""0x10""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "0x10"}]}"##, r##""##),
    ("int#14", r##"{"type": "integer"}"##, r##""""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": ""}]}"##, r##""##),
    ("int#15", r##"{"type": "integer"}"##, r##""_1""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "_1"}]}"##, r##""##),
    ("int#16", r##"{"type": "integer"}"##, r##""1__0""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "1__0"}]}"##, r##""##),
    ("int#17", r##"{"type": "integer"}"##, r##"true"##, r##"{"ok": 1}"##, r##""##),
    ("int#18", r##"{"type": "integer"}"##, r##"false"##, r##"{"ok": 0}"##, r##""##),
    ("int#19", r##"{"type": "integer"}"##, r##"null"##, r##"{"errors": [{"type": "int_type", "loc": [], "msg": "Input should be a valid integer", "input": null}]}"##, r##""##),
    ("int#20", r##"{"type": "integer"}"##, r##"[]"##, r##"{"errors": [{"type": "int_type", "loc": [], "msg": "Input should be a valid integer", "input": []}]}"##, r##""##),
    ("int#21", r##"{"type": "integer"}"##, r##"{}"##, r##"{"errors": [{"type": "int_type", "loc": [], "msg": "Input should be a valid integer", "input": {}}]}"##, r##""##),
    ("int#22", r##"{"type": "integer"}"##, r##"9.2e+18"##, r##"{"ok": 9200000000000000000}"##, r##""##),
    ("int#23", r##"{"type": "integer"}"##, r##"9.3e+18"##, r##"{"errors": [{"type": "int_parsing_size", "loc": [], "msg": "Unable to parse input string as an integer, exceeded maximum size", "input": 9.3e+18}]}"##, r##""##),
    ("int#24", r##"{"type": "integer"}"##, r##"-9.3e+18"##, r##"{"errors": [{"type": "int_parsing_size", "loc": [], "msg": "Unable to parse input string as an integer, exceeded maximum size", "input": -9.3e+18}]}"##, r##""##),
    ("int#25", r##"{"type": "integer"}"##, r##"1e+19"##, r##"{"errors": [{"type": "int_parsing_size", "loc": [], "msg": "Unable to parse input string as an integer, exceeded maximum size", "input": 1e+19}]}"##, r##""##),
    ("int#26", r##"{"type": "integer"}"##, r##""9223372036854775807""##, r##"{"ok": 9223372036854775807}"##, r##""##),
    ("int#27", r##"{"type": "integer"}"##, r##""18446744073709551615""##, r##"{"ok": 18446744073709551615}"##, r##""##),
    ("int#28", r##"{"type": "integer"}"##, r##""-9223372036854775808""##, r##"{"ok": -9223372036854775808}"##, r##""##),
    ("int#29", r##"{"type": "integer"}"##, r##""\t5\n""##, r##"{"ok": 5}"##, r##""##),
    ("int#30", r##"{"type": "integer"}"##, r##""abc""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "abc"}]}"##, r##""##),
    ("int#31", r##"{"type": "integer"}"##, r##""0001""##, r##"{"ok": 1}"##, r##""##),
    ("int#32", r##"{"type": "integer"}"##, r##""-0""##, r##"{"ok": 0}"##, r##""##),
    ("number#0", r##"{"type": "number"}"##, r##"1"##, r##"{"ok": 1.0}"##, r##""##),
    ("number#1", r##"{"type": "number"}"##, r##"105.4"##, r##"{"ok": 105.4}"##, r##""##),
    ("number#2", r##"{"type": "number"}"##, r##""1.5""##, r##"{"ok": 1.5}"##, r##""##),
    ("number#3", r##"{"type": "number"}"##, r##"" 1.5 ""##, r##"{"ok": 1.5}"##, r##""##),
    ("number#4", r##"{"type": "number"}"##, r##""1_0.5""##, r##"{"ok": 10.5}"##, r##""##),
    ("number#5", r##"{"type": "number"}"##, r##""1__0.5""##, r##"{"errors": [{"type": "float_parsing", "loc": [], "msg": "Input should be a valid number, unable to parse string as a number", "input": "1__0.5"}]}"##, r##""##),
    ("number#6", r##"{"type": "number"}"##, r##""1e3""##, r##"{"ok": 1000.0}"##, r##""##),
    ("number#7", r##"{"type": "number"}"##, r##"".5""##, r##"{"ok": 0.5}"##, r##""##),
    ("number#8", r##"{"type": "number"}"##, r##""+.5e1""##, r##"{"ok": 5.0}"##, r##""##),
    ("number#9", r##"{"type": "number"}"##, r##""abc""##, r##"{"errors": [{"type": "float_parsing", "loc": [], "msg": "Input should be a valid number, unable to parse string as a number", "input": "abc"}]}"##, r##""##),
    ("number#10", r##"{"type": "number"}"##, r##""""##, r##"{"errors": [{"type": "float_parsing", "loc": [], "msg": "Input should be a valid number, unable to parse string as a number", "input": ""}]}"##, r##""##),
    ("number#11", r##"{"type": "number"}"##, r##"true"##, r##"{"ok": 1.0}"##, r##""##),
    ("number#12", r##"{"type": "number"}"##, r##"false"##, r##"{"ok": 0.0}"##, r##""##),
    ("number#13", r##"{"type": "number"}"##, r##"null"##, r##"{"errors": [{"type": "float_type", "loc": [], "msg": "Input should be a valid number", "input": null}]}"##, r##""##),
    ("number#14", r##"{"type": "number"}"##, r##"[]"##, r##"{"errors": [{"type": "float_type", "loc": [], "msg": "Input should be a valid number", "input": []}]}"##, r##""##),
    ("number#15", r##"{"type": "number"}"##, r##"18446744073709551615"##, r##"{"ok": 1.8446744073709552e+19}"##, r##""##),
    ("number#16", r##"{"type": "number"}"##, r##""1,5""##, r##"{"errors": [{"type": "float_parsing", "loc": [], "msg": "Input should be a valid number, unable to parse string as a number", "input": "1,5"}]}"##, r##""##),
    ("number#17", r##"{"type": "number"}"##, r##""0x1p3""##, r##"{"errors": [{"type": "float_parsing", "loc": [], "msg": "Input should be a valid number, unable to parse string as a number", "input": "0x1p3"}]}"##, r##""##),
    ("string#0", r##"{"type": "string"}"##, r##""x""##, r##"{"ok": "x"}"##, r##""##),
    ("string#1", r##"{"type": "string"}"##, r##""""##, r##"{"ok": ""}"##, r##""##),
    ("string#2", r##"{"type": "string"}"##, r##"1"##, r##"{"errors": [{"type": "string_type", "loc": [], "msg": "Input should be a valid string", "input": 1}]}"##, r##""##),
    ("string#3", r##"{"type": "string"}"##, r##"1.5"##, r##"{"errors": [{"type": "string_type", "loc": [], "msg": "Input should be a valid string", "input": 1.5}]}"##, r##""##),
    ("string#4", r##"{"type": "string"}"##, r##"true"##, r##"{"errors": [{"type": "string_type", "loc": [], "msg": "Input should be a valid string", "input": true}]}"##, r##""##),
    ("string#5", r##"{"type": "string"}"##, r##"null"##, r##"{"errors": [{"type": "string_type", "loc": [], "msg": "Input should be a valid string", "input": null}]}"##, r##""##),
    ("string#6", r##"{"type": "string"}"##, r##"[]"##, r##"{"errors": [{"type": "string_type", "loc": [], "msg": "Input should be a valid string", "input": []}]}"##, r##""##),
    ("string#7", r##"{"type": "string"}"##, r##"{}"##, r##"{"errors": [{"type": "string_type", "loc": [], "msg": "Input should be a valid string", "input": {}}]}"##, r##""##),
    ("boolean#0", r##"{"type": "boolean"}"##, r##"true"##, r##"{"ok": true}"##, r##""##),
    ("boolean#1", r##"{"type": "boolean"}"##, r##"false"##, r##"{"ok": false}"##, r##""##),
    ("boolean#2", r##"{"type": "boolean"}"##, r##""true""##, r##"{"ok": true}"##, r##""##),
    ("boolean#3", r##"{"type": "boolean"}"##, r##""True""##, r##"{"ok": true}"##, r##""##),
    ("boolean#4", r##"{"type": "boolean"}"##, r##""TRUE""##, r##"{"ok": true}"##, r##""##),
    ("boolean#5", r##"{"type": "boolean"}"##, r##""yes""##, r##"{"ok": true}"##, r##""##),
    ("boolean#6", r##"{"type": "boolean"}"##, r##""no""##, r##"{"ok": false}"##, r##""##),
    ("boolean#7", r##"{"type": "boolean"}"##, r##""on""##, r##"{"ok": true}"##, r##""##),
    ("boolean#8", r##"{"type": "boolean"}"##, r##""off""##, r##"{"ok": false}"##, r##""##),
    ("boolean#9", r##"{"type": "boolean"}"##, r##""1""##, r##"{"ok": true}"##, r##""##),
    ("boolean#10", r##"{"type": "boolean"}"##, r##""0""##, r##"{"ok": false}"##, r##""##),
    ("boolean#11", r##"{"type": "boolean"}"##, r##""t""##, r##"{"ok": true}"##, r##""##),
    ("boolean#12", r##"{"type": "boolean"}"##, r##""f""##, r##"{"ok": false}"##, r##""##),
    ("boolean#13", r##"{"type": "boolean"}"##, r##""y""##, r##"{"ok": true}"##, r##""##),
    ("boolean#14", r##"{"type": "boolean"}"##, r##""n""##, r##"{"ok": false}"##, r##""##),
    ("boolean#15", r##"{"type": "boolean"}"##, r##""""##, r##"{"errors": [{"type": "bool_parsing", "loc": [], "msg": "Input should be a valid boolean, unable to interpret input", "input": ""}]}"##, r##""##),
    ("boolean#16", r##"{"type": "boolean"}"##, r##"" true""##, r##"{"errors": [{"type": "bool_parsing", "loc": [], "msg": "Input should be a valid boolean, unable to interpret input", "input": " true"}]}"##, r##""##),
    ("boolean#17", r##"{"type": "boolean"}"##, r##""2""##, r##"{"errors": [{"type": "bool_parsing", "loc": [], "msg": "Input should be a valid boolean, unable to interpret input", "input": "2"}]}"##, r##""##),
    ("boolean#18", r##"{"type": "boolean"}"##, r##"0"##, r##"{"ok": false}"##, r##""##),
    ("boolean#19", r##"{"type": "boolean"}"##, r##"1"##, r##"{"ok": true}"##, r##""##),
    ("boolean#20", r##"{"type": "boolean"}"##, r##"2"##, r##"{"errors": [{"type": "bool_parsing", "loc": [], "msg": "Input should be a valid boolean, unable to interpret input", "input": 2}]}"##, r##""##),
    ("boolean#21", r##"{"type": "boolean"}"##, r##"-1"##, r##"{"errors": [{"type": "bool_parsing", "loc": [], "msg": "Input should be a valid boolean, unable to interpret input", "input": -1}]}"##, r##""##),
    ("boolean#22", r##"{"type": "boolean"}"##, r##"0.0"##, r##"{"ok": false}"##, r##""##),
    ("boolean#23", r##"{"type": "boolean"}"##, r##"1.0"##, r##"{"ok": true}"##, r##""##),
    ("boolean#24", r##"{"type": "boolean"}"##, r##"2.0"##, r##"{"errors": [{"type": "bool_parsing", "loc": [], "msg": "Input should be a valid boolean, unable to interpret input", "input": 2.0}]}"##, r##""##),
    ("boolean#25", r##"{"type": "boolean"}"##, r##"0.5"##, r##"{"errors": [{"type": "bool_type", "loc": [], "msg": "Input should be a valid boolean", "input": 0.5}]}"##, r##""##),
    ("boolean#26", r##"{"type": "boolean"}"##, r##"null"##, r##"{"errors": [{"type": "bool_type", "loc": [], "msg": "Input should be a valid boolean", "input": null}]}"##, r##""##),
    ("boolean#27", r##"{"type": "boolean"}"##, r##"[]"##, r##"{"errors": [{"type": "bool_type", "loc": [], "msg": "Input should be a valid boolean", "input": []}]}"##, r##""##),
    ("boolean#28", r##"{"type": "boolean"}"##, r##"{}"##, r##"{"errors": [{"type": "bool_type", "loc": [], "msg": "Input should be a valid boolean", "input": {}}]}"##, r##""##),
    ("null#0", r##"{"type": "null"}"##, r##"null"##, r##"{"ok": null}"##, r##""##),
    ("null#1", r##"{"type": "null"}"##, r##"0"##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be None", "input": 0}]}"##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be null", "input": 0}]}"##),
    ("null#2", r##"{"type": "null"}"##, r##""""##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be None", "input": ""}]}"##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be null", "input": ""}]}"##),
    ("null#3", r##"{"type": "null"}"##, r##""null""##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be None", "input": "null"}]}"##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be null", "input": "null"}]}"##),
    ("null#4", r##"{"type": "null"}"##, r##"[]"##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be None", "input": []}]}"##, r##"{"errors": [{"type": "none_required", "loc": [], "msg": "Input should be null", "input": []}]}"##),
    ("list#0", r##"{"type": "array", "items": {"type": "integer"}}"##, r##"[1, "2"]"##, r##"{"ok": [1, 2]}"##, r##""##),
    ("list#1", r##"{"type": "array", "items": {"type": "integer"}}"##, r##"[1, "x", null]"##, r##"{"errors": [{"type": "int_parsing", "loc": [1], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "int_type", "loc": [2], "msg": "Input should be a valid integer", "input": null}]}"##, r##""##),
    ("list#2", r##"{"type": "array", "items": {"type": "integer"}}"##, r##""ab""##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid list", "input": "ab"}]}"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid array", "input": "ab"}]}"##),
    ("list#3", r##"{"type": "array", "items": {"type": "integer"}}"##, r##"{"a": 1}"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid list", "input": {"a": 1}}]}"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid array", "input": {"a": 1}}]}"##),
    ("list#4", r##"{"type": "array", "items": {"type": "integer"}}"##, r##"1"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid list", "input": 1}]}"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid array", "input": 1}]}"##),
    ("list#5", r##"{"type": "array", "items": {"type": "integer"}}"##, r##"null"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid list", "input": null}]}"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid array", "input": null}]}"##),
    ("list#6", r##"{"type": "array", "items": {"type": "integer"}}"##, r##"[]"##, r##"{"ok": []}"##, r##""##),
    ("list_any", r##"{"type": "array"}"##, r##"[1, "a", null]"##, r##"{"ok": [1, "a", null]}"##, r##""##),
    ("list_min#0", r##"{"type": "array", "items": {"type": "integer"}, "minItems": 2}"##, r##"[1]"##, r##"{"errors": [{"type": "too_short", "loc": [], "msg": "List should have at least 2 items after validation, not 1", "input": [1]}]}"##, r##""##),
    ("list_min#1", r##"{"type": "array", "items": {"type": "integer"}, "minItems": 2}"##, r##"["a"]"##, r##"{"errors": [{"type": "int_parsing", "loc": [0], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "a"}]}"##, r##""##),
    ("list_min#2", r##"{"type": "array", "items": {"type": "integer"}, "minItems": 2}"##, r##"[1, 2]"##, r##"{"ok": [1, 2]}"##, r##""##),
    ("list_min1", r##"{"type": "array", "items": {"type": "integer"}, "minItems": 1}"##, r##"[]"##, r##"{"errors": [{"type": "too_short", "loc": [], "msg": "List should have at least 1 item after validation, not 0", "input": []}]}"##, r##""##),
    ("list_max#0", r##"{"type": "array", "items": {"type": "integer"}, "maxItems": 2}"##, r##"[1, 2, 3]"##, r##"{"errors": [{"type": "too_long", "loc": [], "msg": "List should have at most 2 items after validation, not 3", "input": [1, 2, 3]}]}"##, r##""##),
    ("list_max#1", r##"{"type": "array", "items": {"type": "integer"}, "maxItems": 2}"##, r##"[1, "a", 3, "b"]"##, r##"{"errors": [{"type": "too_long", "loc": [], "msg": "List should have at most 2 items after validation, not 4", "input": [1, "a", 3, "b"]}]}"##, r##""##),
    ("list_max#2", r##"{"type": "array", "items": {"type": "integer"}, "maxItems": 2}"##, r##"["a", "b"]"##, r##"{"errors": [{"type": "int_parsing", "loc": [0], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "a"}, {"type": "int_parsing", "loc": [1], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "b"}]}"##, r##""##),
    ("list_max1", r##"{"type": "array", "items": {"type": "integer"}, "maxItems": 1}"##, r##"[1, 2]"##, r##"{"errors": [{"type": "too_long", "loc": [], "msg": "List should have at most 1 item after validation, not 2", "input": [1, 2]}]}"##, r##""##),
    ("tuple#0", r##"{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}"##, r##"[1, "a"]"##, r##"{"ok": [1, "a"]}"##, r##""##),
    ("tuple#1", r##"{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}"##, r##"["1", "a"]"##, r##"{"ok": [1, "a"]}"##, r##""##),
    ("tuple#2", r##"{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}"##, r##"[1]"##, r##"{"errors": [{"type": "missing", "loc": [1], "msg": "Field required", "input": [1]}]}"##, r##""##),
    ("tuple#3", r##"{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}"##, r##"[]"##, r##"{"errors": [{"type": "missing", "loc": [0], "msg": "Field required", "input": []}, {"type": "missing", "loc": [1], "msg": "Field required", "input": []}]}"##, r##""##),
    ("tuple#4", r##"{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}"##, r##"["x", 2]"##, r##"{"errors": [{"type": "int_parsing", "loc": [0], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "string_type", "loc": [1], "msg": "Input should be a valid string", "input": 2}]}"##, r##""##),
    ("tuple#5", r##"{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}"##, r##"[1, "a", 3]"##, r##"{"errors": [{"type": "too_long", "loc": [], "msg": "Tuple should have at most 2 items after validation, not 3", "input": [1, "a", 3]}]}"##, r##""##),
    ("tuple#6", r##"{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}"##, r##""ab""##, r##"{"errors": [{"type": "tuple_type", "loc": [], "msg": "Input should be a valid tuple", "input": "ab"}]}"##, r##"{"errors": [{"type": "tuple_type", "loc": [], "msg": "Input should be a valid array", "input": "ab"}]}"##),
    ("tuple_var#0", r##"{"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}"##, r##"[1, "a", "b"]"##, r##"{"ok": [1, "a", "b"]}"##, r##""##),
    ("tuple_var#1", r##"{"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}"##, r##"[1, "a", 2]"##, r##"{"errors": [{"type": "string_type", "loc": [2], "msg": "Input should be a valid string", "input": 2}]}"##, r##""##),
    ("tuple_var#2", r##"{"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}"##, r##"[]"##, r##"{"errors": [{"type": "missing", "loc": [0], "msg": "Field required", "input": []}]}"##, r##""##),
    ("dict#0", r##"{"type": "object", "additionalProperties": {"type": "integer"}}"##, r##"{"a": "1", "b": 2}"##, r##"{"ok": {"a": 1, "b": 2}}"##, r##""##),
    ("dict#1", r##"{"type": "object", "additionalProperties": {"type": "integer"}}"##, r##"{"a": "x", "b": 1, "c": null}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["a"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "int_type", "loc": ["c"], "msg": "Input should be a valid integer", "input": null}]}"##, r##""##),
    ("dict#2", r##"{"type": "object", "additionalProperties": {"type": "integer"}}"##, r##"[]"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": []}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": []}]}"##),
    ("dict#3", r##"{"type": "object", "additionalProperties": {"type": "integer"}}"##, r##""x""##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": "x"}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": "x"}]}"##),
    ("dict_any#0", r##"{"type": "object"}"##, r##"{"a": 1, "b": [1]}"##, r##"{"ok": {"a": 1, "b": [1]}}"##, r##""##),
    ("dict_any#1", r##"{"type": "object"}"##, r##"[]"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": []}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": []}]}"##),
    ("dict_any#2", r##"{"type": "object"}"##, r##"null"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": null}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": null}]}"##),
    ("dict_min#0", r##"{"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2}"##, r##"{"a": 1}"##, r##"{"errors": [{"type": "too_short", "loc": [], "msg": "Dictionary should have at least 2 items after validation, not 1", "input": {"a": 1}}]}"##, r##""##),
    ("dict_min#1", r##"{"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2}"##, r##"{"a": "x"}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["a"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}]}"##, r##""##),
    ("dict_max#0", r##"{"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 1}"##, r##"{"a": "x", "b": 2, "c": 3}"##, r##"{"errors": [{"type": "too_long", "loc": [], "msg": "Dictionary should have at most 1 item after validation, not more", "input": {"a": "x", "b": 2, "c": 3}}]}"##, r##""##),
    ("dict_max#1", r##"{"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 1}"##, r##"{"a": 1}"##, r##"{"ok": {"a": 1}}"##, r##""##),
    ("typed_dict#0", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]}"##, r##"{"a": 1, "b": "x", "c": 3}"##, r##"{"ok": {"a": 1, "b": "x"}}"##, r##""##),
    ("typed_dict#1", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]}"##, r##"{"c": 3, "b": 1}"##, r##"{"errors": [{"type": "missing", "loc": ["a"], "msg": "Field required", "input": {"c": 3, "b": 1}}, {"type": "string_type", "loc": ["b"], "msg": "Input should be a valid string", "input": 1}]}"##, r##""##),
    ("typed_dict#2", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]}"##, r##"[]"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": []}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": []}]}"##),
    ("typed_dict#3", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]}"##, r##""x""##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": "x"}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": "x"}]}"##),
    ("typed_dict#4", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]}"##, r##"null"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": null}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": null}]}"##),
    ("typed_dict_allow", r##"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": true}"##, r##"{"z": 1, "a": "2", "y": [1]}"##, r##"{"ok": {"a": 2, "z": 1, "y": [1]}}"##, r##""##),
    ("typed_dict_extras_schema", r##"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": {"type": "integer"}}"##, r##"{"z": "1", "a": "2", "y": "x", "w": null}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["y"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "int_type", "loc": ["w"], "msg": "Input should be a valid integer", "input": null}]}"##, r##""##),
    ("typed_dict_forbid", r##"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false}"##, r##"{"q": 1, "a": "x", "r": 2}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["a"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "extra_forbidden", "loc": ["q"], "msg": "Extra inputs are not permitted", "input": 1}, {"type": "extra_forbidden", "loc": ["r"], "msg": "Extra inputs are not permitted", "input": 2}]}"##, r##""##),
    ("empty_forbid#0", r##"{"type": "object", "properties": {}, "additionalProperties": false}"##, r##"{}"##, r##"{"ok": {}}"##, r##""##),
    ("empty_forbid#1", r##"{"type": "object", "properties": {}, "additionalProperties": false}"##, r##"{"a": 1}"##, r##"{"errors": [{"type": "extra_forbidden", "loc": ["a"], "msg": "Extra inputs are not permitted", "input": 1}]}"##, r##""##),
    ("empty_ignore", r##"{"type": "object", "properties": {}}"##, r##"{"a": 1}"##, r##"{"ok": {}}"##, r##""##),
    ("defaults#0", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 5}, "c": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}, "d": {"type": "string"}}, "required": ["a"]}"##, r##"{"a": 1}"##, r##"{"ok": {"a": 1, "b": 5, "c": null}}"##, r##""##),
    ("defaults#1", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 5}, "c": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}, "d": {"type": "string"}}, "required": ["a"]}"##, r##"{"d": "x", "a": "1", "c": 3}"##, r##"{"ok": {"a": 1, "b": 5, "c": 3, "d": "x"}}"##, r##""##),
    ("defaults#2", r##"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 5}, "c": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}, "d": {"type": "string"}}, "required": ["a"]}"##, r##"{"b": "x"}"##, r##"{"errors": [{"type": "missing", "loc": ["a"], "msg": "Field required", "input": {"b": "x"}}, {"type": "int_parsing", "loc": ["b"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}]}"##, r##""##),
    ("model#0", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}"##, r##"{"x": 1, "y": "2"}"##, r##"{"ok": {"x": 1, "y": 2}}"##, r##""##),
    ("model#1", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}"##, r##"[]"##, r##"{"errors": [{"type": "model_type", "loc": [], "msg": "Input should be a valid dictionary or instance of Point", "input": []}]}"##, r##"{"errors": [{"type": "model_type", "loc": [], "msg": "Input should be an object", "input": []}]}"##),
    ("model#2", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}"##, r##""x""##, r##"{"errors": [{"type": "model_type", "loc": [], "msg": "Input should be a valid dictionary or instance of Point", "input": "x"}]}"##, r##"{"errors": [{"type": "model_type", "loc": [], "msg": "Input should be an object", "input": "x"}]}"##),
    ("model#3", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}"##, r##"null"##, r##"{"errors": [{"type": "model_type", "loc": [], "msg": "Input should be a valid dictionary or instance of Point", "input": null}]}"##, r##"{"errors": [{"type": "model_type", "loc": [], "msg": "Input should be an object", "input": null}]}"##),
    ("model#4", r##"{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}"##, r##"{"x": "a"}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["x"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "a"}, {"type": "missing", "loc": ["y"], "msg": "Field required", "input": {"x": "a"}}]}"##, r##""##),
    ("nested#0", r##"{"type": "object", "title": "Outer", "properties": {"point": {"$ref": "#/$defs/Point"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["point", "tags"], "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}}}"##, r##"{"point": {"x": "a"}, "tags": ["a", 1]}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["point", "x"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "a"}, {"type": "missing", "loc": ["point", "y"], "msg": "Field required", "input": {"x": "a"}}, {"type": "string_type", "loc": ["tags", 1], "msg": "Input should be a valid string", "input": 1}]}"##, r##""##),
    ("nested#1", r##"{"type": "object", "title": "Outer", "properties": {"point": {"$ref": "#/$defs/Point"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["point", "tags"], "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}}}"##, r##"{"point": 3, "tags": "x"}"##, r##"{"errors": [{"type": "model_type", "loc": ["point"], "msg": "Input should be a valid dictionary or instance of Point", "input": 3}, {"type": "list_type", "loc": ["tags"], "msg": "Input should be a valid list", "input": "x"}]}"##, r##"{"errors": [{"type": "model_type", "loc": ["point"], "msg": "Input should be an object", "input": 3}, {"type": "list_type", "loc": ["tags"], "msg": "Input should be a valid array", "input": "x"}]}"##),
    ("nested#2", r##"{"type": "object", "title": "Outer", "properties": {"point": {"$ref": "#/$defs/Point"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["point", "tags"], "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "Point"}}}"##, r##"{"point": {"x": 1, "y": 2, "z": 3}, "tags": []}"##, r##"{"ok": {"point": {"x": 1, "y": 2}, "tags": []}}"##, r##""##),
    ("nested_untitled_def#0", r##"{"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}"##, r##"{"p": 1}"##, r##"{"errors": [{"type": "model_type", "loc": ["p"], "msg": "Input should be a valid dictionary or instance of P", "input": 1}]}"##, r##"{"errors": [{"type": "model_type", "loc": ["p"], "msg": "Input should be an object", "input": 1}]}"##),
    ("nested_untitled_def#1", r##"{"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}"##, r##"{"p": {"x": "1"}}"##, r##"{"ok": {"p": {"x": 1}}}"##, r##""##),
    ("definitions_ref#0", r##"{"type": "object", "properties": {"p": {"$ref": "#/definitions/Q"}}, "required": ["p"], "definitions": {"Q": {"type": "integer", "minimum": 0}}}"##, r##"{"p": "-1"}"##, r##"{"errors": [{"type": "greater_than_equal", "loc": ["p"], "msg": "Input should be greater than or equal to 0", "input": "-1"}]}"##, r##""##),
    ("definitions_ref#1", r##"{"type": "object", "properties": {"p": {"$ref": "#/definitions/Q"}}, "required": ["p"], "definitions": {"Q": {"type": "integer", "minimum": 0}}}"##, r##"{"p": "3"}"##, r##"{"ok": {"p": 3}}"##, r##""##),
    ("recursive", r##"{"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "title": "Node", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []}}, "required": ["value"]}}}"##, r##"{"value": 1, "children": [{"value": "2"}, {"value": "x", "children": [{"children": []}]}]}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["children", 1, "value"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "missing", "loc": ["children", 1, "children", 0, "value"], "msg": "Field required", "input": {"children": []}}]}"##, r##""##),
    ("literal#0", r##"{"enum": ["a", "b"]}"##, r##""a""##, r##"{"ok": "a"}"##, r##""##),
    ("literal#1", r##"{"enum": ["a", "b"]}"##, r##""c""##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 'a' or 'b'", "input": "c"}]}"##, r##""##),
    ("literal#2", r##"{"enum": ["a", "b"]}"##, r##"1"##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 'a' or 'b'", "input": 1}]}"##, r##""##),
    ("literal#3", r##"{"enum": ["a", "b"]}"##, r##"null"##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 'a' or 'b'", "input": null}]}"##, r##""##),
    ("literal3", r##"{"type": "string", "enum": ["a", "b", "c"]}"##, r##""d""##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 'a', 'b' or 'c'", "input": "d"}]}"##, r##""##),
    ("literal1#0", r##"{"const": "a"}"##, r##""a""##, r##"{"ok": "a"}"##, r##""##),
    ("literal1#1", r##"{"const": "a"}"##, r##""d""##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 'a'", "input": "d"}]}"##, r##""##),
    ("literal_int#0", r##"{"enum": [1, 2]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("literal_int#1", r##"{"enum": [1, 2]}"##, r##"1.0"##, r##"{"ok": 1}"##, r##""##),
    ("literal_int#2", r##"{"enum": [1, 2]}"##, r##"true"##, r##"{"ok": 1}"##, r##""##),
    ("literal_int#3", r##"{"enum": [1, 2]}"##, r##""1""##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 1 or 2", "input": "1"}]}"##, r##""##),
    ("literal_int#4", r##"{"enum": [1, 2]}"##, r##"3"##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 1 or 2", "input": 3}]}"##, r##""##),
    ("literal_bool#0", r##"{"const": true}"##, r##"1"##, r##"{"ok": true}"##, r##""##),
    ("literal_bool#1", r##"{"const": true}"##, r##"true"##, r##"{"ok": true}"##, r##""##),
    ("literal_bool#2", r##"{"const": true}"##, r##""true""##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be True", "input": "true"}]}"##, r##""##),
    ("literal_mixed#0", r##"{"enum": ["a", 1, null, true]}"##, r##""x""##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be 'a', 1, None or True", "input": "x"}]}"##, r##""##),
    ("literal_mixed#1", r##"{"enum": ["a", 1, null, true]}"##, r##"null"##, r##"{"ok": null}"##, r##""##),
    ("literal_quotes", r##"{"enum": ["it's", "say \"hi\"", "both'\"", "nl\n"]}"##, r##""x""##, r##"{"errors": [{"type": "literal_error", "loc": [], "msg": "Input should be \"it's\", 'say \"hi\"', 'both\\'\"' or 'nl\\n'", "input": "x"}]}"##, r##""##),
    ("optional_int#0", r##"{"anyOf": [{"type": "integer"}, {"type": "null"}]}"##, r##""abc""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "abc"}]}"##, r##""##),
    ("optional_int#1", r##"{"anyOf": [{"type": "integer"}, {"type": "null"}]}"##, r##"null"##, r##"{"ok": null}"##, r##""##),
    ("optional_int#2", r##"{"anyOf": [{"type": "integer"}, {"type": "null"}]}"##, r##""1""##, r##"{"ok": 1}"##, r##""##),
    ("type_list#0", r##"{"type": ["integer", "null"]}"##, r##""abc""##, r##"{"errors": [{"type": "int_parsing", "loc": [], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "abc"}]}"##, r##""##),
    ("type_list#1", r##"{"type": ["integer", "null"]}"##, r##"null"##, r##"{"ok": null}"##, r##""##),
    ("type_list#2", r##"{"type": ["integer", "null"]}"##, r##""7""##, r##"{"ok": 7}"##, r##""##),
    ("type_list2#0", r##"{"type": ["integer", "string"]}"##, r##""1""##, r##"{"ok": "1"}"##, r##""##),
    ("type_list2#1", r##"{"type": ["integer", "string"]}"##, r##"1.5"##, r##"{"errors": [{"type": "int_from_float", "loc": ["int"], "msg": "Input should be a valid integer, got a number with a fractional part", "input": 1.5}, {"type": "string_type", "loc": ["str"], "msg": "Input should be a valid string", "input": 1.5}]}"##, r##""##),
    ("type_list2#2", r##"{"type": ["integer", "string"]}"##, r##"[]"##, r##"{"errors": [{"type": "int_type", "loc": ["int"], "msg": "Input should be a valid integer", "input": []}, {"type": "string_type", "loc": ["str"], "msg": "Input should be a valid string", "input": []}]}"##, r##""##),
    ("union_int_str#0", r##"{"anyOf": [{"type": "integer"}, {"type": "string"}]}"##, r##""1""##, r##"{"ok": "1"}"##, r##""##),
    ("union_int_str#1", r##"{"anyOf": [{"type": "integer"}, {"type": "string"}]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("union_int_str#2", r##"{"anyOf": [{"type": "integer"}, {"type": "string"}]}"##, r##"1.5"##, r##"{"errors": [{"type": "int_from_float", "loc": ["int"], "msg": "Input should be a valid integer, got a number with a fractional part", "input": 1.5}, {"type": "string_type", "loc": ["str"], "msg": "Input should be a valid string", "input": 1.5}]}"##, r##""##),
    ("union_int_str#3", r##"{"anyOf": [{"type": "integer"}, {"type": "string"}]}"##, r##"[]"##, r##"{"errors": [{"type": "int_type", "loc": ["int"], "msg": "Input should be a valid integer", "input": []}, {"type": "string_type", "loc": ["str"], "msg": "Input should be a valid string", "input": []}]}"##, r##""##),
    ("union_str_int#0", r##"{"anyOf": [{"type": "string"}, {"type": "integer"}]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("union_str_int#1", r##"{"anyOf": [{"type": "string"}, {"type": "integer"}]}"##, r##""1""##, r##"{"ok": "1"}"##, r##""##),
    ("union_int_str_null#0", r##"{"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}"##, r##"[]"##, r##"{"errors": [{"type": "int_type", "loc": ["int"], "msg": "Input should be a valid integer", "input": []}, {"type": "string_type", "loc": ["str"], "msg": "Input should be a valid string", "input": []}]}"##, r##""##),
    ("union_int_str_null#1", r##"{"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}"##, r##"null"##, r##"{"ok": null}"##, r##""##),
    ("union_int_bool#0", r##"{"anyOf": [{"type": "integer"}, {"type": "boolean"}]}"##, r##""true""##, r##"{"ok": true}"##, r##""##),
    ("union_int_bool#1", r##"{"anyOf": [{"type": "integer"}, {"type": "boolean"}]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("union_int_bool#2", r##"{"anyOf": [{"type": "integer"}, {"type": "boolean"}]}"##, r##"true"##, r##"{"ok": true}"##, r##""##),
    ("union_bool_int#0", r##"{"anyOf": [{"type": "boolean"}, {"type": "integer"}]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("union_bool_int#1", r##"{"anyOf": [{"type": "boolean"}, {"type": "integer"}]}"##, r##""1""##, r##"{"ok": true}"##, r##""##),
    ("union_float_int#0", r##"{"anyOf": [{"type": "number"}, {"type": "integer"}]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("union_float_int#1", r##"{"anyOf": [{"type": "number"}, {"type": "integer"}]}"##, r##""1""##, r##"{"ok": 1.0}"##, r##""##),
    ("union_float_int#2", r##"{"anyOf": [{"type": "number"}, {"type": "integer"}]}"##, r##"1.5"##, r##"{"ok": 1.5}"##, r##""##),
    ("union_int_float#0", r##"{"anyOf": [{"type": "integer"}, {"type": "number"}]}"##, r##"1.0"##, r##"{"ok": 1.0}"##, r##""##),
    ("union_int_float#1", r##"{"anyOf": [{"type": "integer"}, {"type": "number"}]}"##, r##""1""##, r##"{"ok": 1}"##, r##""##),
    ("union_int_float#2", r##"{"anyOf": [{"type": "integer"}, {"type": "number"}]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("union_float_bool#0", r##"{"anyOf": [{"type": "number"}, {"type": "boolean"}]}"##, r##"1"##, r##"{"ok": 1.0}"##, r##""##),
    ("union_float_bool#1", r##"{"anyOf": [{"type": "number"}, {"type": "boolean"}]}"##, r##"true"##, r##"{"ok": true}"##, r##""##),
    ("union_lists#0", r##"{"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "object", "additionalProperties": {"type": "integer"}}, {"type": "array", "items": {"type": "string"}}]}"##, r##"5"##, r##"{"errors": [{"type": "list_type", "loc": ["list[int]"], "msg": "Input should be a valid list", "input": 5}, {"type": "dict_type", "loc": ["dict[str,int]"], "msg": "Input should be a valid dictionary", "input": 5}, {"type": "list_type", "loc": ["list[str]"], "msg": "Input should be a valid list", "input": 5}]}"##, r##"{"errors": [{"type": "list_type", "loc": ["list[int]"], "msg": "Input should be a valid array", "input": 5}, {"type": "dict_type", "loc": ["dict[str,int]"], "msg": "Input should be an object", "input": 5}, {"type": "list_type", "loc": ["list[str]"], "msg": "Input should be a valid array", "input": 5}]}"##),
    ("union_lists#1", r##"{"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "object", "additionalProperties": {"type": "integer"}}, {"type": "array", "items": {"type": "string"}}]}"##, r##"["1"]"##, r##"{"ok": ["1"]}"##, r##""##),
    ("union_lists#2", r##"{"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "object", "additionalProperties": {"type": "integer"}}, {"type": "array", "items": {"type": "string"}}]}"##, r##"[1]"##, r##"{"ok": [1]}"##, r##""##),
    ("union_literal_int#0", r##"{"anyOf": [{"enum": ["a", "b"]}, {"type": "integer"}]}"##, r##""x""##, r##"{"errors": [{"type": "literal_error", "loc": ["literal['a','b']"], "msg": "Input should be 'a' or 'b'", "input": "x"}, {"type": "int_parsing", "loc": ["int"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}]}"##, r##""##),
    ("union_literal_int#1", r##"{"anyOf": [{"enum": ["a", "b"]}, {"type": "integer"}]}"##, r##""a""##, r##"{"ok": "a"}"##, r##""##),
    ("union_constrained#0", r##"{"anyOf": [{"type": "integer", "minimum": 5}, {"type": "string", "maxLength": 2}, {"type": "number", "exclusiveMinimum": 1}, {"type": "array", "items": {"type": "integer"}, "minItems": 1}]}"##, r##"null"##, r##"{"errors": [{"type": "int_type", "loc": ["constrained-int"], "msg": "Input should be a valid integer", "input": null}, {"type": "string_type", "loc": ["constrained-str"], "msg": "Input should be a valid string", "input": null}, {"type": "float_type", "loc": ["constrained-float"], "msg": "Input should be a valid number", "input": null}, {"type": "list_type", "loc": ["list[int]"], "msg": "Input should be a valid list", "input": null}]}"##, r##"{"errors": [{"type": "int_type", "loc": ["constrained-int"], "msg": "Input should be a valid integer", "input": null}, {"type": "string_type", "loc": ["constrained-str"], "msg": "Input should be a valid string", "input": null}, {"type": "float_type", "loc": ["constrained-float"], "msg": "Input should be a valid number", "input": null}, {"type": "list_type", "loc": ["list[int]"], "msg": "Input should be a valid array", "input": null}]}"##),
    ("union_constrained#1", r##"{"anyOf": [{"type": "integer", "minimum": 5}, {"type": "string", "maxLength": 2}, {"type": "number", "exclusiveMinimum": 1}, {"type": "array", "items": {"type": "integer"}, "minItems": 1}]}"##, r##"3"##, r##"{"ok": 3.0}"##, r##""##),
    ("union_constrained#2", r##"{"anyOf": [{"type": "integer", "minimum": 5}, {"type": "string", "maxLength": 2}, {"type": "number", "exclusiveMinimum": 1}, {"type": "array", "items": {"type": "integer"}, "minItems": 1}]}"##, r##"0.5"##, r##"{"errors": [{"type": "int_from_float", "loc": ["constrained-int"], "msg": "Input should be a valid integer, got a number with a fractional part", "input": 0.5}, {"type": "string_type", "loc": ["constrained-str"], "msg": "Input should be a valid string", "input": 0.5}, {"type": "greater_than", "loc": ["constrained-float"], "msg": "Input should be greater than 1", "input": 0.5}, {"type": "list_type", "loc": ["list[int]"], "msg": "Input should be a valid list", "input": 0.5}]}"##, r##"{"errors": [{"type": "int_from_float", "loc": ["constrained-int"], "msg": "Input should be a valid integer, got a number with a fractional part", "input": 0.5}, {"type": "string_type", "loc": ["constrained-str"], "msg": "Input should be a valid string", "input": 0.5}, {"type": "greater_than", "loc": ["constrained-float"], "msg": "Input should be greater than 1", "input": 0.5}, {"type": "list_type", "loc": ["list[int]"], "msg": "Input should be a valid array", "input": 0.5}]}"##),
    ("union_models#0", r##"{"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "A"}, "B": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 5}, "z": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}}, "required": ["x"], "title": "B"}}}"##, r##"{"x": 1}"##, r##"{"ok": {"x": 1, "y": 5, "z": null}}"##, r##""##),
    ("union_models#1", r##"{"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "A"}, "B": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 5}, "z": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}}, "required": ["x"], "title": "B"}}}"##, r##"{"x": 1, "y": 2}"##, r##"{"ok": {"x": 1, "y": 2}}"##, r##""##),
    ("union_models#2", r##"{"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "A"}, "B": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 5}, "z": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}}, "required": ["x"], "title": "B"}}}"##, r##"{"x": 1, "y": 2, "z": 3}"##, r##"{"ok": {"x": 1, "y": 2, "z": 3}}"##, r##""##),
    ("union_models#3", r##"{"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "A"}, "B": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 5}, "z": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}}, "required": ["x"], "title": "B"}}}"##, r##""a""##, r##"{"errors": [{"type": "model_type", "loc": ["A"], "msg": "Input should be a valid dictionary or instance of A", "input": "a"}, {"type": "model_type", "loc": ["B"], "msg": "Input should be a valid dictionary or instance of B", "input": "a"}]}"##, r##"{"errors": [{"type": "model_type", "loc": ["A"], "msg": "Input should be an object", "input": "a"}, {"type": "model_type", "loc": ["B"], "msg": "Input should be an object", "input": "a"}]}"##),
    ("union_models#4", r##"{"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}], "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "A"}, "B": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 5}, "z": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}}, "required": ["x"], "title": "B"}}}"##, r##"{"x": "a"}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["A", "x"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "a"}, {"type": "missing", "loc": ["A", "y"], "msg": "Field required", "input": {"x": "a"}}, {"type": "int_parsing", "loc": ["B", "x"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "a"}]}"##, r##""##),
    ("union_model_dict#0", r##"{"anyOf": [{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "P"}, {"type": "object", "additionalProperties": {"type": "integer"}}]}"##, r##"{"x": 1, "y": 2}"##, r##"{"ok": {"x": 1, "y": 2}}"##, r##""##),
    ("union_model_dict#1", r##"{"anyOf": [{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "P"}, {"type": "object", "additionalProperties": {"type": "integer"}}]}"##, r##"{"x": 1, "y": "2"}"##, r##"{"ok": {"x": 1, "y": 2}}"##, r##""##),
    ("union_model_dictf", r##"{"anyOf": [{"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "title": "P"}, {"type": "object", "additionalProperties": {"type": "number"}}]}"##, r##"{"x": 1, "y": 2}"##, r##"{"ok": {"x": 1, "y": 2}}"##, r##""##),
    ("union_td_model#0", r##"{"anyOf": [{"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}, {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}]}"##, r##"{"x": 1}"##, r##"{"ok": {"x": 1}}"##, r##""##),
    ("union_td_model#1", r##"{"anyOf": [{"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}, {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}]}"##, r##"3"##, r##"{"errors": [{"type": "model_type", "loc": ["P"], "msg": "Input should be a valid dictionary or instance of P", "input": 3}, {"type": "dict_type", "loc": ["typed-dict"], "msg": "Input should be a valid dictionary", "input": 3}]}"##, r##"{"errors": [{"type": "model_type", "loc": ["P"], "msg": "Input should be an object", "input": 3}, {"type": "dict_type", "loc": ["typed-dict"], "msg": "Input should be an object", "input": 3}]}"##),
    ("union_nested", r##"{"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}, {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}, {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}}]}"##, r##"3"##, r##"{"errors": [{"type": "bool_parsing", "loc": ["bool"], "msg": "Input should be a valid boolean, unable to interpret input", "input": 3}, {"type": "list_type", "loc": ["list[union[int,str]]"], "msg": "Input should be a valid list", "input": 3}, {"type": "list_type", "loc": ["list[nullable[int]]"], "msg": "Input should be a valid list", "input": 3}, {"type": "dict_type", "loc": ["dict[str,list[int]]"], "msg": "Input should be a valid dictionary", "input": 3}]}"##, r##"{"errors": [{"type": "bool_parsing", "loc": ["bool"], "msg": "Input should be a valid boolean, unable to interpret input", "input": 3}, {"type": "list_type", "loc": ["list[union[int,str]]"], "msg": "Input should be a valid array", "input": 3}, {"type": "list_type", "loc": ["list[nullable[int]]"], "msg": "Input should be a valid array", "input": 3}, {"type": "dict_type", "loc": ["dict[str,list[int]]"], "msg": "Input should be an object", "input": 3}]}"##),
    ("union_tuples", r##"{"anyOf": [{"type": "boolean"}, {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "maxItems": 2}, {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}]}"##, r##"3"##, r##"{"errors": [{"type": "bool_parsing", "loc": ["bool"], "msg": "Input should be a valid boolean, unable to interpret input", "input": 3}, {"type": "tuple_type", "loc": ["tuple[int, str]"], "msg": "Input should be a valid tuple", "input": 3}, {"type": "tuple_type", "loc": ["tuple[int, str, ...]"], "msg": "Input should be a valid tuple", "input": 3}]}"##, r##"{"errors": [{"type": "bool_parsing", "loc": ["bool"], "msg": "Input should be a valid boolean, unable to interpret input", "input": 3}, {"type": "tuple_type", "loc": ["tuple[int, str]"], "msg": "Input should be a valid array", "input": 3}, {"type": "tuple_type", "loc": ["tuple[int, str, ...]"], "msg": "Input should be a valid array", "input": 3}]}"##),
    ("union_any#0", r##"{"anyOf": [{"type": "integer"}, {}]}"##, r##""1""##, r##"{"ok": "1"}"##, r##""##),
    ("union_any#1", r##"{"anyOf": [{"type": "integer"}, {}]}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("union_in_object#0", r##"{"type": "object", "properties": {"v": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]}}, "required": ["v"]}"##, r##"{"v": "x"}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["v", "int"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "list_type", "loc": ["v", "list[int]"], "msg": "Input should be a valid list", "input": "x"}]}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["v", "int"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "list_type", "loc": ["v", "list[int]"], "msg": "Input should be a valid array", "input": "x"}]}"##),
    ("union_in_object#1", r##"{"type": "object", "properties": {"v": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]}}, "required": ["v"]}"##, r##"{"v": ["1", 2]}"##, r##"{"ok": {"v": [1, 2]}}"##, r##""##),
    ("str_min#0", r##"{"type": "string", "minLength": 1}"##, r##""""##, r##"{"errors": [{"type": "string_too_short", "loc": [], "msg": "String should have at least 1 character", "input": ""}]}"##, r##""##),
    ("str_min#1", r##"{"type": "string", "minLength": 1}"##, r##""a""##, r##"{"ok": "a"}"##, r##""##),
    ("str_min2#0", r##"{"type": "string", "minLength": 2}"##, r##""a""##, r##"{"errors": [{"type": "string_too_short", "loc": [], "msg": "String should have at least 2 characters", "input": "a"}]}"##, r##""##),
    ("str_min2#1", r##"{"type": "string", "minLength": 2}"##, r##""\u00e9""##, r##"{"errors": [{"type": "string_too_short", "loc": [], "msg": "String should have at least 2 characters", "input": "\u00e9"}]}"##, r##""##),
    ("str_min2#2", r##"{"type": "string", "minLength": 2}"##, r##""\u00e9\u00e9""##, r##"{"ok": "\u00e9\u00e9"}"##, r##""##),
    ("str_max1", r##"{"type": "string", "maxLength": 1}"##, r##""ab""##, r##"{"errors": [{"type": "string_too_long", "loc": [], "msg": "String should have at most 1 character", "input": "ab"}]}"##, r##""##),
    ("str_max2#0", r##"{"type": "string", "maxLength": 2}"##, r##""abc""##, r##"{"errors": [{"type": "string_too_long", "loc": [], "msg": "String should have at most 2 characters", "input": "abc"}]}"##, r##""##),
    ("str_max2#1", r##"{"type": "string", "maxLength": 2}"##, r##""ab""##, r##"{"ok": "ab"}"##, r##""##),
    ("str_pattern#0", r##"{"type": "string", "pattern": "^a+$"}"##, r##""b""##, r##"{"errors": [{"type": "string_pattern_mismatch", "loc": [], "msg": "String should match pattern '^a+$'", "input": "b"}]}"##, r##""##),
    ("str_pattern#1", r##"{"type": "string", "pattern": "^a+$"}"##, r##""aaa""##, r##"{"ok": "aaa"}"##, r##""##),
    ("str_pattern_search#0", r##"{"type": "string", "pattern": "a"}"##, r##""bab""##, r##"{"ok": "bab"}"##, r##""##),
    ("str_pattern_search#1", r##"{"type": "string", "pattern": "a"}"##, r##""bbb""##, r##"{"errors": [{"type": "string_pattern_mismatch", "loc": [], "msg": "String should match pattern 'a'", "input": "bbb"}]}"##, r##""##),
    ("str_pattern_min", r##"{"type": "string", "pattern": "^a+$", "minLength": 3}"##, r##""b""##, r##"{"errors": [{"type": "string_too_short", "loc": [], "msg": "String should have at least 3 characters", "input": "b"}]}"##, r##""##),
    ("str_pattern_quote", r##"{"type": "string", "pattern": "it's\\d"}"##, r##""b""##, r##"{"errors": [{"type": "string_pattern_mismatch", "loc": [], "msg": "String should match pattern 'it's\\d'", "input": "b"}]}"##, r##""##),
    ("int_ge#0", r##"{"type": "integer", "minimum": 0}"##, r##"-1"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 0", "input": -1}]}"##, r##""##),
    ("int_ge#1", r##"{"type": "integer", "minimum": 0}"##, r##"0"##, r##"{"ok": 0}"##, r##""##),
    ("int_ge#2", r##"{"type": "integer", "minimum": 0}"##, r##""-1""##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 0", "input": "-1"}]}"##, r##""##),
    ("int_gt#0", r##"{"type": "integer", "exclusiveMinimum": 0}"##, r##"0"##, r##"{"errors": [{"type": "greater_than", "loc": [], "msg": "Input should be greater than 0", "input": 0}]}"##, r##""##),
    ("int_gt#1", r##"{"type": "integer", "exclusiveMinimum": 0}"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("int_le#0", r##"{"type": "integer", "maximum": 10}"##, r##"11"##, r##"{"errors": [{"type": "less_than_equal", "loc": [], "msg": "Input should be less than or equal to 10", "input": 11}]}"##, r##""##),
    ("int_le#1", r##"{"type": "integer", "maximum": 10}"##, r##"10"##, r##"{"ok": 10}"##, r##""##),
    ("int_lt", r##"{"type": "integer", "exclusiveMaximum": 10}"##, r##"10"##, r##"{"errors": [{"type": "less_than", "loc": [], "msg": "Input should be less than 10", "input": 10}]}"##, r##""##),
    ("int_range#0", r##"{"type": "integer", "minimum": 0, "maximum": 5}"##, r##"10"##, r##"{"errors": [{"type": "less_than_equal", "loc": [], "msg": "Input should be less than or equal to 5", "input": 10}]}"##, r##""##),
    ("int_range#1", r##"{"type": "integer", "minimum": 0, "maximum": 5}"##, r##"-1"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 0", "input": -1}]}"##, r##""##),
    ("int_all#0", r##"{"type": "integer", "exclusiveMinimum": 0, "minimum": 2, "exclusiveMaximum": 10, "maximum": 5}"##, r##"0"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 2", "input": 0}]}"##, r##""##),
    ("int_all#1", r##"{"type": "integer", "exclusiveMinimum": 0, "minimum": 2, "exclusiveMaximum": 10, "maximum": 5}"##, r##"1"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 2", "input": 1}]}"##, r##""##),
    ("int_all#2", r##"{"type": "integer", "exclusiveMinimum": 0, "minimum": 2, "exclusiveMaximum": 10, "maximum": 5}"##, r##"7"##, r##"{"errors": [{"type": "less_than_equal", "loc": [], "msg": "Input should be less than or equal to 5", "input": 7}]}"##, r##""##),
    ("int_multiple#0", r##"{"type": "integer", "multipleOf": 3}"##, r##"10"##, r##"{"errors": [{"type": "multiple_of", "loc": [], "msg": "Input should be a multiple of 3", "input": 10}]}"##, r##""##),
    ("int_multiple#1", r##"{"type": "integer", "multipleOf": 3}"##, r##"9"##, r##"{"ok": 9}"##, r##""##),
    ("int_multiple#2", r##"{"type": "integer", "multipleOf": 3}"##, r##""9""##, r##"{"ok": 9}"##, r##""##),
    ("float_multiple#0", r##"{"type": "number", "multipleOf": 0.5}"##, r##"0.7"##, r##"{"errors": [{"type": "multiple_of", "loc": [], "msg": "Input should be a multiple of 0.5", "input": 0.7}]}"##, r##""##),
    ("float_multiple#1", r##"{"type": "number", "multipleOf": 0.5}"##, r##"1.5"##, r##"{"ok": 1.5}"##, r##""##),
    ("float_multiple#2", r##"{"type": "number", "multipleOf": 0.5}"##, r##"3"##, r##"{"ok": 3.0}"##, r##""##),
    ("float_ge#0", r##"{"type": "number", "minimum": 0.5}"##, r##"0.1"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 0.5", "input": 0.1}]}"##, r##""##),
    ("float_ge#1", r##"{"type": "number", "minimum": 0.5}"##, r##"1"##, r##"{"ok": 1.0}"##, r##""##),
    ("float_ge0#0", r##"{"type": "number", "minimum": 0}"##, r##"-0.1"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 0", "input": -0.1}]}"##, r##""##),
    ("float_ge0#1", r##"{"type": "number", "minimum": 0}"##, r##"0"##, r##"{"ok": 0.0}"##, r##""##),
    ("float_ge_big", r##"{"type": "number", "minimum": 1e+20}"##, r##"1.0"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 100000000000000000000", "input": 1.0}]}"##, r##""##),
    ("float_ge_small", r##"{"type": "number", "minimum": 1e-07}"##, r##"0.0"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 0.0000001", "input": 0.0}]}"##, r##""##),
    ("float_ge_one", r##"{"type": "number", "minimum": 1.0}"##, r##"0.0"##, r##"{"errors": [{"type": "greater_than_equal", "loc": [], "msg": "Input should be greater than or equal to 1", "input": 0.0}]}"##, r##""##),
    ("float_gt_str#0", r##"{"type": "number", "exclusiveMinimum": 2}"##, r##""1""##, r##"{"errors": [{"type": "greater_than", "loc": [], "msg": "Input should be greater than 2", "input": "1"}]}"##, r##""##),
    ("float_gt_str#1", r##"{"type": "number", "exclusiveMinimum": 2}"##, r##""3""##, r##"{"ok": 3.0}"##, r##""##),
    ("any_empty#0", r##"{}"##, r##"{"a": [1, {"b": null}]}"##, r##"{"ok": {"a": [1, {"b": null}]}}"##, r##""##),
    ("any_empty#1", r##"{}"##, r##""x""##, r##"{"ok": "x"}"##, r##""##),
    ("any_empty#2", r##"{}"##, r##"null"##, r##"{"ok": null}"##, r##""##),
    ("any_true", r##"true"##, r##"1"##, r##"{"ok": 1}"##, r##""##),
    ("tagged#0", r##"{"type": "object", "title": "Owner", "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": {"propertyName": "pet_type", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}}}, "required": ["pet"], "$defs": {"Cat": {"type": "object", "title": "Cat", "properties": {"pet_type": {"const": "cat", "type": "string"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"]}, "Dog": {"type": "object", "title": "Dog", "properties": {"pet_type": {"const": "dog", "type": "string"}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"]}}}"##, r##"{"pet": {"pet_type": "cat", "meows": "x"}}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["pet", "cat", "meows"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}]}"##, r##""##),
    ("tagged#1", r##"{"type": "object", "title": "Owner", "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": {"propertyName": "pet_type", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}}}, "required": ["pet"], "$defs": {"Cat": {"type": "object", "title": "Cat", "properties": {"pet_type": {"const": "cat", "type": "string"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"]}, "Dog": {"type": "object", "title": "Dog", "properties": {"pet_type": {"const": "dog", "type": "string"}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"]}}}"##, r##"{"pet": {"pet_type": "fish"}}"##, r##"{"errors": [{"type": "union_tag_invalid", "loc": ["pet"], "msg": "Input tag 'fish' found using 'pet_type' does not match any of the expected tags: 'cat', 'dog'", "input": {"pet_type": "fish"}}]}"##, r##""##),
    ("tagged#2", r##"{"type": "object", "title": "Owner", "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": {"propertyName": "pet_type", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}}}, "required": ["pet"], "$defs": {"Cat": {"type": "object", "title": "Cat", "properties": {"pet_type": {"const": "cat", "type": "string"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"]}, "Dog": {"type": "object", "title": "Dog", "properties": {"pet_type": {"const": "dog", "type": "string"}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"]}}}"##, r##"{"pet": {}}"##, r##"{"errors": [{"type": "union_tag_not_found", "loc": ["pet"], "msg": "Unable to extract tag using discriminator 'pet_type'", "input": {}}]}"##, r##""##),
    ("tagged#3", r##"{"type": "object", "title": "Owner", "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": {"propertyName": "pet_type", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}}}, "required": ["pet"], "$defs": {"Cat": {"type": "object", "title": "Cat", "properties": {"pet_type": {"const": "cat", "type": "string"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"]}, "Dog": {"type": "object", "title": "Dog", "properties": {"pet_type": {"const": "dog", "type": "string"}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"]}}}"##, r##"{"pet": 3}"##, r##"{"errors": [{"type": "model_attributes_type", "loc": ["pet"], "msg": "Input should be a valid dictionary or object to extract fields from", "input": 3}]}"##, r##"{"errors": [{"type": "dict_type", "loc": ["pet"], "msg": "Input should be an object", "input": 3}]}"##),
    ("tagged#4", r##"{"type": "object", "title": "Owner", "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": {"propertyName": "pet_type", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}}}, "required": ["pet"], "$defs": {"Cat": {"type": "object", "title": "Cat", "properties": {"pet_type": {"const": "cat", "type": "string"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"]}, "Dog": {"type": "object", "title": "Dog", "properties": {"pet_type": {"const": "dog", "type": "string"}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"]}}}"##, r##"{"pet": {"pet_type": "dog", "barks": 1}}"##, r##"{"ok": {"pet": {"pet_type": "dog", "barks": 1.0}}}"##, r##""##),
    ("deep_locs", r##"{"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}}}, "required": ["b"]}}}, "required": ["a"]}"##, r##"{"a": [{"b": {"k": [1, "x"]}}, {"c": 1}]}"##, r##"{"errors": [{"type": "int_parsing", "loc": ["a", 0, "b", "k", 1], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "x"}, {"type": "missing", "loc": ["a", 1, "b"], "msg": "Field required", "input": {"c": 1}}]}"##, r##""##),
    ("union_list_exactness#0", r##"{"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "array", "items": {"type": "integer"}}]}"##, r##"[1]"##, r##"{"ok": [1]}"##, r##""##),
    ("union_list_exactness#1", r##"{"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "array", "items": {"type": "integer"}}]}"##, r##"[1.5]"##, r##"{"ok": [1.5]}"##, r##""##),
    ("union_list_exactness#2", r##"{"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "array", "items": {"type": "integer"}}]}"##, r##"["1"]"##, r##"{"ok": [1.0]}"##, r##""##),
    ("list_of_unions", r##"{"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}"##, r##"["1", 1, 1.5]"##, r##"{"errors": [{"type": "int_from_float", "loc": [2, "int"], "msg": "Input should be a valid integer, got a number with a fractional part", "input": 1.5}, {"type": "string_type", "loc": [2, "str"], "msg": "Input should be a valid string", "input": 1.5}]}"##, r##""##),
    ("optional_model#0", r##"{"type": "object", "properties": {"p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "default": null}}, "required": [], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}}}"##, r##"{"p": "x"}"##, r##"{"errors": [{"type": "model_type", "loc": ["p"], "msg": "Input should be a valid dictionary or instance of P", "input": "x"}]}"##, r##"{"errors": [{"type": "model_type", "loc": ["p"], "msg": "Input should be an object", "input": "x"}]}"##),
    ("optional_model#1", r##"{"type": "object", "properties": {"p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "default": null}}, "required": [], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}}}"##, r##"{"p": null}"##, r##"{"ok": {"p": null}}"##, r##""##),
    ("optional_model#2", r##"{"type": "object", "properties": {"p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "default": null}}, "required": [], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}}}"##, r##"{}"##, r##"{"ok": {"p": null}}"##, r##""##),
    ("optional_model#3", r##"{"type": "object", "properties": {"p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "default": null}}, "required": [], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}}}"##, r##"{"p": {"x": "1", "q": 1}}"##, r##"{"ok": {"p": {"x": 1}}}"##, r##""##),
    ("inferred_object#0", r##"{"properties": {"a": {"type": "integer"}}, "required": ["a"]}"##, r##"{"a": "1"}"##, r##"{"ok": {"a": 1}}"##, r##""##),
    ("inferred_object#1", r##"{"properties": {"a": {"type": "integer"}}, "required": ["a"]}"##, r##"{}"##, r##"{"errors": [{"type": "missing", "loc": ["a"], "msg": "Field required", "input": {}}]}"##, r##""##),
    ("inferred_object#2", r##"{"properties": {"a": {"type": "integer"}}, "required": ["a"]}"##, r##"1"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be a valid dictionary", "input": 1}]}"##, r##"{"errors": [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": 1}]}"##),
    ("inferred_array#0", r##"{"items": {"type": "integer"}}"##, r##"["1"]"##, r##"{"ok": [1]}"##, r##""##),
    ("inferred_array#1", r##"{"items": {"type": "integer"}}"##, r##"1"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid list", "input": 1}]}"##, r##"{"errors": [{"type": "list_type", "loc": [], "msg": "Input should be a valid array", "input": 1}]}"##),
    ("ignored_keywords#0", r##"{"type": "string", "format": "date-time", "x-foo": 1, "description": "d", "examples": ["a"]}"##, r##""not a date""##, r##"{"ok": "not a date"}"##, r##""##),
    ("ignored_keywords#1", r##"{"type": "string", "format": "date-time", "x-foo": 1, "description": "d", "examples": ["a"]}"##, r##"1"##, r##"{"errors": [{"type": "string_type", "loc": [], "msg": "Input should be a valid string", "input": 1}]}"##, r##""##),
    ("output_order", r##"{"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "integer", "default": 0}}, "required": ["b"], "additionalProperties": true}"##, r##"{"z": 1, "b": "2", "y": 3}"##, r##"{"ok": {"b": 2, "a": 0, "z": 1, "y": 3}}"##, r##""##),
    ("dict_order", r##"{"type": "object", "additionalProperties": {"type": "number"}}"##, r##"{"z": 1, "a": 2}"##, r##"{"ok": {"z": 1.0, "a": 2.0}}"##, r##""##),
    ("allof_single#0", r##"{"type": "object", "properties": {"p": {"allOf": [{"$ref": "#/$defs/P"}], "default": {"x": 0}}}, "required": [], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}}}"##, r##"{}"##, r##"{"ok": {"p": {"x": 0}}}"##, r##""##),
    ("allof_single#1", r##"{"type": "object", "properties": {"p": {"allOf": [{"$ref": "#/$defs/P"}], "default": {"x": 0}}}, "required": [], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}}}"##, r##"{"p": {"x": "2"}}"##, r##"{"ok": {"p": {"x": 2}}}"##, r##""##),
    ("allof_single#2", r##"{"type": "object", "properties": {"p": {"allOf": [{"$ref": "#/$defs/P"}], "default": {"x": 0}}}, "required": [], "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "title": "P"}}}"##, r##"{"p": 2}"##, r##"{"errors": [{"type": "model_type", "loc": ["p"], "msg": "Input should be a valid dictionary or instance of P", "input": 2}]}"##, r##"{"errors": [{"type": "model_type", "loc": ["p"], "msg": "Input should be an object", "input": 2}]}"##),
];

#[test]
fn matches_pydantic_table() {
    let mut failures = Vec::new();
    for (name, schema, input, python, json_mode) in PYDANTIC_CASES {
        let parse = |s: &str| serde_json::from_str::<Value>(s).expect("test data is JSON");
        let v = validator(parse(schema));
        let input_value = parse(input);
        // Compared as text: key order matters, and `Map`'s equality ignores it.
        let expected = parse(python).to_string();
        let got = outcome(v.validate(&input_value)).to_string();
        if got != expected {
            failures.push(format!("{name} (python mode):\n  expected {expected}\n  got      {got}"));
        }
        let expected = if json_mode.is_empty() { expected } else { parse(json_mode).to_string() };
        let got = outcome(v.validate_str(input)).to_string();
        if got != expected {
            failures.push(format!("{name} (JSON mode):\n  expected {expected}\n  got      {got}"));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

fn xy_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "additionalProperties": false
    })
}

fn errors_text(result: Result<Value, Vec<ErrorDetail>>) -> String {
    match result {
        Ok(v) => panic!("expected errors, got {v}"),
        Err(errors) => serde_json::to_string(&errors).expect("errors serialise"),
    }
}

#[test]
fn conformance_errors_serialise_exactly() {
    let v = validator(xy_schema());
    let expected = concat!(
        r#"[{"type":"int_parsing","loc":["x"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"not a number"},"#,
        r#"{"type":"missing","loc":["y"],"msg":"Field required","input":{"x":"not a number","z":1}},"#,
        r#"{"type":"extra_forbidden","loc":["z"],"msg":"Extra inputs are not permitted","input":1}]"#
    );
    assert_eq!(errors_text(v.validate(&json!({"x": "not a number", "z": 1}))), expected);
    assert_eq!(errors_text(v.validate_str(r#"{"x": "not a number", "z": 1}"#)), expected);
}

#[test]
fn conformance_invalid_json() {
    let v = validator(xy_schema());
    assert_eq!(
        errors_text(v.validate_str(r#"{"x": 1, "y": 2"#)),
        r#"[{"type":"json_invalid","loc":[],"msg":"Invalid JSON: EOF while parsing an object at line 1 column 15","input":"{\"x\": 1, \"y\": 2"}]"#
    );
    let errors = v.validate_str("Paris has many people.").unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].msg, "Invalid JSON: expected value at line 1 column 1");
    assert_eq!(errors[0].input, json!("Paris has many people."));
}

#[test]
fn invalid_json_messages_match_pydantic() {
    // What pydantic-core (jiter) prints for these; serde_json words them the same way.
    let cases = [
        (r#"{"a":1,}"#, "trailing comma at line 1 column 8"),
        (r#"{"a":1} x"#, "trailing characters at line 1 column 9"),
        ("[1,2", "EOF while parsing a list at line 1 column 4"),
        ("{a:1}", "key must be a string at line 1 column 2"),
        (r#""abc"#, "EOF while parsing a string at line 1 column 4"),
        (r#"{"a": "\q"}"#, "invalid escape at line 1 column 9"),
        (r#"{"a": tru}"#, "expected ident at line 1 column 10"),
        (r#"{"a": 01}"#, "invalid number at line 1 column 8"),
        ("nul", "EOF while parsing a value at line 1 column 3"),
        ("\n\n {\"a\" 1}", "expected `:` at line 3 column 7"),
    ];
    for (raw, msg) in cases {
        let e = parse_json_args(raw).unwrap_err();
        assert_eq!(e.kind, "json_invalid");
        assert_eq!(e.msg, format!("Invalid JSON: {msg}"), "for {raw:?}");
        assert_eq!(e.loc, Vec::<LocItem>::new());
    }
}

#[test]
fn conformance_missing_and_coercions() {
    let v = validator(json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"]
    }));
    assert_eq!(
        errors_text(v.validate(&json!({"city": "Paris"}))),
        r#"[{"type":"missing","loc":["population"],"msg":"Field required","input":{"city":"Paris"}}]"#
    );
    let out = v.validate(&json!({"city": "Paris", "population": "2100000"})).unwrap();
    assert_eq!(out.to_string(), r#"{"city":"Paris","population":2100000}"#);

    let v = validator(json!({"type": "object", "properties": {"n": {"type": "number"}}}));
    assert_eq!(v.validate(&json!({"n": 105.4})).unwrap().to_string(), r#"{"n":105.4}"#);
    let out = v.validate(&json!({"n": 1})).unwrap();
    assert_eq!(out.to_string(), r#"{"n":1.0}"#);
    assert!(out["n"].is_f64());
}

#[test]
fn empty_or_blank_raw_args_mean_empty_object() {
    let v = validator(json!({"type": "object", "properties": {"a": {"type": "integer", "default": 3}}}));
    assert_eq!(v.validate_str("").unwrap(), json!({"a": 3}));
    assert_eq!(v.validate_str(" \n\t").unwrap(), json!({"a": 3}));
    let v = validator(xy_schema());
    let errors = v.validate_str("").unwrap_err();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0].loc, vec![LocItem::Key("x".into())]);
    assert_eq!(errors[1].input, json!({}));
}

#[test]
fn parse_json_args_without_validation() {
    assert_eq!(parse_json_args("").unwrap(), json!({}));
    assert_eq!(parse_json_args("  ").unwrap(), json!({}));
    assert_eq!(parse_json_args(r#"{"a": [1]}"#).unwrap(), json!({"a": [1]}));
    assert_eq!(parse_json_args("[1]").unwrap(), json!([1]));
    assert_eq!(parse_json_args("{").unwrap_err().kind, "json_invalid");
}

#[test]
fn value_error_helper() {
    let e = ErrorDetail::value_error("missing field `x`");
    assert_eq!(
        serde_json::to_string(&e).unwrap(),
        r#"{"type":"value_error","loc":[],"msg":"Value error, missing field `x`","input":null}"#
    );
}

#[test]
fn error_detail_round_trips_and_displays() {
    let e = ErrorDetail {
        kind: "string_type".into(),
        loc: vec!["tags".into(), 0.into()],
        msg: "Input should be a valid string".into(),
        input: json!(1),
    };
    let text = serde_json::to_string(&e).unwrap();
    assert_eq!(text, r#"{"type":"string_type","loc":["tags",0],"msg":"Input should be a valid string","input":1}"#);
    assert_eq!(serde_json::from_str::<ErrorDetail>(&text).unwrap(), e);
    assert_eq!(e.to_string(), "tags.0: Input should be a valid string");
    assert_eq!(ErrorDetail::value_error("x").to_string(), "Value error, x");
}

#[test]
fn nested_locations() {
    let v = validator(json!({
        "type": "object",
        "properties": {
            "point": {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "required": ["x"]
            },
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["point", "tags"]
    }));
    let errors = v.validate(&json!({"point": {"x": "a"}, "tags": [1]})).unwrap_err();
    assert_eq!(errors[0].loc, vec![LocItem::from("point"), LocItem::from("x")]);
    assert_eq!(errors[1].loc, vec![LocItem::from("tags"), LocItem::Index(0)]);
}

#[test]
fn fill_defaults_and_nullable_optionals() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer", "default": 5},
            "c": {"type": "string"},
            "inner": {
                "type": "object",
                "properties": {"d": {"type": "boolean", "default": true}, "e": {"type": "integer"}}
            }
        },
        "required": ["a"]
    });
    let input = json!({"a": 1, "inner": {}});
    let default = Validator::compile(&schema).unwrap();
    assert_eq!(default.options(), Options::default());
    assert_eq!(default.validate(&input).unwrap().to_string(), r#"{"a":1,"b":5,"inner":{"d":true}}"#);
    let bare = Options { fill_defaults: false, nullable_optionals: false };
    let v = Validator::compile_with(&schema, bare).unwrap();
    assert_eq!(v.validate(&input).unwrap().to_string(), r#"{"a":1,"inner":{}}"#);
    let structured = Options { fill_defaults: true, nullable_optionals: true };
    let v = Validator::compile_with(&schema, structured).unwrap();
    assert_eq!(v.validate(&input).unwrap().to_string(), r#"{"a":1,"b":5,"c":null,"inner":{"d":true,"e":null}}"#);
}

#[test]
fn nullable_optionals_accept_an_explicit_null_of_every_type() {
    let structured = Options { fill_defaults: true, nullable_optionals: true };
    for ty in [
        json!({"type": "integer"}),
        json!({"type": "number"}),
        json!({"type": "string"}),
        json!({"type": "boolean"}),
        json!({"type": "array", "items": {"type": "integer"}}),
        json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
    ] {
        let schema = json!({
            "type": "object",
            "properties": {"req": {"type": "integer"}, "opt": ty, "dflt": {"type": "integer", "default": 3}},
            "required": ["req"]
        });
        let v = Validator::compile_with(&schema, structured).unwrap();
        assert_eq!(v.validate(&json!({"req": 1, "opt": null})).unwrap(), json!({"req": 1, "opt": null, "dflt": 3}));
        // A required field, or one with a default, still refuses null; so do plain options.
        assert!(v.validate(&json!({"req": null})).is_err());
        assert!(v.validate(&json!({"req": 1, "dflt": null})).is_err());
        assert!(Validator::compile(&schema).unwrap().validate(&json!({"req": 1, "opt": null})).is_err());
    }
}

#[test]
fn extras_dropped_for_models_kept_for_plain_dicts() {
    let v = validator(json!({"type": "object", "properties": {"a": {"type": "integer"}}}));
    assert_eq!(v.validate(&json!({"b": 1, "a": 2})).unwrap(), json!({"a": 2}));
    let v = validator(json!({"type": "object"}));
    assert_eq!(v.validate(&json!({"b": 1, "a": 2})).unwrap().to_string(), r#"{"b":1,"a":2}"#);
}

#[test]
fn empty_schemas_accept_anything_unchanged() {
    for schema in [json!({}), json!(true), json!({"description": "anything"})] {
        let v = validator(schema);
        let input = json!({"a": [1, "2", null], "b": 1.5});
        assert_eq!(v.validate(&input).unwrap(), input);
    }
}

#[test]
fn only_defs_entries_name_models() {
    // A root that refers to itself is a typed dict, not a model named "".
    let v = validator(json!({
        "type": "object",
        "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}
    }));
    assert_eq!(v.validate(&json!({"next": {"next": null}})).unwrap(), json!({"next": {"next": null}}));
    let e = &v.validate(&json!({"next": 1})).unwrap_err()[0];
    assert_eq!((e.kind.as_str(), e.msg.as_str()), ("dict_type", "Input should be a valid dictionary"));
    let v = validator(json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/Point"}},
        "definitions": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    }));
    let e = &v.validate(&json!({"p": 1})).unwrap_err()[0];
    assert_eq!(e.msg, "Input should be a valid dictionary or instance of Point");
}

#[test]
fn openapi_nullable() {
    let v = validator(json!({"type": "integer", "nullable": true}));
    assert_eq!(v.validate(&json!(null)).unwrap(), json!(null));
    assert_eq!(v.validate(&json!("4")).unwrap(), json!(4));
}

#[test]
fn all_of_merges_objects() {
    let v = validator(json!({"allOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}
    ]}));
    assert_eq!(v.validate(&json!({"a": "1", "b": "x"})).unwrap(), json!({"a": 1, "b": "x"}));
    let errors = v.validate(&json!({})).unwrap_err();
    assert_eq!(errors.iter().map(|e| e.loc[0].to_string()).collect::<Vec<_>>(), ["a", "b"]);
}

#[test]
fn schema_errors_say_what_and_where() {
    let err = Validator::compile(&json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Missing"}}
    }))
    .unwrap_err();
    assert_eq!(err.path(), "#/properties/p");
    assert!(err.message().contains("#/$defs/Missing"), "{err}");
    assert_eq!(
        err.to_string(),
        "invalid JSON schema at #/properties/p: $ref \"#/$defs/Missing\" points to nothing in the schema"
    );

    let cases = [
        (json!({"$ref": "other.json#/x"}), "unsupported $ref"),
        (json!({"type": "integr"}), "unknown type \"integr\""),
        (json!({"type": "string", "pattern": "("}), "not a valid regex"),
        (json!({"type": "integer", "minimum": "0"}), "minimum must be a number"),
        (json!({"type": "object", "properties": []}), "properties must be an object"),
        (json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}), "circular $ref"),
        (json!(3), "must be an object or a boolean"),
    ];
    for (schema, needle) in cases {
        let err = Validator::compile(&schema).unwrap_err();
        assert!(err.to_string().contains(needle), "{schema}: {err}");
    }
}

/// `{fields..., key: inner}`, without `json!` (which would copy `inner` recursively).
fn wrap(fields: &[(&str, Value)], key: &str, inner: Value) -> Value {
    let mut map = serde_json::Map::new();
    for (k, v) in fields {
        map.insert((*k).to_owned(), v.clone());
    }
    map.insert(key.to_owned(), inner);
    Value::Object(map)
}

#[test]
fn deeply_nested_schemas_fail_to_compile_without_overflowing() {
    let mut schema = json!({"type": "integer"});
    for _ in 0..1_000 {
        schema = wrap(&[("type", json!("array"))], "items", schema);
    }
    let err = Validator::compile(&schema).unwrap_err();
    assert!(err.message().contains("nested too deeply"), "{err}");

    let mut defs = serde_json::Map::new();
    for i in 0..10_000 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert("d10000".into(), json!({"type": "integer"}));
    let err = Validator::compile(&json!({"$ref": "#/$defs/d0", "$defs": defs})).unwrap_err();
    assert!(err.message().contains("nested too deeply"), "{err}");
}

#[test]
fn recursive_schema_and_deep_input_do_not_overflow() {
    let schema = json!({
        "$ref": "#/$defs/Tree",
        "$defs": {"Tree": {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}
        }}
    });
    let v = validator(schema);
    // As deep as serde_json parses (128 levels of nesting): fine.
    let mut raw = String::from("{}");
    for _ in 0..63 {
        raw = format!(r#"{{"kids": [{raw}]}}"#);
    }
    assert!(v.validate_str(&raw).is_ok());
    // Deeper input built by hand: a recursion_loop error, not a stack overflow. Run on a
    // thread with the usual 2 MiB stack to be sure.
    let v2 = v.clone();
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut input = json!({});
            for _ in 0..1_000 {
                input = wrap(&[], "kids", Value::Array(vec![input]));
            }
            v2.validate(&input)
        })
        .unwrap();
    let errors = handle.join().unwrap().unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, "recursion_loop");
    assert_eq!(errors[0].msg, "Recursion error - cyclic reference detected");
}

#[test]
fn self_referencing_union_is_caught_at_validation() {
    let v = validator(json!({
        "$ref": "#/$defs/A",
        "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "integer"}]}}
    }));
    assert_eq!(v.validate(&json!("x")).unwrap_err()[0].kind, "recursion_loop");
}

#[test]
fn numbers_json_cannot_hold_are_errors() {
    // pydantic returns Python ints of any size and inf/nan floats; a JSON value cannot hold
    // them, so these are errors here.
    let int = validator(json!({"type": "integer"}));
    for input in [json!("18446744073709551616"), json!("-9223372036854775809"), json!(1e20)] {
        assert_eq!(int.validate(&input).unwrap_err()[0].kind, "int_parsing_size", "{input}");
    }
    assert_eq!(int.validate(&json!("-9223372036854775808")).unwrap(), json!(i64::MIN));
    assert_eq!(int.validate(&json!("18446744073709551615")).unwrap(), json!(u64::MAX));
    let float = validator(json!({"type": "number"}));
    for input in ["inf", "-Infinity", "nan", "1e400"] {
        let e = &float.validate(&json!(input)).unwrap_err()[0];
        assert_eq!((e.kind.as_str(), e.msg.as_str()), ("finite_number", "Input should be a finite number"));
    }
}

#[test]
fn validator_is_send_sync_and_cheap_to_clone() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Validator>();
    let v = validator(xy_schema());
    let w = v.clone();
    assert!(Arc::ptr_eq(&v.inner, &w.inner));
}

#[test]
fn no_panics_on_odd_inputs() {
    let schemas = [
        xy_schema(),
        json!({"type": ["integer", "number", "string", "boolean", "null", "array", "object"]}),
        json!({"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"}),
        json!({"type": "number", "multipleOf": 0, "minimum": 1e308}),
        json!({"type": "integer", "multipleOf": 0, "maximum": -1}),
        json!({"type": "array", "prefixItems": [], "items": false}),
        json!({"enum": []}),
    ];
    let inputs = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e308),
        json!(-0.0),
        json!(""),
        json!("é"),
        json!("   "),
        json!("-"),
        json!("_"),
        json!("1_"),
        json!("."),
        json!("+."),
        json!("9".repeat(5000)),
        json!([]),
        json!({}),
        json!([[[]]]),
        json!({"x": {"y": []}}),
    ];
    for schema in &schemas {
        let v = validator(schema.clone());
        for input in &inputs {
            let _ = v.validate(input);
            let _ = v.validate_str(&input.to_string());
        }
    }
}

#[test]
fn rust_type_formats_bound_values_and_keep_plain_union_tags() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer", "format": "int32"},
            "b": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255},
            "c": {"anyOf": [{"type": "integer", "format": "int16"}, {"type": "boolean"}]},
            "d": {"type": "number", "format": "float"},
            "e": {"type": "integer", "format": "uint64", "minimum": 0}
        }
    });
    let typed = Validator::compile_for_rust_types(&schema).unwrap();
    // A plain compile ignores formats, as Pydantic does.
    let plain = validator(schema);
    let input = json!({"a": 1u64 << 40, "b": 0, "c": "x", "d": 1e39, "e": u64::MAX});
    assert!(plain.validate(&json!({"a": 1u64 << 40, "b": 1, "d": 1e39})).is_ok());
    let errors = typed.validate(&input).unwrap_err();
    let summary: Vec<String> =
        errors.iter().map(|e| format!("{} {} {}", e.kind, serde_json::to_string(&e.loc).unwrap(), e.msg)).collect();
    assert_eq!(
        summary,
        [
            r#"less_than_equal ["a"] Input should be less than or equal to 2147483647"#,
            // The schema's own, tighter, bound wins.
            r#"greater_than_equal ["b"] Input should be greater than or equal to 1"#,
            // A member bounded only by its type is still named `int`.
            r#"int_parsing ["c","int"] Input should be a valid integer, unable to parse string as an integer"#,
            r#"bool_parsing ["c","bool"] Input should be a valid boolean, unable to interpret input"#,
            r#"less_than_equal ["d"] Input should be less than or equal to 340282346638528860000000000000000000000"#,
        ]
    );
    assert_eq!(
        typed.validate(&json!({"a": "-2147483648", "c": -32768, "d": "-3.4e38", "e": 0})).unwrap(),
        json!({"a": -2147483648i64, "c": -32768, "d": -3.4e38, "e": 0})
    );
    let err = &typed.validate(&json!({"c": 32768})).unwrap_err()[0];
    assert_eq!(
        (err.kind.as_str(), err.msg.as_str()),
        ("less_than_equal", "Input should be less than or equal to 32767")
    );
    assert_eq!(err.loc, vec![LocItem::from("c"), LocItem::from("int")]);
}

mod in_order {
    //! An object that gives every field in the schema's order takes a shorter path: it must
    //! answer exactly as the general one (reached here by giving the same fields in another order).
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::validator;

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|i| json!(i)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            "[a-z0-9 ._-]{0,6}".prop_map(Value::String),
            Just(json!("12")),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(("[a-c]", inner), 0..3)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
            ]
        })
    }

    proptest! {
        #[test]
        fn every_field_in_order_answers_as_any_other_order(a in value(), b in value(), c in value(), d in value(), nullable in any::<bool>()) {
            let schema = json!({
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "b": {"type": "string", "default": "x"},
                    "c": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                    "d": {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]},
                },
                "required": if nullable { json!(["a", "d"]) } else { json!(["a", "b", "c", "d"]) },
            });
            let v = validator(schema);
            let ordered: Map<String, Value> = [("a", a), ("b", b), ("c", c), ("d", d)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            let reversed: Map<String, Value> = ordered.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
            let fast = super::outcome(v.validate(&Value::Object(ordered)));
            let general = super::outcome(v.validate(&Value::Object(reversed)));
            // Error inputs hold the whole object only for missing fields, which these inputs have none of.
            prop_assert_eq!(fast, general);
        }
    }
}

/// Arguments kept as they are (`validate_in_place`) are refused past [`MAX_NESTING`] exactly as
/// copying validation refuses them, wherever the depth is: inside a field any value fits, a
/// recursive schema, nested arrays, an envelope. Around the limit and far past it, on a thread
/// with a 2 MiB stack.
#[test]
fn kept_arguments_are_refused_past_the_nesting_limit_as_copied_ones_are() {
    use crate::validation::MAX_NESTING;
    use std::borrow::Cow;
    let schemas = [
        json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}),
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {}}}, "required": ["a"]}),
        json!({"$ref": "#/$defs/T", "$defs": {"T": {"type": "object", "properties": {"a": {"type": "array", "items": {"$ref": "#/$defs/T"}}}, "required": ["a"]}}}),
        json!({"type": "object", "properties": {"a": {"anyOf": [{}, {"type": "null"}]}}, "required": ["a"]}),
    ];
    // `{"a": [{"a": [ ... ]}]}` with `levels` arrays and objects in all, innermost `[]`.
    let nested = |levels: usize| {
        let mut v = json!([]);
        for level in (1..levels).rev() {
            v = if level % 2 == 1 { wrap(&[], "a", v) } else { Value::Array(vec![v]) };
        }
        v
    };
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for schema in &schemas {
                let v = validator(schema.clone());
                let wrapped = v.clone().with_envelope("p");
                for levels in (MAX_NESTING - 3..=MAX_NESTING + 3).chain([1_000, 100_000]) {
                    let input = nested(levels);
                    let copied = v.validate(&input);
                    let kept = v.validate_in_place(&input);
                    match (&kept, &copied) {
                        (Ok(Cow::Borrowed(k)), Ok(c)) => assert_eq!(*k, c, "{schema} at {levels}"),
                        (Ok(Cow::Owned(k)), Ok(c)) => assert_eq!(k, c, "{schema} at {levels}"),
                        (Err(k), Err(c)) => assert_eq!(k, c, "{schema} at {levels}"),
                        _ => panic!("{schema} at {levels}: kept {:?}, copied {:?}", kept.is_ok(), copied.is_ok()),
                    }
                    if levels > MAX_NESTING {
                        assert!(copied.is_err(), "{schema} at {levels}");
                    } else if schema.get("$ref").is_none() {
                        assert!(matches!(kept, Ok(Cow::Borrowed(_))), "{schema} at {levels}");
                    }
                    let ok = copied.is_ok();
                    drop((kept, copied));
                    let enveloped = wrap(&[], "p", input);
                    assert_eq!(wrapped.validate_in_place(&enveloped).is_ok(), ok, "enveloped {schema} at {levels}");
                    // Dropped without recursion (the test's own values are deep too).
                    super::depth::dispose(enveloped);
                }
            }
        })
        .unwrap();
    handle.join().unwrap();
}
