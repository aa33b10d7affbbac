//! Roots (`roots/list`): the folders or other URIs the application lets the server work in.
//! Given on the toolset ([`McpToolset::roots`](crate::toolset::McpToolset::roots)); changed at
//! any time with [`McpToolset::set_roots`](crate::toolset::McpToolset::set_roots), which tells
//! the open session (`notifications/roots/list_changed`).

use std::sync::{Arc, RwLock};

use serde_json::{Value, json};

use super::super::McpToolset;

/// A root: a URI (usually `file://...`) and an optional name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpRoot {
    /// The root's URI.
    pub uri: String,
    /// A name for it.
    pub name: Option<String>,
}

impl McpRoot {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        McpRoot { uri: uri.into(), name: None }
    }

    /// A root for a local folder (`file://` and its absolute path).
    pub fn folder(path: impl AsRef<std::path::Path>) -> Self {
        let path = path.as_ref();
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        McpRoot::new(format!("file://{}", absolute.display()))
    }

    /// Names the root.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    pub(crate) fn to_json(&self) -> Value {
        match &self.name {
            Some(name) => json!({"uri": self.uri, "name": name}),
            None => json!({"uri": self.uri}),
        }
    }
}

/// The roots, shared by a toolset, its clones and its sessions.
pub(crate) type SharedRoots = Arc<RwLock<Vec<McpRoot>>>;

impl<D> McpToolset<D> {
    /// Offers these roots to the server (`roots/list`); the client then advertises the `roots`
    /// capability, with `listChanged`.
    ///
    /// ```
    /// use toolsmith::toolset::{McpRoot, McpToolset};
    ///
    /// let files: McpToolset = McpToolset::stdio("mcp-server-filesystem", ["/srv"])
    ///     .roots([McpRoot::new("file:///srv/data").name("data")]);
    /// ```
    pub fn roots(self, roots: impl IntoIterator<Item = McpRoot>) -> Self {
        let roots: Vec<McpRoot> = roots.into_iter().collect();
        self.configure(|s| s.client.roots = Some(Arc::new(RwLock::new(roots))))
    }

    /// Replaces the roots and tells the open session, if any
    /// (`notifications/roots/list_changed`); the server lists them again when it needs them.
    /// Does nothing but warn when the toolset was made without [`McpToolset::roots`] (the
    /// capability was not advertised).
    pub async fn set_roots(&self, roots: impl IntoIterator<Item = McpRoot>) {
        let Some(shared) = &self.inner.settings.client.roots else {
            tracing::warn!(server = %self.inner.settings.server, "set_roots on an MCP toolset made without `roots`: ignored");
            return;
        };
        *shared.write().unwrap_or_else(|p| p.into_inner()) = roots.into_iter().collect();
        let session = self.inner.slot.lock().await.session.clone();
        if let Some(session) = session
            && let Err(e) = session.service.peer().notify_roots_list_changed().await
        {
            tracing::debug!(server = %self.inner.settings.server, error = %e, "could not send roots/list_changed");
        }
    }
}
