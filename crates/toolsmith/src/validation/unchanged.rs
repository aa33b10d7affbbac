//! Whether validation would give its input back as it is: valid, with nothing coerced, filled in
//! or dropped. Such input is used where it is, uncopied; it is the usual case for arguments
//! (every field given, in order, of its own type). The answer is conservative: what this does
//! not recognise (unions, tuples, dicts, literals, coercions, defaults) goes to the full
//! validation, which gives the same value, copied, or the errors.

use serde_json::Value;

use super::MAX_NESTING;
use super::check::{MAX_DEPTH, str_fits, within_bounds};
use super::depth::too_deep;
use super::schema::{Compiled, Node, NodeId};
use super::text::Num;

/// Whether `input` is valid against `compiled` and its validated value is `input` itself.
/// Input nested deeper than [`MAX_NESTING`] is not (validation refuses it): the walk counts the
/// containers it enters, and looks at the depth of what it does not enter (a value a schema
/// allows as it is) before saying yes.
pub(super) fn unchanged(compiled: &Compiled, input: &Value) -> bool {
    Walk { compiled }.same(compiled.root, input, 0, 0)
}

struct Walk<'c> {
    compiled: &'c Compiled,
}

impl Walk<'_> {
    /// `depth` counts the schema's steps (its references included), `nest` the containers of
    /// the input around `input`.
    fn same(&self, id: NodeId, input: &Value, depth: u32, nest: usize) -> bool {
        // Validation's own guard against schemas that refer to themselves: its error is left to it.
        if depth >= MAX_DEPTH {
            return false;
        }
        let next = depth + 1;
        match (&self.compiled.nodes[id], input) {
            (Node::Any, _) => too_deep(input, MAX_NESTING - nest).is_none(),
            (Node::Null, Value::Null) | (Node::Bool, Value::Bool(_)) => true,
            (Node::Int(bounds), Value::Number(n)) if n.is_i64() || n.is_u64() => {
                bounds.as_deref().is_none_or(|b| match (b.int_range, n.as_i64()) {
                    (Some((lo, hi)), Some(v)) => (lo..=hi).contains(&i128::from(v)),
                    _ => within_bounds(b, Num::from_json(n), input),
                })
            }
            (Node::Float(bounds), Value::Number(n)) => match Num::from_json(n) {
                // An integer becomes a float: a different value.
                Num::Int(_) => false,
                num => bounds.as_deref().is_none_or(|b| within_bounds(b, num, input)),
            },
            (Node::Str(bounds), Value::String(s)) => bounds.as_deref().is_none_or(|b| str_fits(b, s)),
            (Node::List(list), Value::Array(items)) => {
                nest < MAX_NESTING
                    && list.max.is_none_or(|max| items.len() <= max)
                    && list.min.is_none_or(|min| items.len() >= min)
                    && items.iter().all(|item| self.same(list.items, item, next, nest + 1))
            }
            // Every field, in order, and nothing else: the output is the fields' values under
            // the same keys (a null optional without a default stays null).
            (Node::Object(obj), Value::Object(map)) => {
                let nullable = self.compiled.options.nullable_optionals;
                nest < MAX_NESTING
                    && map.len() == obj.fields.len()
                    && obj.fields.iter().zip(map).all(|(field, (key, value))| {
                        *key == field.name
                            && ((value.is_null() && nullable && !field.required && field.default.is_none())
                                || self.same(field.node, value, next, nest + 1))
                    })
            }
            (Node::Nullable(_), Value::Null) => true,
            (Node::Nullable(inner), _) => self.same(*inner, input, next, nest),
            (Node::Ref(target), _) => self.same(*target, input, next, nest),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Validation that keeps its input must answer exactly as validation that copies it: the
    //! same value (the input itself), the same errors. Checked over generated schemas, with
    //! generated inputs and with the outputs of validating them (valid, canonical inputs: the
    //! ones the shortcut takes).
    use std::borrow::Cow;

    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use crate::validation::{Options, Validator};

    fn leaf_schema() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"type": "integer"})),
            (-3i64..3, 0i64..6).prop_map(|(lo, span)| json!({"type": "integer", "minimum": lo, "maximum": lo + span})),
            Just(json!({"type": "number"})),
            Just(json!({"type": "number", "exclusiveMinimum": 0})),
            Just(json!({"type": "string"})),
            Just(json!({"type": "string", "minLength": 1, "maxLength": 3})),
            Just(json!({"type": "string", "pattern": "^[a-c]+$"})),
            Just(json!({"type": "boolean"})),
            Just(json!({"type": "null"})),
            Just(json!({})),
            Just(json!({"enum": ["a", 1]})),
        ]
    }

    fn schema() -> impl Strategy<Value = Value> {
        leaf_schema().prop_recursive(3, 24, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|s| json!({"anyOf": [s, {"type": "null"}]})),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
                (inner.clone(), prop::option::of(0usize..2), prop::option::of(1usize..3)).prop_map(|(s, min, max)| {
                    let mut a = json!({"type": "array", "items": s});
                    if let Some(min) = min {
                        a["minItems"] = json!(min);
                    }
                    if let Some(max) = max {
                        a["maxItems"] = json!(max);
                    }
                    a
                }),
                (inner.clone(), inner, any::<bool>(), any::<bool>(), 0u8..3).prop_map(|(a, b, ra, default, extra)| {
                    let mut b = b;
                    if default {
                        b["default"] = json!("x");
                    }
                    let required: Vec<&str> =
                        [("a", ra), ("b", !default)].iter().filter(|r| r.1).map(|r| r.0).collect();
                    let mut o = json!({"type": "object", "properties": {"a": a, "b": b}, "required": required});
                    match extra {
                        0 => o["additionalProperties"] = json!(false),
                        1 => o["additionalProperties"] = json!(true),
                        _ => {}
                    }
                    o
                }),
            ]
        })
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-4i64..8).prop_map(|i| json!(i)),
            (-4.0f64..8.0).prop_map(|f| json!(f)),
            "[a-d0-9]{0,4}".prop_map(Value::String),
            Just(json!("1")),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((prop_oneof![Just("a"), Just("b"), Just("c")], inner), 0..3).prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<String, Value>>())
                }),
            ]
        })
    }

    /// `input` checked every way against the copying paths (`validate`, and `validate_parsed`
    /// for JSON text), which never take the shortcut.
    fn agrees(v: &Validator, input: &Value) -> Result<(), TestCaseError> {
        let copied = v.validate(input);
        match v.validate_in_place(input) {
            Ok(Cow::Borrowed(kept)) => {
                prop_assert_eq!(Some(kept), copied.as_ref().ok(), "kept input {} but validation copies it", input);
            }
            Ok(Cow::Owned(out)) => prop_assert_eq!(Ok(out), copied),
            Err(e) => prop_assert_eq!(Err(e), copied),
        }
        let text = input.to_string();
        prop_assert_eq!(v.validate_str(&text), v.validate_parsed(input), "as JSON text: {}", text);
        Ok(())
    }

    fn compiled(schema: &Value, nullable: bool) -> Option<Validator> {
        Validator::compile_with(schema, Options { fill_defaults: true, nullable_optionals: nullable }).ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        #[test]
        fn keeping_the_input_answers_as_copying_it(schema in schema(), input in value(), nullable in any::<bool>()) {
            let Some(v) = compiled(&schema, nullable) else { return Ok(()) };
            agrees(&v, &input)?;
            // What validation gives back is valid as it is: the shortcut's usual input.
            if let Ok(out) = v.validate(&input) {
                agrees(&v, &out)?;
                // ... and, for an object, with a key more or one less.
                if let Value::Object(map) = &out {
                    let mut more = map.clone();
                    more.insert("c".into(), json!(1));
                    agrees(&v, &Value::Object(more))?;
                    let fewer: Map<String, Value> = map.iter().skip(1).map(|(k, v)| (k.clone(), v.clone())).collect();
                    agrees(&v, &Value::Object(fewer))?;
                }
            }
            // The same, wrapped in an envelope.
            let wrapped = v.clone().with_envelope("p");
            agrees(&wrapped, &json!({"p": input}))?;
        }
    }

    #[test]
    fn usual_arguments_are_kept() {
        let v = Validator::compile(&json!({
            "type": "object",
            "properties": {"x": {"type": "integer"}, "s": {"type": "string"}, "l": {"type": "array", "items": {"type": "number"}}},
            "required": ["x", "s", "l"],
        }))
        .unwrap();
        let args = json!({"x": 1, "s": "a", "l": [1.5]});
        assert!(matches!(v.validate_in_place(&args), Ok(Cow::Borrowed(_))));
        // Coerced, reordered or incomplete arguments are copied.
        for copied in [
            json!({"x": "1", "s": "a", "l": [1.5]}),
            json!({"s": "a", "x": 1, "l": [1.5]}),
            json!({"x": 1, "s": "a", "l": [1]}),
        ] {
            assert!(matches!(v.validate_in_place(&copied), Ok(Cow::Owned(_))), "{copied}");
        }
    }
}
