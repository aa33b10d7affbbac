//! The server's resources and prompts, on the toolset's API: list and read resources and
//! resource templates, subscribe to a resource's updates, list prompts and get one with
//! arguments. Lists are read page by page.

// `resources/subscribe` and `resources/unsubscribe` are legacy-only in rmcp (the 2026 revision
// replaces them with listen streams), and they are what the revisions this client speaks use.
#![allow(deprecated)]

use std::collections::HashSet;
use std::future::Future;

use base64::Engine;
use serde_json::{Map, Value};

use super::super::McpToolset;
use super::super::session::Session;
use crate::toolset::McpError;

/// A resource the server lists (`resources/list`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpResource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its media type.
    pub mime_type: Option<String>,
    /// Its size in bytes, when the server says.
    pub size: Option<u64>,
}

/// A resource template the server lists (`resources/templates/list`): URIs made by filling in
/// an RFC 6570 template.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpResourceTemplate {
    /// The URI template, e.g. `file:///{path}`.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it gives.
    pub description: Option<String>,
    /// The media type of what it gives.
    pub mime_type: Option<String>,
}

/// The contents of a resource (`resources/read`): text or bytes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpResourceContents {
    /// Text.
    Text {
        /// The resource's URI.
        uri: String,
        /// Its media type.
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Bytes (sent base64-encoded).
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its media type.
        mime_type: Option<String>,
        /// The bytes.
        data: Vec<u8>,
    },
}

impl McpResourceContents {
    /// The text, for text contents.
    pub fn text(&self) -> Option<&str> {
        match self {
            McpResourceContents::Text { text, .. } => Some(text),
            McpResourceContents::Blob { .. } => None,
        }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            McpResourceContents::Text { uri, .. } | McpResourceContents::Blob { uri, .. } => uri,
        }
    }

    pub(crate) fn from_json(v: &Value) -> Option<Self> {
        let uri = text(v, "uri").unwrap_or_default();
        let mime_type = text(v, "mimeType");
        if let Some(t) = text(v, "text") {
            return Some(McpResourceContents::Text { uri, mime_type, text: t });
        }
        let blob = text(v, "blob")?;
        let data = base64::engine::general_purpose::STANDARD.decode(blob.trim()).ok()?;
        Some(McpResourceContents::Blob { uri, mime_type, data })
    }
}

/// A prompt the server lists (`prompts/list`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpPrompt {
    /// Its name.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// The arguments it takes.
    pub arguments: Vec<McpPromptArgument>,
}

/// An argument of a prompt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpPromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

/// A message of a prompt (`prompts/get`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpPromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The content block, as MCP JSON (`{"type": "text", "text": ...}`, an image, a resource...).
    pub content: Value,
}

impl McpPromptMessage {
    /// The text, for a text block.
    pub fn text(&self) -> Option<&str> {
        self.content.get("text").and_then(Value::as_str)
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn resource(v: &Value) -> McpResource {
    McpResource {
        uri: text(v, "uri").unwrap_or_default(),
        name: text(v, "name").unwrap_or_default(),
        title: text(v, "title"),
        description: text(v, "description"),
        mime_type: text(v, "mimeType"),
        size: v.get("size").and_then(Value::as_u64),
    }
}

fn template(v: &Value) -> McpResourceTemplate {
    McpResourceTemplate {
        uri_template: text(v, "uriTemplate").unwrap_or_default(),
        name: text(v, "name").unwrap_or_default(),
        title: text(v, "title"),
        description: text(v, "description"),
        mime_type: text(v, "mimeType"),
    }
}

fn prompt(v: &Value) -> McpPrompt {
    let arguments = v.get("arguments").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    McpPrompt {
        name: text(v, "name").unwrap_or_default(),
        title: text(v, "title"),
        description: text(v, "description"),
        arguments: arguments
            .iter()
            .map(|a| McpPromptArgument {
                name: text(a, "name").unwrap_or_default(),
                description: text(a, "description"),
                required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
            })
            .collect(),
    }
}

/// A page's items (under `key`) and next cursor, from an rmcp result.
fn page<T: serde::Serialize>(result: &T, key: &str) -> (Vec<Value>, Option<String>) {
    let value = serde_json::to_value(result).unwrap_or(Value::Null);
    let items = value.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    (items, text(&value, "nextCursor"))
}

impl<D> McpToolset<D> {
    /// Every page of a list request, stopping at a repeated cursor.
    async fn list_pages<F, Fut, T>(&self, method: &str, key: &str, request: F) -> Result<Vec<Value>, McpError>
    where
        F: Fn(std::sync::Arc<Session>, Option<String>) -> Fut,
        Fut: Future<Output = Result<T, rmcp::ServiceError>>,
        T: serde::Serialize,
    {
        self.config_error()?;
        let session = self.inner.session().await?;
        let mut items = Vec::new();
        let mut cursor = None;
        let mut seen = HashSet::new();
        loop {
            let result = self.inner.request(&session, method, request(session.clone(), cursor.clone())).await?;
            let (page_items, next) = page(&result, key);
            items.extend(page_items);
            match next {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                _ => return Ok(items),
            }
        }
    }

    /// The server's resources (`resources/list`, every page), connecting first if needed.
    ///
    /// ```no_run
    /// use toolsmith::toolset::McpToolset;
    ///
    /// # async fn demo() -> Result<(), toolsmith::toolset::McpError> {
    /// let everything: McpToolset = McpToolset::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"]);
    /// for resource in everything.list_resources().await? {
    ///     println!("{} ({})", resource.name, resource.uri);
    /// }
    /// let contents = everything.read_resource("demo://resource/dynamic/text/1").await?;
    /// println!("{}", contents[0].text().unwrap_or("(bytes)"));
    /// let messages = everything.get_prompt("args-prompt", [("city", "Paris")]).await?;
    /// println!("{}", messages[0].text().unwrap_or_default());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_resources(&self) -> Result<Vec<McpResource>, McpError> {
        let items = self
            .list_pages("resources/list", "resources", |session, cursor| async move {
                let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
                session.service.list_resources(Some(params)).await
            })
            .await?;
        Ok(items.iter().map(resource).collect())
    }

    /// The server's resource templates (`resources/templates/list`, every page).
    pub async fn list_resource_templates(&self) -> Result<Vec<McpResourceTemplate>, McpError> {
        let items = self
            .list_pages("resources/templates/list", "resourceTemplates", |session, cursor| async move {
                let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
                session.service.list_resource_templates(Some(params)).await
            })
            .await?;
        Ok(items.iter().map(template).collect())
    }

    /// Reads a resource (`resources/read`): its contents, text or bytes.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<McpResourceContents>, McpError> {
        self.config_error()?;
        let session = self.inner.session().await?;
        let method = format!("resources/read '{uri}'");
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_string());
        let result = self.inner.request(&session, &method, session.service.read_resource(params)).await?;
        let (items, _) = page(&result, "contents");
        Ok(items.iter().filter_map(McpResourceContents::from_json).collect())
    }

    /// Subscribes to a resource's updates (`resources/subscribe`): each arrives as
    /// [`McpNotification::ResourceUpdated`](super::McpNotification::ResourceUpdated) (see
    /// [`McpToolset::on_notification`]). Subscriptions last as long as the session.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), McpError> {
        self.config_error()?;
        let session = self.inner.session().await?;
        let method = format!("resources/subscribe '{uri}'");
        let params = rmcp::model::SubscribeRequestParams::new(uri.to_string());
        self.inner.request(&session, &method, session.service.subscribe(params)).await
    }

    /// Ends a subscription (`resources/unsubscribe`).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), McpError> {
        self.config_error()?;
        let session = self.inner.session().await?;
        let method = format!("resources/unsubscribe '{uri}'");
        let params = rmcp::model::UnsubscribeRequestParams::new(uri.to_string());
        self.inner.request(&session, &method, session.service.unsubscribe(params)).await
    }

    /// The server's prompts (`prompts/list`, every page).
    pub async fn list_prompts(&self) -> Result<Vec<McpPrompt>, McpError> {
        let items = self
            .list_pages("prompts/list", "prompts", |session, cursor| async move {
                let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
                session.service.list_prompts(Some(params)).await
            })
            .await?;
        Ok(items.iter().map(prompt).collect())
    }

    /// Gets a prompt (`prompts/get`) with its arguments (strings, by name): its messages.
    pub async fn get_prompt<I, K, V>(&self, name: &str, arguments: I) -> Result<Vec<McpPromptMessage>, McpError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.config_error()?;
        let session = self.inner.session().await?;
        let method = format!("prompts/get '{name}'");
        let arguments: Map<String, Value> =
            arguments.into_iter().map(|(k, v)| (k.into(), Value::String(v.into()))).collect();
        let mut params = rmcp::model::GetPromptRequestParams::new(name.to_string());
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        let result = self.inner.request(&session, &method, session.service.get_prompt(params)).await?;
        let (items, _) = page(&result, "messages");
        Ok(items
            .iter()
            .map(|m| McpPromptMessage {
                role: text(m, "role").unwrap_or_default(),
                content: m.get("content").cloned().unwrap_or(Value::Null),
            })
            .collect())
    }
}
