//! [`RepairToolArguments`]: malformed tool-call argument JSON repaired before validation, as the
//! harness's capability of that name does.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::{Capability, HookStage, ToolCallInfo};
use crate::context::RunContext;
use crate::tool::ToolError;

/// How many calls a [`RepairToolArguments`] saw with malformed arguments, and how many of those
/// it repaired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairCounts {
    /// Calls whose arguments were a string that is not valid JSON.
    pub malformed: u64,
    /// Of those, the calls whose arguments came out as valid JSON.
    pub repaired: u64,
}

/// Repairs malformed JSON tool arguments before they are validated: trailing commas, single
/// quotes, unquoted keys, unclosed brackets and strings, Markdown code fences, comments, Python's
/// `True` / `False` / `None`, missing commas, text around the JSON. A weak model's call then runs
/// where the core would spend a retry.
///
/// Valid JSON and arguments that are already an object pass through unchanged. What cannot be
/// repaired goes to validation as it came, and its error goes back to the model as usual;
/// ordinary validation (missing fields, wrong types) still applies after a repair. A string
/// holding nothing JSON-like becomes empty arguments, as the harness's repair does. A doubled
/// encoding (a JSON string whose text is the arguments' JSON object) is unwrapped.
///
/// The repair is the [`jsonrepair`] crate, the one of the Rust JSON repair crates that agrees most
/// often with the `json-repair` library the harness uses (measured on the cases in
/// tests/harness: 29 of 34 malformed cases repaired to the same value, the rest leading zeros,
/// `,,`, a bare `-` and `TRUE`). Repairs are counted ([`counts`](Self::counts)); clones share the counts.
///
/// ```
/// use serde_json::json;
/// use toolsmith::capability::RepairToolArguments;
/// use toolsmith::messages::{ModelResponse, ModelResponsePart, ToolCallPart};
/// use toolsmith::prelude::*;
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = FunctionModel::sync(|messages, _| {
///     if messages.len() == 1 {
///         // Single quotes and a trailing comma, in a code fence.
///         let raw = json!("```json\n{'a': 1, 'b': 2,}\n```");
///         ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("add", raw, "c1"))])
///     } else {
///         ModelResponse::text("done")
///     }
/// });
/// let repair = RepairToolArguments::new();
/// let agent = Agent::builder(model).tool(add).capability(repair.clone()).build().unwrap();
/// agent.run("add").await.unwrap();
/// assert_eq!(repair.counts().repaired, 1);
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct RepairToolArguments {
    malformed: Arc<AtomicU64>,
    repaired: Arc<AtomicU64>,
}

impl RepairToolArguments {
    /// The capability (it has no options, like the harness's).
    pub fn new() -> Self {
        Self::default()
    }

    /// The calls seen with malformed arguments and those repaired, so far.
    pub fn counts(&self) -> RepairCounts {
        RepairCounts {
            malformed: self.malformed.load(Ordering::Relaxed),
            repaired: self.repaired.load(Ordering::Relaxed),
        }
    }
}

/// The repaired text of `raw`, or `None` when it cannot be repaired into valid JSON.
pub(crate) fn repair(raw: &str) -> Option<String> {
    let options = jsonrepair::Options { logging: false, ..jsonrepair::Options::default() };
    let repaired = jsonrepair::repair_to_string(raw, &options).ok()?;
    let value: Value = serde_json::from_str(&repaired).ok()?;
    // Text with no JSON in it: the harness's repair gives an empty string, not a JSON string.
    if value.is_string() && !raw.trim_start().starts_with(['"', '\'']) {
        return Some(String::new());
    }
    Some(repaired)
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for RepairToolArguments {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ToolValidate
    }

    fn has_prepare_tools(&self) -> bool {
        false
    }

    async fn before_tool_validate(
        &self,
        _ctx: &RunContext<D>,
        _call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        let Value::String(raw) = &args else {
            return Ok(args);
        };
        match serde_json::from_str::<Value>(raw) {
            // A doubled encoding: a JSON string holding the arguments' JSON. (The harness leaves it
            // to validation, where its run fails with a `TypeError`; here it is unwrapped.)
            Ok(Value::String(inner)) if inner.trim_start().starts_with('{') => {
                let unwrapped = match serde_json::from_str::<Value>(&inner) {
                    Ok(Value::Object(_)) => Some(inner),
                    _ => repair(&inner).filter(|r| r.trim_start().starts_with('{')),
                };
                self.malformed.fetch_add(1, Ordering::Relaxed);
                return Ok(match unwrapped {
                    Some(inner) => {
                        self.repaired.fetch_add(1, Ordering::Relaxed);
                        Value::String(inner)
                    }
                    None => args,
                });
            }
            Ok(_) => return Ok(args),
            Err(_) => {}
        }
        self.malformed.fetch_add(1, Ordering::Relaxed);
        match repair(raw) {
            Some(repaired) => {
                self.repaired.fetch_add(1, Ordering::Relaxed);
                Ok(Value::String(repaired))
            }
            None => Ok(args),
        }
    }
}
