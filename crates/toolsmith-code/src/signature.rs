//! Python function signatures from JSON schemas, as Pydantic AI's `FunctionSignature` renders
//! them for code mode: keyword-only parameters with types, `TypedDict` classes for object
//! schemas, defaults as Python literals, the return type from the return schema (`Any`
//! without one), and the description with an `Args:` section as the docstring.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};
use toolsmith::ToolDefinition;

/// A type expression.
#[derive(Debug, Clone)]
enum TypeExpr {
    /// `str`, `int`, `float`, `bool`, `Any`, `None`.
    Simple(&'static str),
    /// `Literal[...]`.
    Literal(Vec<Value>),
    /// `list[...]`, `dict[...]`, `tuple[...]`.
    Generic(&'static str, Vec<TypeExpr>),
    /// `a | b`.
    Union(Vec<TypeExpr>),
    /// A `TypedDict` of the signature (its index in the signature's types).
    Named(usize),
    /// A name with no definition (a `$ref` to nothing).
    Unresolved(String),
}

const ANY: TypeExpr = TypeExpr::Simple("Any");
const NONE: TypeExpr = TypeExpr::Simple("None");

/// One field of a `TypedDict`.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    ty: TypeExpr,
    required: bool,
    description: Option<String>,
}

/// A `TypedDict` class.
#[derive(Debug, Clone)]
struct TypeSig {
    name: String,
    description: Option<String>,
    fields: Vec<Field>,
}

/// One parameter.
#[derive(Debug, Clone)]
struct Param {
    name: String,
    ty: TypeExpr,
    default: Option<String>,
    description: Option<String>,
}

/// A function signature with the types it refers to.
#[derive(Debug, Clone)]
pub(crate) struct Signature {
    params: Vec<Param>,
    ret: TypeExpr,
    /// Every type built for the signature (parameters' and return's).
    types: Vec<TypeSig>,
    /// The types the signature refers to, in order (indexes into `types`).
    referenced: Vec<usize>,
}

/// How names render: a type whose name conflicts with another tool's is prefixed.
struct Names<'a> {
    prefix: Option<&'a str>,
    conflicting: &'a BTreeSet<String>,
}

impl Names<'_> {
    fn name(&self, name: &str) -> String {
        match self.prefix {
            Some(p) if self.conflicting.contains(name) => format!("{p}_{name}"),
            _ => name.to_string(),
        }
    }
}

/// The types built while a schema is read, by name, with the `$defs` being resolved inline.
struct Builder<'a> {
    tool: &'a str,
    types: Vec<TypeSig>,
    by_name: HashMap<String, usize>,
    order: Vec<usize>,
    resolving: HashSet<String>,
}

fn node(schema: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    schema.as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn simple(json_type: &str) -> Option<&'static str> {
    Some(match json_type {
        "string" => "str",
        "integer" => "int",
        "number" => "float",
        "boolean" => "bool",
        "null" => "None",
        _ => return None,
    })
}

fn pascal(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let mut out = String::new();
    for part in s.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(&chars.as_str().to_lowercase());
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

fn path_type_name(tool: &str, path: &str) -> String {
    std::iter::once(tool).chain(path.split('.').filter(|p| !p.is_empty())).map(pascal).collect()
}

/// Python's `str.isidentifier()` for the ASCII names schemas use (and letters beyond).
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic()) && chars.all(|c| c == '_' || c.is_alphanumeric())
}

impl<'a> Builder<'a> {
    fn new(tool: &'a str) -> Self {
        Builder { tool, types: Vec::new(), by_name: HashMap::new(), order: Vec::new(), resolving: HashSet::new() }
    }

    fn process_defs(&mut self, defs: &Map<String, Value>) {
        for (name, def) in defs {
            let def = node(def);
            if def.get("type").and_then(Value::as_str) == Some("object")
                && def.contains_key("properties")
                && !self.by_name.contains_key(name)
            {
                self.register(name, def, defs, name);
            }
        }
    }

    fn register(&mut self, name: &str, schema: &Map<String, Value>, defs: &Map<String, Value>, path: &str) -> usize {
        let index = self.types.len();
        self.types.push(TypeSig { name: name.to_string(), description: None, fields: Vec::new() });
        self.by_name.insert(name.to_string(), index);
        self.order.push(index);
        let required: HashSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(Value::Object(props)) = schema.get("properties") {
            for (prop, prop_schema) in props {
                let prop_path = if path.is_empty() { prop.clone() } else { format!("{path}.{prop}") };
                let ty = self.expr(prop_schema, defs, &prop_path);
                fields.push(Field {
                    name: prop.clone(),
                    ty,
                    required: required.contains(prop.as_str()),
                    description: description(node(prop_schema)),
                });
            }
        }
        self.types[index].fields = fields;
        self.types[index].description = description(schema);
        index
    }

    fn expr(&mut self, schema: &Value, defs: &Map<String, Value>, path: &str) -> TypeExpr {
        let schema = node(schema);
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference).to_string();
            if let (Some(def), false) = (defs.get(&name), self.by_name.contains_key(&name)) {
                let def = node(def);
                if def.get("type").and_then(Value::as_str) == Some("object") && def.contains_key("properties") {
                    self.register(&name, def, defs, path);
                } else if !def.contains_key("$ref") {
                    if self.resolving.contains(&name) {
                        return ANY;
                    }
                    self.resolving.insert(name.clone());
                    let resolved = self.expr(&Value::Object(def.clone()), defs, path);
                    self.resolving.remove(&name);
                    return resolved;
                }
            }
            return match self.by_name.get(&name) {
                Some(&i) => TypeExpr::Named(i),
                None => TypeExpr::Unresolved(name),
            };
        }
        if let Some(Value::Array(options)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
            return self.union(options, defs, path);
        }
        if let Some(all) = schema.get("allOf") {
            return match all.as_array().map(Vec::as_slice) {
                Some([one]) => self.expr(one, defs, path),
                _ => ANY,
            };
        }
        if let Some(c) = schema.get("const") {
            return TypeExpr::Literal(vec![c.clone()]);
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            return TypeExpr::Literal(values.clone());
        }
        self.type_expr(schema.get("type"), schema, defs, path)
    }

    fn type_expr(
        &mut self,
        ty: Option<&Value>,
        schema: &Map<String, Value>,
        defs: &Map<String, Value>,
        path: &str,
    ) -> TypeExpr {
        match ty {
            Some(Value::String(t)) => {
                if let Some(s) = simple(t) {
                    return TypeExpr::Simple(s);
                }
                match t.as_str() {
                    "array" => match schema.get("items") {
                        Some(Value::Array(items)) if !items.is_empty() => TypeExpr::Generic(
                            "tuple",
                            items
                                .iter()
                                .enumerate()
                                .map(|(i, item)| self.expr(item, defs, &format!("{path}.{i}")))
                                .collect(),
                        ),
                        Some(items) if is_truthy(items) => {
                            TypeExpr::Generic("list", vec![self.expr(items, defs, &format!("{path}Item"))])
                        }
                        _ => TypeExpr::Generic("list", vec![ANY]),
                    },
                    "object" => self.object(schema, defs, path),
                    _ => ANY,
                }
            }
            Some(Value::Array(types)) => {
                let types: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
                if types.contains(&"object") && schema.contains_key("properties") {
                    let base = self.object(schema, defs, path);
                    return if types.contains(&"null") { TypeExpr::Union(vec![base, NONE]) } else { base };
                }
                let exprs: Vec<TypeExpr> = types.iter().map(|t| TypeExpr::Simple(simple(t).unwrap_or("Any"))).collect();
                let is_none = |e: &TypeExpr| matches!(e, TypeExpr::Simple("None"));
                if exprs.len() == 2 && exprs.iter().any(is_none) {
                    let other = exprs.iter().find(|e| !is_none(e)).cloned().unwrap_or(ANY);
                    return TypeExpr::Union(vec![other, NONE]);
                }
                match exprs.len() {
                    0 => ANY,
                    1 => exprs.into_iter().next().unwrap_or(ANY),
                    _ => TypeExpr::Union(exprs),
                }
            }
            _ => ANY,
        }
    }

    fn object(&mut self, schema: &Map<String, Value>, defs: &Map<String, Value>, path: &str) -> TypeExpr {
        if schema.contains_key("properties") {
            let name = match schema.get("title").and_then(Value::as_str) {
                Some(title) if is_identifier(title) => title.to_string(),
                _ => path_type_name(self.tool, path),
            };
            let index = match self.by_name.get(&name) {
                Some(&i) => i,
                None => self.register(&name, schema, defs, path),
            };
            return TypeExpr::Named(index);
        }
        match schema.get("additionalProperties") {
            Some(Value::Object(_)) => {
                let extra = schema.get("additionalProperties").cloned().unwrap_or(Value::Null);
                let value = self.expr(&extra, defs, &format!("{path}Value"));
                TypeExpr::Generic("dict", vec![TypeExpr::Simple("str"), value])
            }
            _ => TypeExpr::Generic("dict", vec![TypeExpr::Simple("str"), ANY]),
        }
    }

    fn union(&mut self, options: &[Value], defs: &Map<String, Value>, path: &str) -> TypeExpr {
        let mut has_null = false;
        let mut exprs = Vec::new();
        for option in options {
            if node(option).get("type").and_then(Value::as_str) == Some("null") {
                has_null = true;
            } else {
                exprs.push(self.expr(option, defs, path));
            }
        }
        let mut seen = HashSet::new();
        let names = Names { prefix: None, conflicting: &BTreeSet::new() };
        let mut unique: Vec<TypeExpr> =
            exprs.into_iter().filter(|e| seen.insert(render_expr(e, &self.types, &names))).collect();
        if has_null {
            unique.push(NONE);
        }
        if unique.len() == 1 { unique.pop().unwrap_or(ANY) } else { TypeExpr::Union(unique) }
    }
}

/// Python truthiness of a schema node (`{}` and `[]` are false).
fn is_truthy(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Bool(b) => *b,
        Value::Null => false,
        _ => true,
    }
}

fn description(schema: &Map<String, Value>) -> Option<String> {
    schema.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()).map(str::to_string)
}

fn schema_allows_null(schema: &Map<String, Value>) -> bool {
    if let Some(Value::Array(types)) = schema.get("type") {
        return types.iter().any(|t| t == "null");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            return options.iter().any(|o| node(o).get("type").and_then(Value::as_str) == Some("null"));
        }
    }
    false
}

fn render_expr(e: &TypeExpr, types: &[TypeSig], names: &Names<'_>) -> String {
    match e {
        TypeExpr::Simple(s) => (*s).to_string(),
        TypeExpr::Literal(values) => {
            format!("Literal[{}]", values.iter().map(toolsmith::pyjson::repr).collect::<Vec<_>>().join(", "))
        }
        TypeExpr::Generic(base, args) => {
            format!("{base}[{}]", args.iter().map(|a| render_expr(a, types, names)).collect::<Vec<_>>().join(", "))
        }
        TypeExpr::Union(members) => {
            members.iter().map(|m| render_expr(m, types, names)).collect::<Vec<_>>().join(" | ")
        }
        TypeExpr::Named(i) => names.name(&types[*i].name),
        TypeExpr::Unresolved(name) => names.name(name),
    }
}

/// Python's `str.splitlines()`.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break =
            matches!(c, '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}');
        if is_break {
            lines.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' && chars.peek().map(|(_, n)| *n) == Some('\n') {
                chars.next();
                end += 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// A description as docstring lines: escaped, one line in `"""..."""`, several between lines of
/// their own.
fn docstring(text: &str, indent: &str) -> Vec<String> {
    let mut escaped = String::new();
    for c in text.trim().chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '\0' => escaped.push_str("\\x00"),
            '"' => escaped.push_str("\\\""),
            c => escaped.push(c),
        }
    }
    let lines = split_lines(&escaped);
    if lines.len() > 1 {
        let mut out = vec![format!("{indent}\"\"\"")];
        out.extend(lines.iter().map(|l| if l.trim().is_empty() { String::new() } else { format!("{indent}{l}") }));
        out.push(format!("{indent}\"\"\""));
        out
    } else {
        vec![format!("{indent}\"\"\"{escaped}\"\"\"")]
    }
}

impl Signature {
    /// The signature of a tool: its parameters from the arguments schema, its return type from
    /// the return schema.
    pub(crate) fn from_def(def: &ToolDefinition) -> Self {
        Signature::from_schema(&def.name, &def.parameters_json_schema, def.return_schema.as_deref())
    }

    fn from_schema(name: &str, parameters: &Value, returns: Option<&Value>) -> Self {
        let empty = Map::new();
        let mut b = Builder::new(name);
        let param_defs = node(parameters).get("$defs").and_then(Value::as_object).unwrap_or(&empty);
        b.process_defs(param_defs);
        let params = build_params(&mut b, node(parameters), param_defs);
        let param_types: Vec<usize> = b.order.clone();
        let param_names: HashMap<String, usize> = b.by_name.clone();
        let mut ret = ANY;
        let mut return_types = Vec::new();
        if let Some(returns) = returns {
            // The return schema's `$defs` are its own: read with a fresh table of names.
            let mut rb = Builder::new(name);
            rb.types = std::mem::take(&mut b.types);
            let offset = rb.types.len();
            let return_defs = node(returns).get("$defs").and_then(Value::as_object).unwrap_or(&empty);
            rb.process_defs(return_defs);
            ret = rb.expr(returns, return_defs, "Return");
            return_types = rb.order.clone();
            debug_assert!(return_types.iter().all(|&i| i >= offset));
            b.types = rb.types;
        }
        let mut referenced = param_types;
        for i in return_types {
            let same = param_names
                .get(&b.types[i].name)
                .is_some_and(|&existing| structurally_equal(&b.types, existing, &b.types, i));
            if !same {
                referenced.push(i);
            }
        }
        Signature { params, ret, types: b.types, referenced }
    }

    /// `def name(*, a: int, b: str = 'x') -> T:` with the docstring and `body`.
    fn render(&self, name: &str, description: Option<&str>, body: &str, is_async: bool, names: &Names<'_>) -> String {
        let prefix = if is_async { "async def" } else { "def" };
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                let ty = render_expr(&p.ty, &self.types, names);
                match &p.default {
                    Some(d) => format!("{}: {ty} = {d}", p.name),
                    None => format!("{}: {ty}", p.name),
                }
            })
            .collect();
        let ret = render_expr(&self.ret, &self.types, names);
        let mut parts = vec![if params.is_empty() {
            format!("{prefix} {name}() -> {ret}:")
        } else {
            format!("{prefix} {name}(*, {}) -> {ret}:", params.join(", "))
        }];
        let mut sections: Vec<String> = description.filter(|d| !d.is_empty()).map(str::to_string).into_iter().collect();
        let mut args = Vec::new();
        for p in &self.params {
            let text = p.description.as_deref().unwrap_or("");
            let lines = split_lines(text.trim());
            if let Some((first, rest)) = lines.split_first() {
                args.push(format!("    {}: {first}", p.name));
                args.extend(rest.iter().map(|l| format!("        {l}")));
            }
        }
        if !args.is_empty() {
            sections.push(std::iter::once("Args:".to_string()).chain(args).collect::<Vec<_>>().join("\n"));
        }
        let doc = sections.join("\n\n");
        if !doc.is_empty() {
            parts.extend(docstring(&doc, "    "));
        }
        parts.push(format!("    {body}"));
        parts.join("\n")
    }
}

fn build_params(b: &mut Builder<'_>, schema: &Map<String, Value>, defs: &Map<String, Value>) -> Vec<Param> {
    let required: HashSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let (mut req, mut opt) = (Vec::new(), Vec::new());
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            let ty = b.expr(prop, defs, name);
            let p = node(prop);
            let description = description(p);
            if let Some(default) = p.get("default") {
                opt.push(Param {
                    name: name.clone(),
                    ty,
                    default: Some(toolsmith::pyjson::repr(default)),
                    description,
                });
            } else if required.contains(name.as_str()) {
                req.push(Param { name: name.clone(), ty, default: None, description });
            } else {
                let ty = if schema_allows_null(p) { ty } else { TypeExpr::Union(vec![ty, NONE]) };
                opt.push(Param { name: name.clone(), ty, default: Some("None".into()), description });
            }
        }
    }
    req.extend(opt);
    req
}

fn structurally_equal(a_types: &[TypeSig], a: usize, b_types: &[TypeSig], b: usize) -> bool {
    let (x, y) = (&a_types[a], &b_types[b]);
    let names = Names { prefix: None, conflicting: &BTreeSet::new() };
    let keys = |t: &TypeSig| t.fields.iter().map(|f| f.name.clone()).collect::<BTreeSet<_>>();
    if keys(x) != keys(y) {
        return false;
    }
    x.fields.iter().all(|f| {
        y.fields.iter().find(|g| g.name == f.name).is_some_and(|g| {
            f.required == g.required && render_expr(&f.ty, a_types, &names) == render_expr(&g.ty, b_types, &names)
        })
    })
}

/// The catalogue of the tools offered inside `run_code`: the `TypedDict` definitions they
/// share (each once; names two tools define differently prefixed with the tool's name) and
/// each function's signature.
pub(crate) struct Catalogue {
    /// Rendered `TypedDict` classes.
    pub(crate) types: Vec<String>,
    /// Rendered functions.
    pub(crate) functions: Vec<String>,
}

/// Renders the functions (`name`, definition, async or not) as Pydantic AI's code mode does,
/// with `body` as each function's body (`...` in the description).
pub(crate) fn render_catalogue(defs: &[(String, &ToolDefinition, bool)], body: &str) -> Catalogue {
    let sigs: Vec<Signature> = defs
        .iter()
        .map(|(name, def, _)| {
            let mut def = (*def).clone();
            def.name = name.clone();
            Signature::from_def(&def)
        })
        .collect();
    // Types with the same name: the first of a name is canonical; a later one equal in shape is
    // the same type, a different one makes the name conflicting.
    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    let mut conflicting = BTreeSet::new();
    // (signature, type) of each unique type, in order, with its owner (first signature using it).
    let mut unique: Vec<(usize, usize)> = Vec::new();
    for (s, sig) in sigs.iter().enumerate() {
        for &t in &sig.referenced {
            let name = &sig.types[t].name;
            match seen.get(name) {
                None => {
                    seen.insert(name.clone(), (s, t));
                    unique.push((s, t));
                }
                Some(&(s0, t0)) if structurally_equal(&sigs[s0].types, t0, &sig.types, t) => {}
                Some(_) => {
                    conflicting.insert(name.clone());
                    unique.push((s, t));
                }
            }
        }
    }
    let types = unique
        .iter()
        .map(|&(s, t)| {
            let owner = defs[s].0.as_str();
            let names = Names { prefix: Some(owner), conflicting: &conflicting };
            render_type(&sigs[s].types, t, &names)
        })
        .collect();
    let functions = defs
        .iter()
        .zip(&sigs)
        .map(|((name, def, is_async), sig)| {
            let names = Names { prefix: Some(name), conflicting: &conflicting };
            sig.render(name, def.description.as_deref(), body, *is_async, &names)
        })
        .collect();
    Catalogue { types, functions }
}

fn render_type(types: &[TypeSig], t: usize, names: &Names<'_>) -> String {
    let ty = &types[t];
    let mut lines = vec![format!("class {}(TypedDict):", names.name(&ty.name))];
    if let Some(d) = &ty.description {
        lines.extend(docstring(d, "    "));
    }
    if ty.fields.is_empty() {
        if ty.description.is_none() {
            lines.push("    pass".into());
        }
    } else {
        for f in &ty.fields {
            let mut rendered = render_expr(&f.ty, types, names);
            if !f.required {
                rendered = format!("NotRequired[{rendered}]");
            }
            lines.push(format!("    {}: {rendered}", f.name));
            if let Some(d) = &f.description {
                lines.extend(docstring(d, "    "));
            }
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(def: ToolDefinition) -> String {
        let c = render_catalogue(&[(def.name.clone(), &def, true)], "...");
        let mut out = c.types.join("\n\n");
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out + &c.functions.join("\n\n")
    }

    #[test]
    fn keyword_only_params_defaults_and_args_section() {
        let def = ToolDefinition::new(
            "get_order",
            json!({"type": "object", "properties": {
                "order_id": {"type": "integer", "description": "The order."},
                "verbose": {"type": "boolean", "default": false},
                "note": {"type": "string"}
            }, "required": ["order_id"]}),
        )
        .with_description("Look up an order.");
        assert_eq!(
            one(def),
            "async def get_order(*, order_id: int, verbose: bool = False, note: str | None = None) -> Any:\n    \"\"\"\n    Look up an order.\n\n    Args:\n        order_id: The order.\n    \"\"\"\n    ..."
        );
    }

    #[test]
    fn nested_objects_become_typed_dicts_and_return_types_render() {
        let def = ToolDefinition::new(
            "find",
            json!({"type": "object", "properties": {"filter": {"type": "object", "properties": {"tag": {"type": "string"}}}},
                   "required": ["filter"]}),
        )
        .with_return_schema(json!({"type": "array", "items": {"$ref": "#/$defs/Order"},
            "$defs": {"Order": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}}));
        assert_eq!(
            one(def),
            "class FindFilter(TypedDict):\n    tag: NotRequired[str]\n\nclass Order(TypedDict):\n    id: int\n\nasync def find(*, filter: FindFilter) -> list[Order]:\n    ..."
        );
    }
}
