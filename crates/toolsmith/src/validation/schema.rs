//! Compiling a JSON schema into a flat table of validation nodes.
//!
//! Each schema maps onto the Python type Pydantic would validate with: `integer` is `int`,
//! `number` is `float`, `enum`/`const` are `Literal`, `anyOf` is a smart-mode union (a `null`
//! member makes it nullable, like `Optional[...]`), an object with `properties` is a model when
//! it has a title (or is a named `$defs` entry) and a `TypedDict` otherwise, and an object
//! without `properties` is a `dict`. `$ref`s become indexes into the table, so recursive
//! schemas compile to cycles of indexes.

use std::collections::{HashMap, HashSet};

use regex::Regex;
use serde_json::{Map, Value};

use super::text::{Num, join_or, py_repr};
use super::{Options, SchemaError};

pub(super) use super::node::*;

/// How deeply subschemas may nest before compiling gives up.
const MAX_SCHEMA_DEPTH: usize = 128;

/// Compiles `schema` (the whole document: `$ref`s point into it). With `type_ranges`, the
/// `format`s schemars writes for Rust's numeric types (`int32`, `uint8`, `float`...) bound
/// their values to the type's range.
pub(super) fn compile(schema: &Value, options: Options, type_ranges: bool) -> Result<Compiled, SchemaError> {
    let mut c = Compiler {
        root: schema,
        type_ranges,
        nodes: vec![Node::Any],
        names: vec![None],
        refs: HashMap::new(),
        path: vec!["#".to_owned()],
        depth: 0,
    };
    let root = c.compile(schema)?;
    c.finish(root, options)
}

struct Compiler<'a> {
    root: &'a Value,
    /// Whether numeric `format`s bound values to the Rust type's range.
    type_ranges: bool,
    nodes: Vec<Node>,
    /// The `$defs` name a node was compiled from, for union tags of recursive types.
    names: Vec<Option<String>>,
    /// Nodes of `$ref` targets already compiled (or being compiled), by pointer.
    refs: HashMap<String, NodeId>,
    path: Vec<String>,
    /// How many subschemas are being compiled, one inside the other.
    depth: usize,
}

/// The id of the shared [`Node::Any`].
const ANY: NodeId = 0;

fn as_obj(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

impl<'a> Compiler<'a> {
    fn err(&self, message: impl Into<String>) -> SchemaError {
        SchemaError::new(self.path.join("/"), message)
    }

    fn push(&mut self, node: Node) -> NodeId {
        if matches!(node, Node::Any) {
            return ANY;
        }
        self.nodes.push(node);
        self.names.push(None);
        self.nodes.len() - 1
    }

    /// Compiles `schema`, found at the path segments `key` below the current path.
    fn sub(&mut self, schema: &Value, key: &[&str]) -> Result<NodeId, SchemaError> {
        let depth = self.path.len();
        self.path.extend(key.iter().map(|k| k.replace('~', "~0").replace('/', "~1")));
        let result = self.compile(schema);
        self.path.truncate(depth);
        result
    }

    fn compile(&mut self, schema: &Value) -> Result<NodeId, SchemaError> {
        if let Some(r) = schema.get("$ref") {
            let r = r.as_str().ok_or_else(|| self.err("$ref must be a string"))?;
            return self.reference(r);
        }
        let node = self.node(schema)?;
        Ok(self.push(node))
    }

    /// The node for a `$ref`, compiling its target the first time.
    fn reference(&mut self, r: &str) -> Result<NodeId, SchemaError> {
        if let Some(&id) = self.refs.get(r) {
            return Ok(id);
        }
        let Some(fragment) = r.strip_prefix('#') else {
            return Err(self
                .err(format!("unsupported $ref {r:?}: only references inside the schema (\"#/...\") are supported")));
        };
        let pointer = percent_decode(fragment);
        let target = self
            .root
            .pointer(&pointer)
            .ok_or_else(|| self.err(format!("$ref {r:?} points to nothing in the schema")))?;
        // Reserve the slot first so that recursive references find it.
        self.nodes.push(Node::Any);
        // A `$defs` entry is named like the Python class it stands for.
        let name = match pointer.rsplitn(3, '/').collect::<Vec<_>>().as_slice() {
            [name, "$defs" | "definitions", _] if !name.is_empty() => Some(name.replace("~1", "/").replace("~0", "~")),
            _ => None,
        };
        self.names.push(name);
        let slot = self.nodes.len() - 1;
        self.refs.insert(r.to_owned(), slot);
        let saved = std::mem::replace(&mut self.path, vec![r.to_owned()]);
        let node = self.node(target);
        self.path = saved;
        let mut node = node?;
        if let Node::Object(o) = &mut node
            && o.title.is_none()
        {
            o.title = self.names[slot].clone();
        }
        self.nodes[slot] = node;
        Ok(slot)
    }

    fn node(&mut self, schema: &Value) -> Result<Node, SchemaError> {
        let obj = match schema {
            Value::Bool(_) => return Ok(Node::Any),
            Value::Object(obj) => obj,
            _ => return Err(self.err("a schema must be an object or a boolean")),
        };
        if self.depth >= MAX_SCHEMA_DEPTH {
            return Err(self.err("the schema is nested too deeply"));
        }
        if let Some(r) = obj.get("$ref") {
            let r = r.as_str().ok_or_else(|| self.err("$ref must be a string"))?;
            self.depth += 1;
            let target = self.reference(r);
            self.depth -= 1;
            return Ok(Node::Ref(target?));
        }
        self.depth += 1;
        let node = self.node_inner(obj);
        self.depth -= 1;
        let node = node?;
        if obj.get("nullable") == Some(&Value::Bool(true))
            && !matches!(node, Node::Any | Node::Null | Node::Nullable(_))
        {
            let id = self.push(node);
            return Ok(Node::Nullable(id));
        }
        Ok(node)
    }

    fn node_inner(&mut self, obj: &Map<String, Value>) -> Result<Node, SchemaError> {
        if let Some(c) = obj.get("const") {
            return Ok(literal(vec![c.clone()]));
        }
        if let Some(e) = obj.get("enum") {
            let values = e.as_array().ok_or_else(|| self.err("enum must be an array"))?;
            return Ok(literal(values.clone()));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(members) = obj.get(key) {
                let members = members.as_array().ok_or_else(|| self.err(format!("{key} must be an array")))?;
                if let Some(d) = obj.get("discriminator")
                    && let Some(node) = self.tagged(key, members, d)?
                {
                    return Ok(node);
                }
                let mut ids = Vec::with_capacity(members.len());
                for (i, m) in members.iter().enumerate() {
                    ids.push(self.sub(m, &[key, &i.to_string()])?);
                }
                return Ok(self.union(ids));
            }
        }
        if let Some(members) = obj.get("allOf") {
            let members = members.as_array().ok_or_else(|| self.err("allOf must be an array"))?;
            let mut ids = Vec::with_capacity(members.len());
            for (i, m) in members.iter().enumerate() {
                ids.push(self.sub(m, &["allOf", &i.to_string()])?);
            }
            return Ok(match ids.as_slice() {
                [] => Node::Any,
                [one] => Node::Ref(*one),
                _ => Node::AllOf(ids.into()),
            });
        }
        match obj.get("type") {
            Some(Value::String(t)) => self.typed(t, obj),
            Some(Value::Array(types)) => {
                let mut ids = Vec::with_capacity(types.len());
                for t in types {
                    let t = t.as_str().ok_or_else(|| self.err("type must be a string or an array of strings"))?;
                    let node = self.typed(t, obj)?;
                    ids.push(self.push(node));
                }
                Ok(self.union(ids))
            }
            Some(_) => Err(self.err("type must be a string or an array of strings")),
            None => {
                let has = |k: &str| obj.contains_key(k);
                if has("properties") || has("additionalProperties") || has("required") {
                    self.typed("object", obj)
                } else if has("items") || has("prefixItems") {
                    self.typed("array", obj)
                } else {
                    Ok(Node::Any)
                }
            }
        }
    }

    /// A union of `ids`; `null` members make it nullable, like `Optional[...]` in Python.
    fn union(&mut self, ids: Vec<NodeId>) -> Node {
        let nullable = ids.iter().any(|&id| matches!(self.peek(id), Node::Null));
        let mut rest: Vec<NodeId> = ids.into_iter().filter(|&id| !matches!(self.peek(id), Node::Null)).collect();
        let inner = match rest.len() {
            0 => return if nullable { Node::Null } else { Node::Any },
            1 => Node::Ref(rest[0]),
            _ => Node::Union(rest.drain(..).map(|node| Member { node, tag: String::new() }).collect()),
        };
        if nullable {
            let id = self.push(inner);
            Node::Nullable(id)
        } else {
            inner
        }
    }

    /// The node `id` stands for, through `$ref`s (a placeholder for one being compiled).
    fn peek(&self, mut id: NodeId) -> &Node {
        for _ in 0..self.nodes.len() {
            match &self.nodes[id] {
                Node::Ref(next) => id = *next,
                node => return node,
            }
        }
        &Node::Any
    }

    /// The schema JSON a member stands for, through `$ref`s.
    fn resolve_json<'b>(&self, mut schema: &'b Value) -> &'b Value
    where
        'a: 'b,
    {
        for _ in 0..32 {
            match schema.get("$ref").and_then(Value::as_str) {
                Some(r) => match r.strip_prefix('#').and_then(|p| self.root.pointer(&percent_decode(p))) {
                    Some(target) => schema = target,
                    None => break,
                },
                None => break,
            }
        }
        schema
    }

    /// A discriminated union, or `None` when the members' tags cannot be worked out (then it
    /// is validated as a plain union).
    fn tagged(&mut self, key: &str, members: &[Value], discriminator: &Value) -> Result<Option<Node>, SchemaError> {
        let property = match discriminator {
            Value::String(p) => p.as_str(),
            Value::Object(d) => match d.get("propertyName").and_then(Value::as_str) {
                Some(p) => p,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        let mapping = discriminator.get("mapping").and_then(as_obj);
        let mut tags: Vec<Vec<String>> = Vec::with_capacity(members.len());
        for m in members {
            let mut member_tags = Vec::new();
            if let (Some(mapping), Some(r)) = (mapping, m.get("$ref").and_then(Value::as_str)) {
                for (tag, target) in mapping {
                    if target.as_str() == Some(r) {
                        member_tags.push(tag.clone());
                    }
                }
            }
            if member_tags.is_empty() {
                let prop =
                    self.resolve_json(m).get("properties").and_then(|p| p.get(property)).map(|p| self.resolve_json(p));
                if let Some(prop) = prop {
                    if let Some(Value::String(c)) = prop.get("const") {
                        member_tags.push(c.clone());
                    } else if let Some(Value::Array(values)) = prop.get("enum") {
                        member_tags.extend(values.iter().filter_map(|v| v.as_str().map(String::from)));
                    }
                }
            }
            if member_tags.is_empty() {
                return Ok(None);
            }
            tags.push(member_tags);
        }
        let mut choices = Vec::new();
        let mut models = true;
        for (i, (m, member_tags)) in members.iter().zip(tags).enumerate() {
            let id = self.sub(m, &[key, &i.to_string()])?;
            models &= matches!(self.peek(id), Node::Object(o) if o.title.is_some());
            for tag in member_tags {
                if !choices.iter().any(|(t, _)| *t == tag) {
                    choices.push((tag, id));
                }
            }
        }
        let expected = choices
            .iter()
            .map(|(t, _)| {
                let mut s = String::new();
                super::text::py_repr_str(t, &mut s);
                s
            })
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Some(Node::Tagged(Box::new(TaggedNode { property: property.to_owned(), choices, expected, models }))))
    }

    fn typed(&mut self, t: &str, obj: &Map<String, Value>) -> Result<Node, SchemaError> {
        Ok(match t {
            "integer" => Node::Int(self.num_bounds(obj, t)?),
            "number" => Node::Float(self.num_bounds(obj, t)?),
            "string" => Node::Str(self.str_bounds(obj)?),
            "boolean" => Node::Bool,
            "null" => Node::Null,
            "array" => self.array(obj)?,
            "object" => self.object(obj)?,
            other => return Err(self.err(format!("unknown type {other:?}"))),
        })
    }

    fn number(&self, obj: &Map<String, Value>, key: &str) -> Result<Option<Num>, SchemaError> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(Num::from_json(n))),
            Some(_) => Err(self.err(format!("{key} must be a number"))),
        }
    }

    fn count(&self, obj: &Map<String, Value>, key: &str) -> Result<Option<usize>, SchemaError> {
        match obj.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
                .ok_or_else(|| self.err(format!("{key} must be a non-negative integer"))),
        }
    }

    fn num_bounds(&self, obj: &Map<String, Value>, t: &str) -> Result<Option<Box<NumBounds>>, SchemaError> {
        let mut b = NumBounds { multiple_of: self.number(obj, "multipleOf")?, ..NumBounds::default() };
        let minimum = self.number(obj, "minimum")?;
        let maximum = self.number(obj, "maximum")?;
        // Draft 4 spells exclusive bounds as booleans next to minimum/maximum.
        match obj.get("exclusiveMinimum") {
            Some(Value::Bool(true)) => b.gt = minimum,
            Some(Value::Bool(false)) | None => b.ge = minimum,
            Some(_) => {
                b.ge = minimum;
                b.gt = self.number(obj, "exclusiveMinimum")?;
            }
        }
        match obj.get("exclusiveMaximum") {
            Some(Value::Bool(true)) => b.lt = maximum,
            Some(Value::Bool(false)) | None => b.le = maximum,
            Some(_) => {
                b.le = maximum;
                b.lt = self.number(obj, "exclusiveMaximum")?;
            }
        }
        b.constrained = b.multiple_of.is_some() || b.le.is_some() || b.lt.is_some() || b.ge.is_some() || b.gt.is_some();
        let range = match obj.get("format") {
            Some(Value::String(f)) if self.type_ranges => type_range(t, f),
            _ => None,
        };
        if let Some((min, max)) = range {
            use std::cmp::Ordering::{Greater, Less};
            // The type's range applies unless the schema's own bound is at least as tight.
            if b.ge.is_none_or(|ge| ge.partial_cmp(min) == Some(Less)) {
                b.ge = Some(min);
            }
            if b.le.is_none_or(|le| le.partial_cmp(max) == Some(Greater)) {
                b.le = Some(max);
            }
        }
        let any = b.constrained || range.is_some();
        Ok(any.then(|| Box::new(b.with_int_range())))
    }

    fn str_bounds(&self, obj: &Map<String, Value>) -> Result<Option<Box<StrBounds>>, SchemaError> {
        let min = self.count(obj, "minLength")?;
        let max = self.count(obj, "maxLength")?;
        let pattern = match obj.get("pattern") {
            None => None,
            Some(Value::String(p)) => {
                let re = Regex::new(p).map_err(|e| self.err(format!("pattern {p:?} is not a valid regex: {e}")))?;
                Some((re, p.clone()))
            }
            Some(_) => return Err(self.err("pattern must be a string")),
        };
        let any = min.is_some() || max.is_some() || pattern.is_some();
        Ok(any.then(|| Box::new(StrBounds { min, max, pattern })))
    }

    fn array(&mut self, obj: &Map<String, Value>) -> Result<Node, SchemaError> {
        let max = self.count(obj, "maxItems")?;
        if let Some(prefix) = obj.get("prefixItems") {
            let prefix = prefix.as_array().ok_or_else(|| self.err("prefixItems must be an array"))?;
            let mut ids = Vec::with_capacity(prefix.len());
            for (i, m) in prefix.iter().enumerate() {
                ids.push(self.sub(m, &["prefixItems", &i.to_string()])?);
            }
            let rest = match obj.get("items") {
                Some(Value::Bool(false)) => None,
                Some(items) => Some(self.sub(items, &["items"])?),
                // Pydantic writes `maxItems` for a fixed-length tuple and no `items`.
                None if max.is_some_and(|m| m <= ids.len()) => None,
                None => Some(ANY),
            };
            return Ok(Node::Tuple(Box::new(TupleNode { prefix: ids, rest })));
        }
        let items = match obj.get("items") {
            Some(items) => self.sub(items, &["items"])?,
            None => ANY,
        };
        Ok(Node::List(Box::new(ListNode { items, min: self.count(obj, "minItems")?, max })))
    }

    fn object(&mut self, obj: &Map<String, Value>) -> Result<Node, SchemaError> {
        let props = match obj.get("properties") {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => return Err(self.err("properties must be an object")),
        };
        let mut required: Vec<&str> = Vec::new();
        if let Some(r) = obj.get("required") {
            let r = r.as_array().ok_or_else(|| self.err("required must be an array of strings"))?;
            for name in r {
                required.push(name.as_str().ok_or_else(|| self.err("required must be an array of strings"))?);
            }
        }
        let typed = props.is_some() || !required.is_empty();
        let extra = match obj.get("additionalProperties") {
            Some(Value::Bool(false)) => Extra::Forbid,
            None if typed => Extra::Ignore,
            None | Some(Value::Bool(true)) => Extra::Keep(ANY),
            Some(schema) => Extra::Keep(self.sub(schema, &["additionalProperties"])?),
        };
        let title = obj.get("title").and_then(Value::as_str).map(String::from);
        if !typed && let Extra::Keep(values) = extra {
            return Ok(Node::Dict(Box::new(DictNode {
                values,
                min: self.count(obj, "minProperties")?,
                max: self.count(obj, "maxProperties")?,
            })));
        }
        let mut fields = Vec::new();
        for (name, schema) in props.into_iter().flatten() {
            fields.push(Field {
                name: name.clone(),
                node: self.sub(schema, &["properties", name])?,
                required: required.contains(&name.as_str()),
                default: schema.get("default").cloned(),
            });
        }
        for name in required {
            if !fields.iter().any(|f| f.name == name) {
                fields.push(Field { name: name.to_owned(), node: ANY, required: true, default: None });
            }
        }
        let index = (fields.len() > 8).then(|| fields.iter().enumerate().map(|(i, f)| (f.name.clone(), i)).collect());
        let template = fields.iter().map(|f| (f.name.clone(), Value::Null)).collect();
        let title = if typed { title } else { None };
        Ok(Node::Object(Box::new(ObjectNode { fields, index, extra, title, template })))
    }

    /// Resolves `$ref` chains, then names union members.
    fn finish(mut self, root: NodeId, options: Options) -> Result<Compiled, SchemaError> {
        let n = self.nodes.len();
        let mut target: Vec<NodeId> = (0..n).collect();
        for (id, slot) in target.iter_mut().enumerate() {
            let mut cur = id;
            let mut steps = 0;
            while let Node::Ref(next) = self.nodes[cur] {
                cur = next;
                steps += 1;
                if steps > n {
                    let name = self.names[id].clone().unwrap_or_default();
                    return Err(SchemaError::new("#", format!("circular $ref: {name:?} refers only to itself")));
                }
            }
            *slot = cur;
        }
        for node in &mut self.nodes {
            node.children_mut(&mut |id| *id = target[*id]);
        }
        let mut tags = Tags { nodes: &self.nodes, names: &self.names, memo: vec![None; n], visiting: HashSet::new() };
        let mut named: Vec<(NodeId, Vec<String>)> = Vec::new();
        for (id, node) in self.nodes.iter().enumerate() {
            if let Node::Union(members) = node {
                named.push((id, members.iter().map(|m| tags.tag(m.node)).collect()));
            }
        }
        for (id, names) in named {
            if let Node::Union(members) = &mut self.nodes[id] {
                for (m, tag) in members.iter_mut().zip(names) {
                    m.tag = tag;
                }
            }
        }
        Ok(Compiled { nodes: self.nodes, root: target[root], options })
    }
}

/// The range of the Rust type that schemars describes as `format` on a schema of type `t`:
/// `int8`..`int64`, `uint8`..`uint64`, `int`/`uint` (`isize`/`usize`) and `float` (`f32`,
/// whose finite values end at `f32::MAX`). `int128`/`uint128` and `double` need no bound: no
/// JSON number the validator accepts falls outside them.
fn type_range(t: &str, format: &str) -> Option<(Num, Num)> {
    let int = |min: i128, max: i128| Some((Num::Int(min), Num::Int(max)));
    match (t, format) {
        ("integer", "int8") => int(i8::MIN.into(), i8::MAX.into()),
        ("integer", "int16") => int(i16::MIN.into(), i16::MAX.into()),
        ("integer", "int32") => int(i32::MIN.into(), i32::MAX.into()),
        ("integer", "int64") => int(i64::MIN.into(), i64::MAX.into()),
        ("integer", "int") => int(isize::MIN as i128, isize::MAX as i128),
        ("integer", "uint8") => int(0, u8::MAX.into()),
        ("integer", "uint16") => int(0, u16::MAX.into()),
        ("integer", "uint32") => int(0, u32::MAX.into()),
        ("integer", "uint64") => int(0, u64::MAX.into()),
        ("integer", "uint") => int(0, usize::MAX as i128),
        ("number", "float") => Some((Num::Float(-f64::from(f32::MAX)), Num::Float(f64::from(f32::MAX)))),
        _ => None,
    }
}

fn literal(values: Vec<Value>) -> Node {
    let msg = format!("Input should be {}", join_or(&values));
    Node::Literal(Box::new(LiteralNode { values, msg }))
}

/// Decodes `%XX` escapes in a `$ref` fragment.
fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Union member tags as pydantic-core names its validators (`int`, `list[str]`, `Point`).
struct Tags<'n> {
    nodes: &'n [Node],
    names: &'n [Option<String>],
    memo: Vec<Option<String>>,
    visiting: HashSet<NodeId>,
}

impl Tags<'_> {
    fn tag(&mut self, id: NodeId) -> String {
        if let Some(t) = &self.memo[id] {
            return t.clone();
        }
        if !self.visiting.insert(id) {
            return self.names[id].clone().unwrap_or_else(|| "...".to_owned());
        }
        let join = |s: &mut Self, ids: &mut dyn Iterator<Item = NodeId>, sep: &str| {
            ids.map(|id| s.tag(id)).collect::<Vec<_>>().join(sep)
        };
        let tag = match &self.nodes[id] {
            Node::Any | Node::AllOf(_) => "any".to_owned(),
            Node::Null => "none".to_owned(),
            Node::Bool => "bool".to_owned(),
            Node::Int(Some(b)) if b.constrained => "constrained-int".to_owned(),
            Node::Int(_) => "int".to_owned(),
            Node::Float(Some(b)) if b.constrained => "constrained-float".to_owned(),
            Node::Float(_) => "float".to_owned(),
            Node::Str(None) => "str".to_owned(),
            Node::Str(Some(_)) => "constrained-str".to_owned(),
            Node::List(l) => format!("list[{}]", self.tag(l.items)),
            Node::Tuple(t) => {
                let mut parts: Vec<String> = t.prefix.iter().map(|&id| self.tag(id)).collect();
                if let Some(rest) = t.rest {
                    parts.push(self.tag(rest));
                    parts.push("...".to_owned());
                }
                format!("tuple[{}]", parts.join(", "))
            }
            Node::Dict(d) => format!("dict[str,{}]", self.tag(d.values)),
            Node::Object(o) => o.title.clone().unwrap_or_else(|| "typed-dict".to_owned()),
            Node::Literal(l) => {
                let mut s = "literal[".to_owned();
                for (i, v) in l.values.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    py_repr(v, &mut s);
                }
                s.push(']');
                s
            }
            Node::Union(members) => {
                let inner = join(self, &mut members.iter().map(|m| m.node), ",");
                format!("union[{inner}]")
            }
            Node::Tagged(t) => {
                let inner = join(self, &mut t.choices.iter().map(|(_, id)| *id), ",");
                format!("tagged-union[{inner}]")
            }
            Node::Nullable(inner) => format!("nullable[{}]", self.tag(*inner)),
            Node::Ref(target) => self.tag(*target),
        };
        self.visiting.remove(&id);
        self.memo[id] = Some(tag.clone());
        tag
    }
}
