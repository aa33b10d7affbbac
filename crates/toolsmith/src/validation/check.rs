//! Validating a value against compiled nodes, in Pydantic v2's lax mode.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use super::schema::{
    Compiled, DictNode, Extra, ListNode, LiteralNode, Member, Node, NodeId, NumBounds, ObjectNode, StrBounds,
    TaggedNode, TupleNode,
};
use super::text::{Num, plural};
use super::{ErrorDetail, LocItem, Options};

/// How many nodes deep validation may go before giving up with `recursion_loop` (a schema
/// that refers to itself without consuming input; inputs are at most `MAX_NESTING` deep).
pub(super) const MAX_DEPTH: u32 = 400;

/// Pydantic's message for `recursion_loop`.
const RECURSION_LOOP: &str = "Recursion error - cyclic reference detected";

/// How exactly an input matched, as pydantic-core's smart unions rank it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Exactness {
    Lax,
    Strict,
    Exact,
}

/// An error on its way up: its location is built in reverse.
#[derive(Debug)]
struct LineError {
    kind: &'static str,
    msg: Cow<'static, str>,
    loc_rev: Vec<LocItem>,
    input: Value,
}

type Errors = Vec<LineError>;
type Outcome = Result<Value, Errors>;

fn error(kind: &'static str, msg: impl Into<Cow<'static, str>>, input: &Value) -> Errors {
    vec![LineError { kind, msg: msg.into(), loc_rev: Vec::new(), input: input.clone() }]
}

/// One error located at `item`.
fn line_error(kind: &'static str, msg: &'static str, input: &Value, item: LocItem) -> LineError {
    LineError { kind, msg: Cow::Borrowed(msg), loc_rev: vec![item], input: input.clone() }
}

/// Appends `errors` to `all`, located under `item`.
fn extend_at(all: &mut Errors, errors: Errors, item: impl Fn() -> LocItem) {
    all.extend(errors.into_iter().map(|mut e| {
        e.loc_rev.push(item());
        e
    }));
}

/// Validates `input`; `json` selects the wording of pydantic's JSON mode (used for arguments
/// that arrived as a JSON string) over its Python mode (arguments that arrived as a dict).
pub(super) fn validate(compiled: &Compiled, input: &Value, json: bool) -> Result<Value, Vec<ErrorDetail>> {
    // Everything below walks the input recursively (and copies parts of it into outputs and
    // errors): a value nested too deeply is refused first, by a walk that does not recurse.
    if let Some(loc) = super::depth::too_deep(input, super::MAX_NESTING) {
        return Err(vec![ErrorDetail {
            kind: "recursion_loop".to_owned(),
            loc,
            msg: RECURSION_LOOP.to_owned(),
            input: Value::Null,
        }]);
    }
    let mut run = Run {
        nodes: &compiled.nodes,
        options: compiled.options,
        json,
        exactness: Exactness::Exact,
        fields_set: None,
        depth: 0,
    };
    run.node(compiled.root, input).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| {
                let mut loc = e.loc_rev;
                loc.reverse();
                ErrorDetail { kind: e.kind.to_owned(), loc, msg: e.msg.into_owned(), input: e.input }
            })
            .collect()
    })
}

struct Run<'a> {
    nodes: &'a [Node],
    options: Options,
    /// Whether to word errors as pydantic's JSON mode does.
    json: bool,
    exactness: Exactness,
    /// How many fields the last model validated had set (ranks models in unions).
    fields_set: Option<usize>,
    depth: u32,
}

impl Run<'_> {
    /// A message that pydantic words differently in JSON mode.
    fn msg(&self, python: &'static str, json: &'static str) -> &'static str {
        if self.json { json } else { python }
    }

    fn floor(&mut self, e: Exactness) {
        self.exactness = self.exactness.min(e);
    }

    /// Validates `input` against node `id`. The handlers it dispatches to are kept out of
    /// line (`#[inline(never)]`) so that this recursive frame stays small: that both speeds
    /// up validation and lets deep inputs reach the depth limit long before the stack ends.
    fn node(&mut self, id: NodeId, input: &Value) -> Outcome {
        if self.depth >= MAX_DEPTH {
            // The input is left out: copying what is left of a value this deep could itself
            // exhaust the stack.
            return Err(error("recursion_loop", RECURSION_LOOP, &Value::Null));
        }
        self.depth += 1;
        let nodes = self.nodes;
        let out = match &nodes[id] {
            Node::Any => Ok(input.clone()),
            Node::Null => match input {
                Value::Null => Ok(Value::Null),
                _ => {
                    let msg = self.msg("Input should be None", "Input should be null");
                    Err(error("none_required", msg, input))
                }
            },
            Node::Bool => self.bool(input),
            Node::Int(bounds) => self.int(bounds.as_deref(), input),
            Node::Float(bounds) => self.float(bounds.as_deref(), input),
            Node::Str(bounds) => str_node(bounds.as_deref(), input),
            Node::List(list) => self.list(list, input),
            Node::Tuple(tuple) => self.tuple(tuple, input),
            Node::Dict(dict) => self.dict(dict, input),
            Node::Object(obj) => self.object(obj, input),
            Node::Literal(lit) => literal(lit, input),
            Node::Union(members) => self.union(members, input),
            Node::Tagged(tagged) => self.tagged(tagged, input),
            Node::Nullable(inner) => match input {
                Value::Null => Ok(Value::Null),
                _ => self.node(*inner, input),
            },
            Node::AllOf(ids) => self.all_of(ids, input),
            Node::Ref(target) => self.node(*target, input),
        };
        self.depth -= 1;
        out
    }

    fn dict_type(&self, input: &Value) -> Errors {
        let msg = self.msg("Input should be a valid dictionary", "Input should be an object");
        error("dict_type", msg, input)
    }

    #[inline(never)]
    fn bool(&mut self, input: &Value) -> Outcome {
        const PARSING: &str = "Input should be a valid boolean, unable to interpret input";
        let b = match input {
            Value::Bool(b) => return Ok(Value::Bool(*b)),
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "0" | "off" | "f" | "false" | "n" | "no" => false,
                "1" | "on" | "t" | "true" | "y" | "yes" => true,
                _ => return Err(error("bool_parsing", PARSING, input)),
            },
            Value::Number(n) => match Num::from_json(n) {
                Num::Int(0) => false,
                Num::Int(1) => true,
                Num::Int(_) => return Err(error("bool_parsing", PARSING, input)),
                Num::Float(0.0) => false,
                Num::Float(1.0) => true,
                Num::Float(f) if f.fract() == 0.0 => {
                    return Err(error("bool_parsing", PARSING, input));
                }
                Num::Float(_) => {
                    return Err(error("bool_type", "Input should be a valid boolean", input));
                }
            },
            _ => return Err(error("bool_type", "Input should be a valid boolean", input)),
        };
        self.floor(Exactness::Lax);
        Ok(Value::Bool(b))
    }

    #[inline(never)]
    fn int(&mut self, bounds: Option<&NumBounds>, input: &Value) -> Outcome {
        let i = match input {
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                if let Some(b) = bounds {
                    check_bounds(b, Num::from_json(n), input)?;
                }
                return Ok(input.clone());
            }
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.fract() != 0.0 {
                    return Err(error(
                        "int_from_float",
                        "Input should be a valid integer, got a number with a fractional part",
                        input,
                    ));
                }
                // pydantic-core converts floats through i64: 2^63 and beyond are too big.
                if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
                    return Err(too_big(input));
                }
                f as i128
            }
            Value::Bool(b) => i128::from(*b),
            Value::String(s) => parse_int(s).map_err(|kind| match kind {
                IntErr::Parsing => {
                    error("int_parsing", "Input should be a valid integer, unable to parse string as an integer", input)
                }
                IntErr::Size => too_big(input),
            })?,
            _ => return Err(error("int_type", "Input should be a valid integer", input)),
        };
        self.floor(Exactness::Lax);
        if let Some(b) = bounds {
            check_bounds(b, Num::Int(i), input)?;
        }
        int_value(i).ok_or_else(|| too_big(input))
    }

    #[inline(never)]
    fn float(&mut self, bounds: Option<&NumBounds>, input: &Value) -> Outcome {
        let f = match input {
            Value::Number(n) => {
                let num = Num::from_json(n);
                if let Num::Int(_) = num {
                    self.floor(Exactness::Strict);
                }
                if let Some(b) = bounds {
                    check_bounds(b, num, input)?;
                }
                return match num {
                    Num::Float(_) => Ok(input.clone()),
                    Num::Int(i) => Ok(float_value(i as f64, input)?),
                };
            }
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::String(s) => parse_float(s).ok_or_else(|| {
                error("float_parsing", "Input should be a valid number, unable to parse string as a number", input)
            })?,
            _ => return Err(error("float_type", "Input should be a valid number", input)),
        };
        self.floor(Exactness::Lax);
        if let Some(b) = bounds {
            check_bounds(b, Num::Float(f), input)?;
        }
        float_value(f, input)
    }

    #[inline(never)]
    fn list(&mut self, list: &ListNode, input: &Value) -> Outcome {
        let Value::Array(items) = input else {
            let msg = self.msg("Input should be a valid list", "Input should be a valid array");
            return Err(error("list_type", msg, input));
        };
        if let Some(max) = list.max
            && items.len() > max
        {
            let msg =
                format!("List should have at most {max} item{} after validation, not {}", plural(max), items.len());
            return Err(error("too_long", msg, input));
        }
        let out = self.items(list.items, items, 0)?;
        if let Some(min) = list.min
            && items.len() < min
        {
            let msg =
                format!("List should have at least {min} item{} after validation, not {}", plural(min), items.len());
            return Err(error("too_short", msg, input));
        }
        Ok(Value::Array(out))
    }

    /// Validates `items` (at indexes from `offset`) against one node.
    #[inline(never)]
    fn items(&mut self, id: NodeId, items: &[Value], offset: usize) -> Result<Vec<Value>, Errors> {
        let mut out = Vec::with_capacity(items.len());
        let mut errors = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match self.node(id, item) {
                Ok(v) if errors.is_empty() => out.push(v),
                Ok(_) => {}
                Err(e) => extend_at(&mut errors, e, || LocItem::Index(offset + i)),
            }
        }
        if errors.is_empty() { Ok(out) } else { Err(errors) }
    }

    #[inline(never)]
    fn tuple(&mut self, tuple: &TupleNode, input: &Value) -> Outcome {
        let Value::Array(items) = input else {
            let msg = self.msg("Input should be a valid tuple", "Input should be a valid array");
            return Err(error("tuple_type", msg, input));
        };
        let n = tuple.prefix.len();
        if tuple.rest.is_none() && items.len() > n {
            let msg = format!("Tuple should have at most {n} item{} after validation, not {}", plural(n), items.len());
            return Err(error("too_long", msg, input));
        }
        let mut out = Vec::with_capacity(items.len().max(n));
        let mut errors = Vec::new();
        for (i, &id) in tuple.prefix.iter().enumerate() {
            match items.get(i) {
                Some(item) => match self.node(id, item) {
                    Ok(v) => out.push(v),
                    Err(e) => extend_at(&mut errors, e, || LocItem::Index(i)),
                },
                None => errors.push(line_error("missing", "Field required", input, LocItem::Index(i))),
            }
        }
        if let (Some(rest), Some(tail)) = (tuple.rest, items.get(n..)) {
            match self.items(rest, tail, n) {
                Ok(v) => out.extend(v),
                Err(e) => errors.extend(e),
            }
        }
        if errors.is_empty() { Ok(Value::Array(out)) } else { Err(errors) }
    }

    #[inline(never)]
    fn dict(&mut self, dict: &DictNode, input: &Value) -> Outcome {
        let Value::Object(map) = input else {
            return Err(self.dict_type(input));
        };
        if let Some(max) = dict.max
            && map.len() > max
        {
            let msg = format!("Dictionary should have at most {max} item{} after validation, not more", plural(max));
            return Err(error("too_long", msg, input));
        }
        let mut out = Map::new();
        let mut errors = Vec::new();
        for (k, v) in map {
            match self.node(dict.values, v) {
                Ok(v) if errors.is_empty() => {
                    out.insert(k.clone(), v);
                }
                Ok(_) => {}
                Err(e) => extend_at(&mut errors, e, || LocItem::Key(k.clone())),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if let Some(min) = dict.min
            && map.len() < min
        {
            let msg = format!(
                "Dictionary should have at least {min} item{} after validation, not {}",
                plural(min),
                map.len()
            );
            return Err(error("too_short", msg, input));
        }
        Ok(Value::Object(out))
    }

    #[inline(never)]
    fn object(&mut self, obj: &ObjectNode, input: &Value) -> Outcome {
        let Value::Object(map) = input else {
            return Err(match &obj.title {
                Some(_) if self.json => error("model_type", "Input should be an object", input),
                Some(title) => {
                    error("model_type", format!("Input should be a valid dictionary or instance of {title}"), input)
                }
                None => self.dict_type(input),
            });
        };
        // The usual input: every field, in the schema's order, nothing else.
        if map.len() == obj.fields.len() && map.keys().zip(&obj.fields).all(|(k, f)| *k == f.name) {
            return self.object_in_order(obj, map);
        }
        let mut out = Map::with_capacity(obj.fields.len());
        let mut errors = Vec::new();
        let mut seen = 0;
        for field in &obj.fields {
            match lookup(map, &field.name) {
                // An optional field without a default is `Optional[T] = None` in an output model:
                // null is its value.
                Some(Value::Null) if self.options.nullable_optionals && !field.required && field.default.is_none() => {
                    seen += 1;
                    if errors.is_empty() {
                        out.insert(field.name.clone(), Value::Null);
                    }
                }
                Some(v) => {
                    seen += 1;
                    match self.node(field.node, v) {
                        Ok(v) if errors.is_empty() => {
                            out.insert(field.name.clone(), v);
                        }
                        Ok(_) => {}
                        Err(e) => extend_at(&mut errors, e, || LocItem::Key(field.name.clone())),
                    }
                }
                None if field.required => {
                    errors.push(line_error("missing", "Field required", input, LocItem::Key(field.name.clone())));
                }
                None if !errors.is_empty() => {}
                None => match &field.default {
                    Some(d) if self.options.fill_defaults => {
                        out.insert(field.name.clone(), d.clone());
                    }
                    None if self.options.nullable_optionals => {
                        out.insert(field.name.clone(), Value::Null);
                    }
                    _ => {}
                },
            }
        }
        if seen < map.len() && obj.extra != Extra::Ignore {
            for (k, v) in map {
                if obj.has_field(k) {
                    continue;
                }
                match obj.extra {
                    Extra::Forbid => {
                        let msg = "Extra inputs are not permitted";
                        errors.push(line_error("extra_forbidden", msg, v, LocItem::Key(k.clone())));
                    }
                    Extra::Keep(id) => match self.node(id, v) {
                        Ok(v) if errors.is_empty() => {
                            out.insert(k.clone(), v);
                        }
                        Ok(_) => {}
                        Err(e) => extend_at(&mut errors, e, || LocItem::Key(k.clone())),
                    },
                    Extra::Ignore => {}
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if obj.title.is_some() {
            // A model built from a dict is a strict (not exact) match; in a union the model
            // with the most fields set wins.
            self.floor(Exactness::Strict);
            self.fields_set = Some(seen);
        }
        Ok(Value::Object(out))
    }

    /// [`Run::object`] for an input that has every field in order and nothing else: the same
    /// checks and errors, the output made from the node's template (no key is hashed).
    fn object_in_order(&mut self, obj: &ObjectNode, map: &Map<String, Value>) -> Outcome {
        let mut out = obj.template.clone();
        let mut errors = Vec::new();
        for ((field, v), slot) in obj.fields.iter().zip(map.values()).zip(out.values_mut()) {
            if matches!(v, Value::Null) && self.options.nullable_optionals && !field.required && field.default.is_none()
            {
                continue;
            }
            match self.node(field.node, v) {
                Ok(v) => *slot = v,
                Err(e) => extend_at(&mut errors, e, || LocItem::Key(field.name.clone())),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if obj.title.is_some() {
            self.floor(Exactness::Strict);
            self.fields_set = Some(map.len());
        }
        Ok(Value::Object(out))
    }

    /// A smart-mode union: the first exact match wins, else the best (most fields set, then
    /// most exact, then first) success; if every member fails, every member's errors, each
    /// under the member's tag.
    #[inline(never)]
    fn union(&mut self, members: &[Member], input: &Value) -> Outcome {
        let (outer_exactness, outer_fields_set) = (self.exactness, self.fields_set);
        let mut best: Option<(Value, Exactness, Option<usize>)> = None;
        let mut errors = Vec::new();
        for m in members {
            self.exactness = Exactness::Exact;
            self.fields_set = None;
            match self.node(m.node, input) {
                Ok(v) if self.exactness == Exactness::Exact && self.fields_set.is_none() => {
                    self.exactness = outer_exactness;
                    self.fields_set = outer_fields_set;
                    return Ok(v);
                }
                Ok(v) => {
                    let better = match &best {
                        None => true,
                        Some((_, exactness, fields_set)) => match (fields_set, self.fields_set) {
                            (Some(cur), Some(new)) if *cur != new => *cur < new,
                            _ => *exactness < self.exactness,
                        },
                    };
                    if better {
                        best = Some((v, self.exactness, self.fields_set));
                    }
                }
                Err(e) if best.is_none() => {
                    extend_at(&mut errors, e, || LocItem::Key(m.tag.clone()));
                }
                Err(_) => {}
            }
        }
        match best {
            Some((v, exactness, fields_set)) => {
                self.exactness = outer_exactness.min(exactness);
                self.fields_set = fields_set.or(outer_fields_set);
                Ok(v)
            }
            None => {
                self.exactness = outer_exactness;
                self.fields_set = outer_fields_set;
                Err(errors)
            }
        }
    }

    #[inline(never)]
    fn tagged(&mut self, tagged: &TaggedNode, input: &Value) -> Outcome {
        let Value::Object(map) = input else {
            return Err(if tagged.models && !self.json {
                error(
                    "model_attributes_type",
                    "Input should be a valid dictionary or object to extract fields from",
                    input,
                )
            } else {
                self.dict_type(input)
            });
        };
        let Some(tag) = map.get(&tagged.property) else {
            let msg = format!("Unable to extract tag using discriminator '{}'", tagged.property);
            return Err(error("union_tag_not_found", msg, input));
        };
        let tag_text = match tag {
            Value::String(s) => Cow::Borrowed(s.as_str()),
            other => Cow::Owned(other.to_string()),
        };
        match tagged.choices.iter().find(|(t, _)| *t == tag_text) {
            Some((t, id)) => self.node(*id, input).map_err(|e| {
                let mut all = Vec::with_capacity(e.len());
                extend_at(&mut all, e, || LocItem::Key(t.clone()));
                all
            }),
            None => {
                let msg = format!(
                    "Input tag '{tag_text}' found using '{}' does not match any of the expected tags: {}",
                    tagged.property, tagged.expected
                );
                Err(error("union_tag_invalid", msg, input))
            }
        }
    }

    /// `allOf`: every member must accept the input; objects' outputs are merged.
    #[inline(never)]
    fn all_of(&mut self, ids: &[NodeId], input: &Value) -> Outcome {
        let mut errors = Vec::new();
        let mut out: Option<Value> = None;
        for &id in ids {
            match self.node(id, input) {
                Ok(v) => {
                    out = Some(match (out, v) {
                        (Some(Value::Object(mut acc)), Value::Object(more)) => {
                            for (k, v) in more {
                                acc.entry(k).or_insert(v);
                            }
                            Value::Object(acc)
                        }
                        (_, v) => v,
                    });
                }
                Err(e) => errors.extend(e),
            }
        }
        match out {
            Some(v) if errors.is_empty() => Ok(v),
            _ => Err(errors),
        }
    }
}

/// Whether `s` is within the bounds (what [`str_node`] accepts).
pub(super) fn str_fits(b: &StrBounds, s: &str) -> bool {
    let len = || s.chars().count();
    b.min.is_none_or(|min| len() >= min)
        && b.max.is_none_or(|max| len() <= max)
        && b.pattern.as_ref().is_none_or(|(re, _)| re.is_match(s))
}

fn str_node(bounds: Option<&StrBounds>, input: &Value) -> Outcome {
    let Value::String(s) = input else {
        return Err(error("string_type", "Input should be a valid string", input));
    };
    if let Some(b) = bounds {
        if b.min.is_some() || b.max.is_some() {
            let len = s.chars().count();
            if let Some(min) = b.min.filter(|&min| len < min) {
                let msg = format!("String should have at least {min} character{}", plural(min));
                return Err(error("string_too_short", msg, input));
            }
            if let Some(max) = b.max.filter(|&max| len > max) {
                let msg = format!("String should have at most {max} character{}", plural(max));
                return Err(error("string_too_long", msg, input));
            }
        }
        if let Some((re, pattern)) = &b.pattern
            && !re.is_match(s)
        {
            let msg = format!("String should match pattern '{pattern}'");
            return Err(error("string_pattern_mismatch", msg, input));
        }
    }
    Ok(input.clone())
}

/// `Literal[...]`: equality as in Python (`1 == 1.0 == True`), giving the expected value.
fn literal(lit: &LiteralNode, input: &Value) -> Outcome {
    if let Some(v) = lit.values.iter().find(|v| *v == input) {
        return Ok(v.clone());
    }
    let as_num = |v: &Value| match v {
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::Number(n) => Some(Num::from_json(n)),
        _ => None,
    };
    if let Some(n) = as_num(input) {
        let hit =
            lit.values.iter().find(|v| as_num(v).is_some_and(|e| e.partial_cmp(n) == Some(std::cmp::Ordering::Equal)));
        if let Some(v) = hit {
            return Ok(v.clone());
        }
    }
    Err(error("literal_error", lit.msg.clone(), input))
}

/// Whether `n` is within the bounds (what [`check_bounds`] accepts).
pub(super) fn within_bounds(b: &NumBounds, n: Num, input: &Value) -> bool {
    check_bounds(b, n, input).is_ok()
}

fn check_bounds(b: &NumBounds, n: Num, input: &Value) -> Result<(), Errors> {
    use std::cmp::Ordering::{Greater, Less};
    if let Some(m) = b.multiple_of
        && !n.is_multiple_of(m)
    {
        return Err(error("multiple_of", format!("Input should be a multiple of {m}"), input));
    }
    if let Some(le) = b.le
        && !matches!(n.partial_cmp(le), Some(o) if o != Greater)
    {
        let msg = format!("Input should be less than or equal to {le}");
        return Err(error("less_than_equal", msg, input));
    }
    if let Some(lt) = b.lt
        && n.partial_cmp(lt) != Some(Less)
    {
        return Err(error("less_than", format!("Input should be less than {lt}"), input));
    }
    if let Some(ge) = b.ge
        && !matches!(n.partial_cmp(ge), Some(o) if o != Less)
    {
        let msg = format!("Input should be greater than or equal to {ge}");
        return Err(error("greater_than_equal", msg, input));
    }
    if let Some(gt) = b.gt
        && n.partial_cmp(gt) != Some(Greater)
    {
        let msg = format!("Input should be greater than {gt}");
        return Err(error("greater_than", msg, input));
    }
    Ok(())
}

/// `map[key]`, by a linear scan for small maps (faster than hashing the key).
fn lookup<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    if map.len() <= 8 { map.iter().find(|(k, _)| *k == key).map(|(_, v)| v) } else { map.get(key) }
}

fn too_big(input: &Value) -> Errors {
    error("int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", input)
}

fn int_value(i: i128) -> Option<Value> {
    if let Ok(i) = i64::try_from(i) {
        Some(Value::Number(i.into()))
    } else {
        u64::try_from(i).ok().map(|u| Value::Number(u.into()))
    }
}

fn float_value(f: f64, input: &Value) -> Outcome {
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| error("finite_number", "Input should be a finite number", input))
}

enum IntErr {
    Parsing,
    Size,
}

/// Python's `int(str)` for decimal strings, as pydantic-core does it: surrounding whitespace,
/// a sign, single underscores between digits, and a `.0...` fraction are accepted.
fn parse_int(s: &str) -> Result<i128, IntErr> {
    let s = s.trim();
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let s = match s.split_once('.') {
        Some((int, zeros)) if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => int,
        Some(_) => return Err(IntErr::Parsing),
        None => s,
    };
    let digits = strip_underscores(s).ok_or(IntErr::Parsing)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(IntErr::Parsing);
    }
    let mut value: i128 = 0;
    for b in digits.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b - b'0')))
            .filter(|&v| v <= i128::from(u64::MAX))
            .ok_or(IntErr::Size)?;
    }
    if negative {
        value = -value;
    }
    if value < i128::from(i64::MIN) {
        return Err(IntErr::Size);
    }
    Ok(value)
}

/// Python's `float(str)`: surrounding whitespace and single underscores between digits.
fn parse_float(s: &str) -> Option<f64> {
    strip_underscores(s.trim())?.parse().ok()
}

/// Removes underscores that each stand between two ASCII digits; `None` for any other.
fn strip_underscores(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('_') {
        return Some(Cow::Borrowed(s));
    }
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if c == '_' {
            let before = i.checked_sub(1).and_then(|j| bytes.get(j));
            let after = bytes.get(i + 1);
            if !(before.is_some_and(u8::is_ascii_digit) && after.is_some_and(u8::is_ascii_digit)) {
                return None;
            }
        } else {
            out.push(c);
        }
    }
    Some(Cow::Owned(out))
}
