//! One `tools/call`: approval through elicitation, argument validation, the tool under its
//! timeout and the client's cancellation, panics caught, and the result or error in MCP's shape
//! (an error the model would be shown as a retry is an `isError` result with the same text).

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::convert;
use super::request::{Elicitation, McpRequest};
use crate::context::RunContext;
use crate::error::panic_message;
use crate::messages::retry_text;
use crate::tool::{ArgsCheck, Invocation, ModelRetry, ToolError, ToolOutput};
use crate::toolset::ToolsetTool;

/// What a call needs besides the tool: its context, the deadline and the MCP request.
pub(super) struct CallSetup<D> {
    pub(super) ctx: RunContext<D>,
    pub(super) timeout: Option<Duration>,
    pub(super) request: McpRequest,
    pub(super) cancel: CancellationToken,
}

/// Runs a call to the end and answers it as MCP does.
pub(super) async fn call_tool<D: Clone + Send + Sync + 'static>(
    tool: &ToolsetTool<D>,
    args: Value,
    setup: CallSetup<D>,
) -> CallToolResult {
    let name = tool.def.name.clone();
    let mut ctx = setup.ctx;
    if tool.requires_approval {
        if let Err(refusal) = approve(&setup.request, &name, &args).await {
            return refusal;
        }
        ctx.tool_call_approved = true;
    }
    let run = async {
        let mut result = run_once(tool, ctx.clone(), args.clone(), setup.timeout).await;
        if matches!(result, Err(ToolError::ApprovalRequired(_))) && !ctx.tool_call_approved {
            approve(&setup.request, &name, &args).await?;
            ctx.tool_call_approved = true;
            result = run_once(tool, ctx, args, setup.timeout).await;
        }
        Ok(result)
    };
    let result = tokio::select! {
        result = setup.request.clone().scope(run) => result,
        () = setup.cancel.cancelled() => return convert::error(format!("The call to `{name}` was cancelled.")),
    };
    match result {
        Ok(Ok(output)) => convert::success(&tool.def, output),
        Ok(Err(error)) => convert::error(error_text(&name, error)),
        Err(refusal) => refusal,
    }
}

/// Asks the client whether the call may run: accepted, or the `isError` result that answers it.
async fn approve(request: &McpRequest, name: &str, args: &Value) -> Result<(), CallToolResult> {
    if !request.can_elicit() {
        return Err(convert::error(format!(
            "`{name}` needs approval, and this MCP client cannot ask for it (it did not declare the elicitation capability)."
        )));
    }
    let message = format!("Allow the call to `{name}` with arguments {args}?");
    let schema = json!({"type": "object", "properties": {}});
    match request.elicit(message, schema).await {
        Ok(Elicitation::Accept(_)) => Ok(()),
        Ok(_) => Err(convert::error(format!("The user denied the call to `{name}`."))),
        Err(e) => Err(convert::error(format!("`{name}` needs approval, which could not be asked: {e}"))),
    }
}

/// The text a failed call answers with: for a retry or invalid arguments, what the model would
/// be shown in an agent run.
pub(super) fn error_text(name: &str, error: ToolError) -> String {
    match error {
        ToolError::Retry(retry) => retry_text(&retry.content, true),
        ToolError::Validation(errors) => retry_text(&crate::validation::errors_for_model(&errors), true),
        ToolError::Failed { message, .. } => message,
        ToolError::Panicked { message } => format!("`{name}` panicked: {message}"),
        ToolError::ApprovalRequired(_) => format!("The call to `{name}` was not approved."),
        ToolError::CallDeferred(_) => {
            format!("`{name}` deferred its call to be answered later, which an MCP server cannot wait for.")
        }
        other => other.to_string(),
    }
}

/// Validation, then the tool under its timeout, with panics caught.
async fn run_once<D: Clone + Send + Sync + 'static>(
    tool: &ToolsetTool<D>,
    ctx: RunContext<D>,
    args: Value,
    timeout: Option<Duration>,
) -> Result<ToolOutput, ToolError> {
    let args = validate(tool, &ctx, args).await?;
    let handler = tool.handler.clone();
    let invocation = std::panic::catch_unwind(AssertUnwindSafe(move || handler.call(|| ctx, Cow::Owned(args))))
        .map_err(|p| ToolError::Panicked { message: panic_message(p) })?;
    let running = async move {
        match invocation {
            Invocation::Ready(result) => result,
            Invocation::Async(fut) => AssertUnwindSafe(fut)
                .catch_unwind()
                .await
                .unwrap_or_else(|p| Err(ToolError::Panicked { message: panic_message(p) })),
            Invocation::Blocking(f) => {
                match tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(f))).await {
                    Ok(Ok(result)) => result,
                    Ok(Err(p)) => Err(ToolError::Panicked { message: panic_message(p) }),
                    Err(e) => Err(ToolError::Panicked { message: e.to_string() }),
                }
            }
        }
    };
    let result = match timeout {
        Some(t) => tokio::time::timeout(t, running).await.unwrap_or_else(|_| {
            let secs = crate::execution::py_float(t.as_secs_f64());
            Err(ToolError::Retry(ModelRetry::new(format!("Timed out after {secs} seconds."))))
        }),
        None => running.await,
    };
    // A value the tool built in memory may nest past any parser's limit: the levels past what a
    // message keeps become JSON text before anything walks it (as in a run).
    result.map(|mut output| {
        crate::execution::bound_output(&mut output);
        output
    })
}

/// The arguments checked as in a run: against the schema (with its coercions; a JSON string is
/// their text), then by the tool's arguments validator.
async fn validate<D>(tool: &ToolsetTool<D>, ctx: &RunContext<D>, args: Value) -> Result<Value, ToolError> {
    let empty = || Value::Object(Default::default());
    let args = match (&tool.validator, args) {
        (Some(v), Value::String(s)) => v.validate_str(&s),
        (Some(v), Value::Null) => v.validate(&empty()),
        (Some(v), other) => v.validate(&other),
        (None, Value::String(s)) => crate::validation::parse_json_args(&s).map_err(|e| vec![e]),
        (None, Value::Null) => Ok(empty()),
        (None, other) => Ok(other),
    }
    .map_err(ToolError::Validation)?;
    if let Some(check) = &tool.args_validator {
        let checked = std::panic::catch_unwind(AssertUnwindSafe(|| check(ctx, &args)))
            .map_err(|p| ToolError::Panicked { message: panic_message(p) })?;
        match checked {
            ArgsCheck::Done(result) => result?,
            ArgsCheck::Pending(fut) => AssertUnwindSafe(fut)
                .catch_unwind()
                .await
                .map_err(|p| ToolError::Panicked { message: panic_message(p) })??,
        }
    }
    Ok(args)
}
