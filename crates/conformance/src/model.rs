//! The scripted model of a scenario, and the recorder that keeps what each request offered it.

use super::*;

#[derive(Default)]
pub(crate) struct Records {
    pub(crate) tool_defs: Vec<Value>,
    pub(crate) tool_choice: Vec<Value>,
}

/// Wraps a model: records what each request offers and resolves `tool_choice` as a provider would.
pub(crate) struct Recorder<M> {
    pub(crate) inner: M,
    pub(crate) records: Arc<Mutex<Records>>,
}

impl<M: Model> Model for Recorder<M> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        {
            let mut r = self.records.lock().unwrap_or_else(|p| p.into_inner());
            // Neither model takes return schemas natively.
            let mut defs = serde_json::to_value(&params.function_tools).unwrap_or_default();
            if let Value::Array(items) = &mut defs {
                for d in items.iter_mut().filter_map(Value::as_object_mut) {
                    d.remove("return_schema");
                    d.remove("include_return_schema");
                }
            }
            r.tool_defs.push(defs);
            if settings.and_then(|s| s.tool_choice.as_ref()).is_some() {
                match resolve_tool_choice(settings, params) {
                    Ok(c) => r.tool_choice.push(c.to_json()),
                    Err(e) => return Err(ModelError::new("UserError", e.message)),
                }
            }
        }
        self.inner.request(messages, settings, params).await
    }
}

/// The scripted model: answers request k with `script[k]`.
pub(crate) struct Scripted {
    pub(crate) script: Vec<Value>,
    pub(crate) next: Mutex<usize>,
}

impl Model for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    async fn request(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        _params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        let k = {
            let mut n = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let k = *n;
            *n += 1;
            k
        };
        let Some(Value::Array(parts)) = self.script.get(k) else {
            return Err(ModelError::new("ScriptExhausted", format!("no scripted response for request {k}")));
        };
        let mut out = Vec::new();
        for p in parts {
            if let Some(t) = p.get("text").and_then(Value::as_str) {
                out.push(ModelResponsePart::Text(TextPart::new(t)));
            } else if let Some(c) = p.get("tool_call") {
                let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
                let args = c.get("args").cloned().unwrap_or(json!({}));
                let part = match c.get("id").and_then(Value::as_str) {
                    Some(id) => ToolCallPart::new(name, args, id),
                    None => ToolCallPart::with_generated_id(name, args),
                };
                out.push(ModelResponsePart::ToolCall(part));
            }
        }
        Ok(ModelResponse::new(out))
    }
}
