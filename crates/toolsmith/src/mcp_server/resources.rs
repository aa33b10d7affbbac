//! Resources served from functions: fixed URIs ([`Resource`]) and URI templates
//! ([`ResourceTemplate`], RFC 6570 level 1: `{name}` segments).

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};

/// What reading a resource gives: text or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceContent {
    /// Text.
    Text(String),
    /// Bytes (sent base64-encoded).
    Binary(Vec<u8>),
}

type ReadFn = Arc<dyn Fn(HashMap<String, String>) -> BoxFuture<'static, Result<ResourceContent, String>> + Send + Sync>;

/// A resource at a fixed URI, read by a function each time a client reads it.
///
/// ```
/// use toolsmith::mcp_server::{Resource, ResourceContent};
///
/// let readme = Resource::new("file:///README.md", "README", |_| async {
///     Ok(ResourceContent::Text("# Hello".into()))
/// })
/// .description("The project's README")
/// .mime_type("text/markdown");
/// ```
#[derive(Clone)]
pub struct Resource {
    pub(super) uri: String,
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) mime_type: Option<String>,
    pub(super) read: ReadFn,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("uri", &self.uri).field("name", &self.name).finish_non_exhaustive()
    }
}

impl Resource {
    /// A resource at `uri`, read by `read` (given no parameters). Its error is the message the
    /// client gets.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(HashMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ResourceContent, String>> + Send + 'static,
    {
        Resource {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
            read: Arc::new(move |params| Box::pin(read(params))),
        }
    }

    /// A description shown to the client.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The media type of the content (`text/plain`, `image/png`...).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    pub(super) fn listing(&self, template: bool) -> Value {
        let mut v = json!({"name": self.name, "description": self.description.clone().unwrap_or_default()});
        v[if template { "uriTemplate" } else { "uri" }] = json!(self.uri);
        if let Some(m) = &self.mime_type {
            v["mimeType"] = json!(m);
        }
        v
    }

    /// The contents of a read of `uri`, as MCP's `contents` list.
    pub(super) async fn read(&self, uri: &str, params: HashMap<String, String>) -> Result<Value, String> {
        let content = (self.read)(params).await?;
        let mut item =
            json!({"uri": uri, "mimeType": self.mime_type.clone().unwrap_or_else(|| default_type(&content))});
        match content {
            ResourceContent::Text(text) => item["text"] = json!(text),
            ResourceContent::Binary(bytes) => {
                use base64::Engine;
                item["blob"] = json!(base64::engine::general_purpose::STANDARD.encode(bytes));
            }
        }
        Ok(json!({"contents": [item]}))
    }
}

fn default_type(content: &ResourceContent) -> String {
    match content {
        ResourceContent::Text(_) => "text/plain".into(),
        ResourceContent::Binary(_) => "application/octet-stream".into(),
    }
}

/// Resources named by a URI template such as `file:///logs/{day}.txt`: the function gets the
/// template's variables read from the URI asked for.
///
/// ```
/// use toolsmith::mcp_server::{ResourceContent, ResourceTemplate};
///
/// let logs = ResourceTemplate::new("file:///logs/{day}.txt", "Daily log", |vars| async move {
///     Ok(ResourceContent::Text(format!("log of {}", vars["day"])))
/// });
/// ```
#[derive(Debug, Clone)]
pub struct ResourceTemplate(pub(super) Resource);

impl ResourceTemplate {
    /// A template and the function that reads the resources it names.
    pub fn new<F, Fut>(uri_template: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(HashMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ResourceContent, String>> + Send + 'static,
    {
        ResourceTemplate(Resource::new(uri_template, name, read))
    }

    /// A description shown to the client.
    pub fn description(self, description: impl Into<String>) -> Self {
        ResourceTemplate(self.0.description(description))
    }

    /// The media type of the resources' content.
    pub fn mime_type(self, mime_type: impl Into<String>) -> Self {
        ResourceTemplate(self.0.mime_type(mime_type))
    }

    /// The template's variables read from `uri`, if it matches.
    pub(super) fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        match_template(&self.0.uri, uri)
    }
}

/// Matches `uri` against a template of literal text and `{name}` variables (a variable takes
/// at least one character and no `/`).
fn match_template(template: &str, uri: &str) -> Option<HashMap<String, String>> {
    let mut vars = HashMap::new();
    let mut rest = uri;
    let mut parts = template.split('{');
    let first = parts.next()?;
    rest = rest.strip_prefix(first)?;
    for part in parts {
        let (name, literal) = part.split_once('}')?;
        let end =
            if literal.is_empty() { rest.len() } else { rest.find(literal.split('{').next().unwrap_or(literal))? };
        let value = &rest[..end];
        if value.is_empty() || value.contains('/') {
            return None;
        }
        vars.insert(name.to_string(), value.to_string());
        rest = rest[end..].strip_prefix(literal)?;
    }
    rest.is_empty().then_some(vars)
}

#[cfg(test)]
mod tests {
    use super::match_template;

    #[test]
    fn templates_match_their_variables() {
        let vars = match_template("test://template/{id}/data", "test://template/123/data").unwrap();
        assert_eq!(vars["id"], "123");
        assert!(match_template("test://template/{id}/data", "test://template//data").is_none());
        assert!(match_template("test://template/{id}/data", "test://template/1/2/data").is_none());
        assert!(match_template("test://a", "test://b").is_none());
        assert_eq!(match_template("f/{a}.{b}", "f/x.y").unwrap()["b"], "y");
    }
}
