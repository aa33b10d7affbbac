//! [`TestModel`]: an offline model that calls every tool, then answers with what they returned.

use serde_json::{Map, Value};

use crate::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, TextPart, ToolCallPart, ToolOutcome,
};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings};
use crate::tool::ToolDefinition;

/// Which tools a [`TestModel`] calls on its first request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CallTools {
    /// Every tool shown.
    #[default]
    All,
    /// These tools, in this order.
    Only(Vec<String>),
}

/// A model for tests that needs no network and behaves exactly like Pydantic AI's `TestModel`.
///
/// On the first request it calls every tool it is shown (or those chosen with
/// [`TestModel::call_tools`]) with arguments generated from each tool's schema; after that it
/// calls again only the tools whose last call was retried; then it answers with the compact JSON
/// of `{tool name: last return}` for text output, or calls the output tool with generated
/// arguments for structured output.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Add two integers.
/// #[tool]
/// fn add(x: i64, y: i64) -> i64 { x + y }
///
/// # fn main() -> Result<(), AgentRunError> {
/// let agent = Agent::builder(TestModel::default().seed(1)).tool(add).build()?;
/// let result = agent.run("go").run_sync()?;
/// assert_eq!(result.output(), r#"{"add":2}"#);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct TestModel {
    call_tools: CallTools,
    seed: u64,
    custom_output_text: Option<String>,
    custom_output_args: Option<Value>,
    /// The parameters of the last request, shared by the model's clones.
    last: std::sync::Arc<std::sync::Mutex<Option<ModelRequestParameters>>>,
}

impl TestModel {
    /// A test model that calls every tool, with seed 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The parameters of the last request this model (or a clone of it, such as the one an
    /// agent holds) was sent: the tools offered, the output tools, the instructions, the native
    /// tools.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// #[tool]
    /// fn ping() -> String { "pong".into() }
    ///
    /// let model = TestModel::new();
    /// let agent = Agent::builder(model.clone()).instructions("Be brief.").tool(ping).build()?;
    /// agent.run("hi").run_sync()?;
    /// let params = model.last_model_request_parameters().unwrap();
    /// assert_eq!(params.function_tools[0].name, "ping");
    /// assert_eq!(params.instructions.as_deref(), Some("Be brief."));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_model_request_parameters(&self) -> Option<ModelRequestParameters> {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Calls only these tools, in this order, on the first request.
    pub fn call_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.call_tools = CallTools::Only(names.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the seed used to generate arguments (it changes numbers, strings and booleans).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Answers with this text instead of the JSON of the tool returns.
    pub fn custom_output_text(mut self, text: impl Into<String>) -> Self {
        self.custom_output_text = Some(text.into());
        self
    }

    /// Calls the output tool with these arguments instead of generated ones.
    pub fn custom_output_args(mut self, args: Value) -> Self {
        self.custom_output_args = Some(args);
        self
    }

    /// A first-round call: its id names the tool.
    fn call(name: &str, args: Value) -> ModelResponsePart {
        ModelResponsePart::ToolCall(ToolCallPart::new(name, args, format!("pyd_ai_tool_call_id__{name}")))
    }

    /// A re-call after a retry: a fresh id.
    fn recall(name: &str, args: Value) -> ModelResponsePart {
        ModelResponsePart::ToolCall(ToolCallPart::with_generated_id(name, args))
    }

    fn respond(&self, messages: &[ModelMessage], params: &ModelRequestParameters) -> Result<ModelResponse, ModelError> {
        let tools: Vec<&ToolDefinition> = match &self.call_tools {
            CallTools::All => params.function_tools.iter().map(|t| &**t).collect(),
            CallTools::Only(names) => names
                .iter()
                .map(|n| {
                    params.function_tools.iter().map(|t| &**t).find(|t| &t.name == n).ok_or_else(|| {
                        ModelError::new(
                            crate::model::ModelErrorKind::User,
                            if params.withheld_tools.contains(n) {
                                format!(
                                    "Tool '{n}' has visibility 'withheld': it is not shown to the model until `search_tools` reveals it (or it is registered without deferred loading), so `TestModel` cannot call it"
                                )
                            } else {
                                format!("TestModel was configured to call unknown tool '{n}'.")
                            },
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let answered = messages.iter().any(|m| matches!(m, ModelMessage::Response(_)));
        if !tools.is_empty() && !answered {
            let parts = tools
                .iter()
                .map(|t| Self::call(&t.name, generate_args(&t.parameters_json_schema, self.seed)))
                .collect();
            return Ok(ModelResponse::new(parts));
        }
        if let Some(ModelMessage::Request(last)) = messages.last() {
            let retried: Vec<&str> = last
                .parts
                .iter()
                .filter_map(|p| match p {
                    ModelRequestPart::ToolReturn(r) if r.outcome == ToolOutcome::Retried => Some(r.tool_name.as_str()),
                    ModelRequestPart::RetryPrompt(r) => r.tool_name.as_deref(),
                    _ => None,
                })
                .collect();
            if !retried.is_empty() {
                let mut parts: Vec<ModelResponsePart> = tools
                    .iter()
                    .filter(|t| retried.contains(&t.name.as_str()))
                    .map(|t| Self::recall(&t.name, generate_args(&t.parameters_json_schema, self.seed)))
                    .collect();
                parts.extend(
                    params
                        .output_tools
                        .iter()
                        .filter(|t| retried.contains(&t.name.as_str()))
                        .map(|t| Self::recall(&t.name, self.output_args(t))),
                );
                return Ok(ModelResponse::new(parts));
            }
        }
        if let Some(text) = &self.custom_output_text {
            return Ok(ModelResponse::text(text.clone()));
        }
        // Native and prompted output: the output's JSON as text.
        if params.output_mode != crate::output_mode::OutputMode::Tool
            && let Some(object) = &params.output_object
        {
            let args = match &self.custom_output_args {
                Some(args) => args.clone(),
                None => generate_args(&object.json_schema, self.seed),
            };
            return Ok(ModelResponse::text(args.to_string()));
        }
        if params.allow_text_output && self.custom_output_args.is_none() {
            let mut output = Map::new();
            for m in messages {
                if let ModelMessage::Request(r) = m {
                    for p in &r.parts {
                        if let ModelRequestPart::ToolReturn(t) = p {
                            output.insert(t.tool_name.clone(), t.content.clone());
                        }
                    }
                }
            }
            let text = if output.is_empty() {
                "success (no tool calls)".to_string()
            } else {
                serde_json::to_string(&Value::Object(output)).unwrap_or_default()
            };
            return Ok(ModelResponse::new(vec![ModelResponsePart::Text(TextPart::new(text))]));
        }
        if params.output_tools.is_empty() {
            return Err(ModelError::new(
                crate::model::ModelErrorKind::User,
                "TestModel has no output tool to call and text output is not allowed",
            ));
        }
        let tool = &params.output_tools[(self.seed as usize) % params.output_tools.len()];
        Ok(ModelResponse::new(vec![Self::call(&tool.name, self.output_args(tool))]))
    }

    fn output_args(&self, tool: &ToolDefinition) -> Value {
        match &self.custom_output_args {
            Some(args) => args.clone(),
            None => generate_args(&tool.parameters_json_schema, self.seed),
        }
    }
}

impl Model for TestModel {
    fn name(&self) -> &str {
        "test"
    }

    /// Answers any output mode (native output with the output's JSON as text).
    fn native_output_support(&self) -> bool {
        true
    }

    fn system(&self) -> &str {
        "test"
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(params.clone());
        let mut response = self.respond(messages, params)?;
        response.model_name = Some("test".into());
        Ok(response)
    }
}

/// Generates the minimal arguments that match a JSON schema, as Pydantic AI's `TestModel` does.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {"x": {"type": "integer"}, "s": {"type": "string"}}, "required": ["x", "s"]});
/// assert_eq!(toolsmith::model::generate_args(&schema, 0), json!({"x": 0, "s": "a"}));
/// assert_eq!(toolsmith::model::generate_args(&schema, 27), json!({"x": 27, "s": "ab"}));
/// ```
pub fn generate_args(schema: &Value, seed: u64) -> Value {
    let mut g = Generator { defs: schema.get("$defs").or_else(|| schema.get("definitions")), seed, depth: 0 };
    g.any(schema)
}

struct Generator<'a> {
    defs: Option<&'a Value>,
    seed: u64,
    depth: u32,
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

impl<'a> Generator<'a> {
    fn any(&mut self, schema: &'a Value) -> Value {
        if self.depth > 64 {
            return Value::Null;
        }
        self.depth += 1;
        let v = self.any_inner(schema);
        self.depth -= 1;
        v
    }

    fn pick<'b>(&self, items: &'b [Value]) -> &'b Value {
        &items[(self.seed as usize) % items.len()]
    }

    fn any_inner(&mut self, schema: &'a Value) -> Value {
        let Value::Object(map) = schema else { return self.char() };
        if let Some(c) = map.get("const").filter(|c| truthy(c)) {
            return c.clone();
        }
        if let Some(Value::Array(e)) = map.get("enum").filter(|e| truthy(e)) {
            return self.pick(e).clone();
        }
        if let Some(Value::Array(e)) = map.get("examples").filter(|e| truthy(e)) {
            return self.pick(e).clone();
        }
        if let Some(Value::String(r)) = map.get("$ref") {
            let key = r.trim_start_matches("#/$defs/").trim_start_matches("#/definitions/");
            return match self.defs.and_then(|d| d.get(key)) {
                Some(def) => self.any(def),
                None => Value::Null,
            };
        }
        if let Some(Value::Array(a)) = map.get("anyOf").filter(|a| truthy(a)) {
            let member = self.pick(a);
            return self.any(member);
        }
        let type_ = match map.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(ts)) if !ts.is_empty() => self.pick(ts).as_str().unwrap_or("null"),
            _ => return self.char(),
        };
        match type_ {
            "object" => self.object(map),
            "string" => self.string(map),
            "integer" => Value::from(self.int(map)),
            "number" => Value::from(self.int(map) as f64),
            "boolean" => Value::Bool(self.seed % 2 == 1),
            "array" => self.array(map),
            _ => Value::Null,
        }
    }

    fn object(&mut self, map: &'a Map<String, Value>) -> Value {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut data = Map::new();
        if let Some(Value::Object(props)) = map.get("properties") {
            for (k, v) in props {
                if required.contains(&k.as_str()) {
                    let value = self.any(v);
                    data.insert(k.clone(), value);
                }
            }
        }
        if let Some(add) = map.get("additionalProperties").filter(|a| truthy(a)) {
            let mut key = "additionalProperty".to_string();
            while data.contains_key(&key) {
                key.push('_');
            }
            let value = if add == &Value::Bool(true) { self.char() } else { self.any(add) };
            data.insert(key, value);
        }
        Value::Object(data)
    }

    fn string(&mut self, map: &Map<String, Value>) -> Value {
        if let Some(n) = map.get("minLength").and_then(Value::as_u64) {
            return Value::String(self.char_str().repeat(n as usize));
        }
        if map.get("maxLength").and_then(Value::as_u64) == Some(0) {
            return Value::String(String::new());
        }
        if map.get("format").and_then(Value::as_str) == Some("date") {
            let d = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap_or_default()
                + chrono::Duration::days(self.seed as i64);
            return Value::String(d.format("%Y-%m-%d").to_string());
        }
        self.char()
    }

    fn int(&self, map: &Map<String, Value>) -> i64 {
        let seed = self.seed as i64;
        let maximum = map
            .get("maximum")
            .and_then(Value::as_i64)
            .or_else(|| map.get("exclusiveMaximum").and_then(Value::as_i64).map(|m| m - 1));
        let minimum = map
            .get("minimum")
            .and_then(Value::as_i64)
            .or_else(|| map.get("exclusiveMinimum").and_then(Value::as_i64).map(|m| m + 1));
        match (minimum, maximum) {
            (Some(lo), Some(hi)) if hi > lo => lo + seed % (hi - lo),
            (Some(lo), Some(_)) => lo,
            (Some(lo), None) => lo + seed,
            (None, Some(hi)) => hi - seed,
            (None, None) => seed,
        }
    }

    fn array(&mut self, map: &'a Map<String, Value>) -> Value {
        let mut data = Vec::new();
        let unique = map.get("uniqueItems").is_some_and(truthy);
        if let Some(Value::Array(prefix)) = map.get("prefixItems") {
            for item in prefix {
                let v = self.any(item);
                data.push(v);
                if unique {
                    self.seed += 1;
                }
            }
        }
        static EMPTY: Value = Value::Null;
        let items = map.get("items").unwrap_or(&EMPTY);
        let min_items = map.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        if min_items > data.len() {
            for _ in data.len()..min_items {
                let v = self.any(if items.is_null() { &EMPTY_OBJECT } else { items });
                data.push(v);
                if unique {
                    self.seed += 1;
                }
            }
        } else if truthy(items) {
            let max_items = map.get("maxItems").and_then(Value::as_u64).map(|m| m as usize);
            if max_items.is_none_or(|m| m > data.len()) {
                let v = self.any(items);
                data.push(v);
                if unique {
                    self.seed += 1;
                }
            }
        }
        Value::Array(data)
    }

    fn char_str(&self) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
        let n = CHARS.len() as u64;
        let mut s = String::new();
        let mut rem = self.seed / n;
        while rem > 0 {
            s.push(CHARS[((rem - 1) % n) as usize] as char);
            rem /= n;
        }
        s.push(CHARS[(self.seed % n) as usize] as char);
        s
    }

    fn char(&self) -> Value {
        Value::String(self.char_str())
    }
}

static EMPTY_OBJECT: Value = Value::Null;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generates_like_pydantic_ai() {
        let schema = json!({"type": "object", "properties": {
            "count": {"type": "integer"}, "label": {"type": "string"}, "ratio": {"type": "number"},
            "flag": {"type": "boolean"}, "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]},
            "skipped": {"type": "string"}},
            "required": ["count", "label", "ratio", "flag", "maybe", "tags", "point"]});
        assert_eq!(
            generate_args(&schema, 1),
            json!({"count": 1, "label": "b", "ratio": 1.0, "flag": true, "maybe": null, "tags": ["b"], "point": {"x": 1, "y": 1}})
        );
        let dict = json!({"type": "object", "properties": {"c": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}}}, "required": ["c"]});
        assert_eq!(generate_args(&dict, 0), json!({"c": {"additionalProperty": [0.0]}}));
    }

    #[test]
    fn excel_style_strings() {
        let s = json!({"type": "string"});
        assert_eq!(generate_args(&s, 25), json!("z"));
        assert_eq!(generate_args(&s, 26), json!("aa"));
    }
}
