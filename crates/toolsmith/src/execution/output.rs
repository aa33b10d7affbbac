//! Outputs through the capabilities' output hooks.

use futures::future::BoxFuture;
use serde_json::Value;

use crate::capability::{Capabilities, OutputInfo, OutputKind, OutputStage};
use crate::context::RunContext;
use crate::error::{AgentRunError, UserError};
use crate::run::{OUTPUT_TOOL_NAME, OutputSpec};
use crate::tool::ToolError;
use crate::validation::ErrorDetail;

/// An output through the capabilities' output hooks: validated (structured output only), then
/// processed. Without capabilities, only the validation runs.
pub(crate) async fn settle_output<D: Send + Sync + 'static>(
    spec: &OutputSpec,
    caps: &Capabilities<D>,
    ctx: &RunContext<D>,
    info: OutputInfo<'_>,
    raw: Value,
) -> Result<Value, ToolError> {
    let validate = |raw: Value| -> BoxFuture<'_, Result<Value, ToolError>> {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match (&raw, info.kind) {
            // The start of the output's JSON, while it streams: what it stands for so far.
            (Value::String(text), OutputKind::StructuredText) if ctx.partial_output => {
                match crate::run::partial::parse_partial(text) {
                    Some(v) => spec.validate_parsed(&v),
                    None => Err(vec![ErrorDetail::json_invalid(
                        text,
                        &serde_json::Error::io(std::io::ErrorKind::UnexpectedEof.into()),
                    )]),
                }
            }
            // Text that should be the output's JSON: a parse error is one `json_invalid` error.
            (Value::String(text), OutputKind::StructuredText) => match serde_json::from_str::<Value>(
                // Prompted and native output may come in a Markdown fence, which Pydantic AI drops.
                if spec.mode() == crate::run::OutputMode::Tool {
                    text
                } else {
                    crate::run::strip_markdown_fences(text)
                },
            ) {
                Ok(v) => spec.validate_parsed(&v),
                Err(e) => Err(vec![ErrorDetail::json_invalid(text, &e)]),
            },
            _ => spec.validate_owned(raw),
        }));
        Box::pin(async move {
            match result {
                Ok(r) => r.map_err(ToolError::Validation),
                Err(p) => Err(ToolError::Panicked { message: crate::error::panic_message(p) }),
            }
        })
    };
    let value = match info.kind {
        OutputKind::Text => raw,
        _ if caps.is_empty() => return validate(raw).await,
        _ => caps.output(OutputStage::Validate, 0, ctx, info, raw, &validate).await?,
    };
    if caps.is_empty() {
        return Ok(value);
    }
    let process = |value: Value| -> BoxFuture<'_, Result<Value, ToolError>> { Box::pin(async move { Ok(value) }) };
    caps.output(OutputStage::Process, 0, ctx, info, value, &process).await
}

/// The run's error for an output hook's failure that is neither a validation error nor a retry
/// (a capability's panic is the capability's error, not the output's).
pub(crate) fn output_failure<D: Send + Sync + 'static>(caps: &Capabilities<D>, error: ToolError) -> AgentRunError {
    if let ToolError::Panicked { message } = &error
        && let Some(e) = caps.hook_panic(message)
    {
        return e;
    }
    match error {
        ToolError::Failed { kind, message, source } => {
            AgentRunError::ToolFailed { tool: OUTPUT_TOOL_NAME.into(), kind, message, source }
        }
        ToolError::Panicked { message } => AgentRunError::ToolPanicked { tool: OUTPUT_TOOL_NAME.into(), message },
        other => AgentRunError::User(UserError::new(format!(
            "an output hook returned `{other}`, which the output cannot take: return the value, a validation error, `ToolError::Retry` or a failure"
        ))),
    }
}

/// The error that ends a run whose output retries ran out: Pydantic AI's wording, then what
/// was wrong with the last answer (`problem`), so that the caller sees why without the history.
pub(crate) fn output_budget_exceeded(max: u32, problem: &str) -> AgentRunError {
    AgentRunError::unexpected_because(format!("Exceeded maximum output retries ({max})"), problem)
}

/// What a refused output was told, in a few words: the validation errors (at most three, each
/// with where it is and the input, shortened), or the retry message.
pub(crate) fn describe_refusal(content: &Value) -> String {
    if let Ok(errors) = serde_json::from_value::<Vec<ErrorDetail>>(content.clone())
        && !errors.is_empty()
    {
        let shown: Vec<String> = errors
            .iter()
            .take(3)
            .map(|e| {
                let loc: Vec<String> = e
                    .loc
                    .iter()
                    .map(|l| match l {
                        crate::validation::LocItem::Key(k) => k.clone(),
                        crate::validation::LocItem::Index(i) => i.to_string(),
                    })
                    .collect();
                let at = if loc.is_empty() { String::new() } else { format!("`{}`: ", loc.join(".")) };
                format!("{at}{} (input: {})", e.msg, shorten(&e.input.to_string(), 80))
            })
            .collect();
        let more = match errors.len() {
            n if n > 3 => format!("; and {} more", n - 3),
            _ => String::new(),
        };
        let n = errors.len();
        let noun = if n == 1 { "error" } else { "errors" };
        return format!("{n} validation {noun}: {}{more}", shown.join("; "));
    }
    match content {
        Value::String(s) => shorten(s, 300),
        other => shorten(&other.to_string(), 300),
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}
