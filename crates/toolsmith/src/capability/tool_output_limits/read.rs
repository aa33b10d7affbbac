//! The `read_tool_result` tool: bounded pages of a spilled payload.

use std::sync::Arc;

use serde_json::{Value, json};

use super::store::{OverflowStore, StoreError};
use super::text::{commas, py_repr, splitlines};
use crate::error::ModelRetry;
use crate::tool::{Tool, ToolError, ToolOutput};

/// The name of the read-back tool.
pub const READ_TOOL_NAME: &str = "read_tool_result";

/// At most this many lines per call.
pub const MAX_READ_LINES: usize = 1_000;

/// At most this many characters per call.
pub const MAX_READ_CHARS: usize = 50_000;

fn schema() -> Value {
    json!({
        "additionalProperties": false,
        "properties": {
            "handle": {"description": "The handle from the overflowed tool return.", "type": "string"},
            "offset": {"default": 0, "description": "Number of matching lines to skip from the start (or end). Must be >= 0.", "type": "integer"},
            "limit": {"default": 200, "description": "Maximum number of lines to return (>= 1; clamped to a built-in cap).", "type": "integer"},
            "from_end": {"default": false, "description": "Count `offset`/`limit` from the end of the result.", "type": "boolean"},
            "pattern": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Optional literal substring; only lines containing it are returned."}
        },
        "required": ["handle"],
        "type": "object"
    })
}

/// The tool, reading from `store`.
pub(super) fn tool<D: Clone + Send + Sync + 'static>(store: Arc<dyn OverflowStore>) -> Tool<D> {
    Tool::from_schema(READ_TOOL_NAME, "Read a slice of a spilled tool result.", schema(), move |_ctx, args: Value| {
        let store = store.clone();
        async move {
            let handle = args.get("handle").and_then(Value::as_str).unwrap_or_default().to_string();
            let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
            let limit = args.get("limit").and_then(Value::as_i64).unwrap_or(200);
            let from_end = args.get("from_end").and_then(Value::as_bool).unwrap_or(false);
            let pattern = args.get("pattern").and_then(Value::as_str).map(String::from);
            read_slice(store.as_ref(), handle, offset, limit, from_end, pattern.as_deref())
                .await
                .map(|text| ToolOutput::Value(Value::String(text)))
        }
    })
    .validate_args(true)
}

/// A page of the payload of `handle`, bounded in lines and characters. `pattern` is a literal
/// substring, never a regex.
pub(super) async fn read_slice(
    store: &dyn OverflowStore,
    handle: String,
    offset: i64,
    limit: i64,
    from_end: bool,
    pattern: Option<&str>,
) -> Result<String, ToolError> {
    if offset < 0 {
        return Err(ModelRetry::new("`offset` must be >= 0.").into());
    }
    if limit < 1 {
        return Err(ModelRetry::new("`limit` must be >= 1.").into());
    }
    let (offset, limit) = (offset as usize, (limit as usize).min(MAX_READ_LINES));
    let data = match store.read(handle.clone()).await {
        Ok(data) => data,
        // A wrong or expired handle guides the model rather than spending a retry.
        Err(StoreError::NotFound { .. } | StoreError::Io { .. } | StoreError::Other { .. }) => {
            return Ok(format!(
                "[No stored tool result for handle {}. Use the exact handle string from a \"[Tool output too large ... stored to handle ...]\" marker; if the result is no longer available, re-run the original tool.]",
                py_repr(&handle)
            ));
        }
    };
    let text = String::from_utf8_lossy(&data);
    let mut lines = splitlines(&text);
    if let Some(pattern) = pattern {
        lines.retain(|line| line.contains(pattern));
    }
    let total = lines.len();
    let window = if from_end {
        let end = total.saturating_sub(offset);
        &lines[end.saturating_sub(limit)..end]
    } else {
        let start = offset.min(total);
        &lines[start..(start + limit).min(total)]
    };
    let mut body = window.join("\n");
    let mut capped = "";
    if body.chars().count() > MAX_READ_CHARS {
        body = body.chars().take(MAX_READ_CHARS).collect();
        capped = ", output capped";
    }
    let header =
        format!("[handle {}: {} matching line(s); showing {}{capped}]", py_repr(&handle), commas(total), window.len());
    Ok(if body.is_empty() { header } else { format!("{header}\n{body}") })
}
