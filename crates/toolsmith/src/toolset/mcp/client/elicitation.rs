//! Elicitation (`elicitation/create`): a server asks the user for input, as a form (a flat JSON
//! schema of primitive fields) or by sending them to a URL. The request goes to the handler the
//! application gave ([`McpToolset::elicitation_handler`](crate::toolset::McpToolset::elicitation_handler));
//! the defaults of the requested schema fill the fields an accepted form leaves out (SEP-1034).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// What a server asks the user for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Elicitation {
    /// The server, as named in messages.
    pub server: String,
    /// What the server says to the user.
    pub message: String,
    /// A form to fill in, or a URL to visit.
    pub mode: ElicitationMode,
}

/// The two kinds of elicitation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationMode {
    /// Fill in a form: `schema` is the requested JSON schema (an object of primitive fields:
    /// string, number, integer, boolean, enum), as MCP JSON.
    Form {
        /// The requested schema.
        schema: Value,
    },
    /// Visit a URL (out-of-band input: a sign-in, a payment...). Accepting means the user agreed
    /// to go there; the server learns the outcome by its own means.
    Url {
        /// Where to send the user.
        url: String,
        /// The server's identifier for this elicitation.
        elicitation_id: String,
    },
}

impl Elicitation {
    /// The requested schema, for a form.
    pub fn schema(&self) -> Option<&Value> {
        match &self.mode {
            ElicitationMode::Form { schema } => Some(schema),
            ElicitationMode::Url { .. } => None,
        }
    }

    /// The URL, for a URL elicitation.
    pub fn url(&self) -> Option<&str> {
        match &self.mode {
            ElicitationMode::Url { url, .. } => Some(url),
            ElicitationMode::Form { .. } => None,
        }
    }
}

/// The user's answer to an [`Elicitation`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationResponse {
    /// The user gave the information: the form's fields (missing ones get the schema's
    /// defaults), or nothing for a URL elicitation.
    Accept(Map<String, Value>),
    /// The user refused; the operation may go on without it.
    Decline,
    /// The user dismissed the request; the operation should stop.
    Cancel,
}

impl ElicitationResponse {
    /// Accepts with these fields (a JSON object; anything else is taken as no fields).
    pub fn accept(content: Value) -> Self {
        match content {
            Value::Object(map) => ElicitationResponse::Accept(map),
            _ => ElicitationResponse::Accept(Map::new()),
        }
    }

    /// Accepts with no fields of its own: a URL elicitation, or a form taken with its defaults.
    pub fn accept_defaults() -> Self {
        ElicitationResponse::Accept(Map::new())
    }
}

/// The handler of elicitation requests, as the toolset keeps it.
pub(crate) type ElicitationFn = Arc<dyn Fn(Elicitation) -> BoxFuture<'static, ElicitationResponse> + Send + Sync>;

pub(crate) fn boxed<F, Fut>(handler: F) -> ElicitationFn
where
    F: Fn(Elicitation) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ElicitationResponse> + Send + 'static,
{
    Arc::new(move |request| Box::pin(handler(request)))
}

/// The field types whose defaults are applied: the primitives and enums (single or multiple
/// choice), the kinds of field an elicitation form may have.
fn is_primitive(property: &Value) -> bool {
    if property.get("enum").is_some() || property.get("oneOf").is_some() {
        return true;
    }
    match property.get("type").and_then(Value::as_str) {
        Some("string" | "number" | "integer" | "boolean") => true,
        Some("array") => property.get("items").is_some_and(|i| i.get("enum").is_some() || i.get("anyOf").is_some()),
        _ => false,
    }
}

/// Fills the fields `content` lacks with the defaults of the schema's primitive properties
/// (string, number, integer, boolean, enum), as SEP-1034 asks of clients.
pub(crate) fn apply_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, property) in properties {
        if content.contains_key(name) || !is_primitive(property) {
            continue;
        }
        if let Some(default) = property.get("default").filter(|d| !d.is_null()) {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// Reads rmcp's request params (as MCP JSON) into an [`Elicitation`].
pub(crate) fn from_params(server: &str, params: &Value) -> Elicitation {
    let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let mode = match params.get("mode").and_then(Value::as_str) {
        Some("url") => ElicitationMode::Url { url: text("url"), elicitation_id: text("elicitationId") },
        _ => ElicitationMode::Form { schema: params.get("requestedSchema").cloned().unwrap_or(Value::Null) },
    };
    Elicitation { server: server.to_string(), message: text("message"), mode }
}

/// The response as MCP JSON (`{"action": ..., "content": ...}`), with the form's defaults applied.
pub(crate) fn to_result(request: &Elicitation, response: ElicitationResponse) -> Value {
    match response {
        ElicitationResponse::Accept(mut content) => match &request.mode {
            ElicitationMode::Form { schema } => {
                apply_defaults(schema, &mut content);
                serde_json::json!({"action": "accept", "content": content})
            }
            ElicitationMode::Url { .. } => serde_json::json!({"action": "accept"}),
        },
        ElicitationResponse::Decline => serde_json::json!({"action": "decline"}),
        ElicitationResponse::Cancel => serde_json::json!({"action": "cancel"}),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form() -> Elicitation {
        from_params(
            "s",
            &json!({"mode": "form", "message": "who?", "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nick": {"type": "string"}
            }}}),
        )
    }

    #[test]
    fn defaults_fill_what_the_answer_leaves_out() {
        let request = form();
        assert_eq!(request.message, "who?");
        let answer = ElicitationResponse::accept(json!({"name": "Ada", "age": 36}));
        assert_eq!(
            to_result(&request, answer),
            json!({"action": "accept", "content": {
                "name": "Ada", "age": 36, "score": 95.5, "status": "active", "verified": true
            }})
        );
        let answer = ElicitationResponse::accept_defaults();
        assert_eq!(to_result(&request, answer)["content"]["name"], "John Doe");
    }

    #[test]
    fn decline_cancel_and_url_mode() {
        let request = form();
        assert_eq!(to_result(&request, ElicitationResponse::Decline), json!({"action": "decline"}));
        assert_eq!(to_result(&request, ElicitationResponse::Cancel), json!({"action": "cancel"}));
        let url = from_params(
            "s",
            &json!({"mode": "url", "message": "sign in", "url": "https://example.com/auth", "elicitationId": "e1"}),
        );
        assert_eq!(url.url(), Some("https://example.com/auth"));
        assert!(url.schema().is_none());
        assert_eq!(to_result(&url, ElicitationResponse::accept(json!({"x": 1}))), json!({"action": "accept"}));
    }
}
