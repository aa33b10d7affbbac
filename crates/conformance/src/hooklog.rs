//! The `HookLog` capability of SCENARIOS.md: one log line per hook call, with `fail_on` and
//! `recover_on` rules.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolsmith::agent::RunOutput;
use toolsmith::capability::{Capability, ModelRequestContext, ToolCallInfo, ToolExecuteNext, ToolValidateNext};
use toolsmith::messages::{ModelResponse, ModelResponsePart};
use toolsmith::prelude::*;
use toolsmith::tool::{ToolDefinition, ToolOutput};

type Deps = Value;

struct Rule {
    hook: String,
    tool: String,
    message: Option<String>,
    value: Option<Value>,
    times: u32,
    used: Mutex<u32>,
}

impl Rule {
    fn parse(v: &Value, with_message: bool) -> Vec<Rule> {
        let items: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            Value::Null => Vec::new(),
            other => vec![other],
        };
        items
            .into_iter()
            .map(|r| Rule {
                hook: r.get("hook").and_then(Value::as_str).unwrap_or_default().to_string(),
                tool: r.get("tool").and_then(Value::as_str).unwrap_or_default().to_string(),
                message: if with_message { r.get("message").and_then(Value::as_str).map(String::from) } else { None },
                value: r.get("value").cloned(),
                times: r.get("times").and_then(Value::as_u64).unwrap_or(1) as u32,
                used: Mutex::new(0),
            })
            .collect()
    }

    /// Whether the rule fires for this hook call (and counts it).
    fn fires(&self, hook: &str, tool: &str) -> bool {
        if self.hook != hook || self.tool != tool {
            return false;
        }
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        if *used < self.times {
            *used += 1;
            true
        } else {
            false
        }
    }
}

/// A capability that logs every hook call.
pub struct HookLog {
    label: String,
    log: Arc<Mutex<Vec<String>>>,
    fail_on: Vec<Rule>,
    recover_on: Vec<Rule>,
}

/// The normalised text of a tool error.
pub fn tool_error_text(e: &ToolError) -> String {
    match e {
        ToolError::Validation(errors) => format!("ValidationError: errors={}", errors.len()),
        ToolError::Retry(r) => match &r.content {
            Value::Array(items) => format!("ModelRetry: errors={}", items.len()),
            _ => format!("ModelRetry: {}", r.message()),
        },
        ToolError::ApprovalRequired(_) => "ApprovalRequired".into(),
        ToolError::CallDeferred(_) => "CallDeferred".into(),
        ToolError::Failed { kind, message, .. } => format!("{kind}: {message}"),
        e @ ToolError::RetriesExhausted { .. } => format!("UnexpectedModelBehavior: {e}"),
        other => format!("ToolError: {other}"),
    }
}

/// `TYPE: MESSAGE`, the message without the detail toolsmith adds after it (what the model's last
/// answer held), which Pydantic AI's exceptions do not carry.
fn run_error_text(e: &AgentRunError) -> String {
    match e {
        AgentRunError::UnexpectedModelBehavior { message, .. } => format!("{}: {message}", crate::reference_kind(e)),
        _ => format!("{}: {}", crate::reference_kind(e), e.message()),
    }
}

impl HookLog {
    pub fn new(cfg: &Value, log: Arc<Mutex<Vec<String>>>) -> Self {
        HookLog {
            label: cfg.get("label").and_then(Value::as_str).unwrap_or("A").to_string(),
            log,
            fail_on: Rule::parse(cfg.get("fail_on").unwrap_or(&Value::Null), true),
            recover_on: Rule::parse(cfg.get("recover_on").unwrap_or(&Value::Null), false),
        }
    }

    fn line(&self, text: String) {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).push(format!("{}.{text}", self.label));
    }

    /// Logs the line; if a `fail_on` rule fires, appends the retry and returns it.
    fn log_tool(&self, hook: &str, tool: &str) -> Result<(), ToolError> {
        self.log_tool_as(hook, hook, tool)
    }

    /// Like `log_tool`, with the rule matched on `rule_hook` and the line showing `shown`.
    fn log_tool_as(&self, rule_hook: &str, shown: &str, tool: &str) -> Result<(), ToolError> {
        let base = format!("{shown} {tool}");
        if let Some(rule) = self.fail_on.iter().find(|r| r.fires(rule_hook, tool)) {
            let message = rule.message.clone().unwrap_or_default();
            self.line(format!("{base} -> ModelRetry: {message}"));
            return Err(ModelRetry::new(message).into());
        }
        self.line(base);
        Ok(())
    }

    /// For an error hook: the recovery value when a `recover_on` rule fires (after `fail_on`).
    fn log_error_hook(&self, hook: &str, tool: &str, error: &ToolError) -> Result<Option<Value>, ToolError> {
        let base = format!("{hook} {tool} {}", tool_error_text(error));
        if let Some(rule) = self.fail_on.iter().find(|r| r.fires(hook, tool)) {
            let message = rule.message.clone().unwrap_or_default();
            self.line(format!("{base} -> ModelRetry: {message}"));
            return Err(ModelRetry::new(message).into());
        }
        if let Some(rule) = self.recover_on.iter().find(|r| r.fires(hook, tool)) {
            self.line(format!("{base} -> recovered"));
            return Ok(Some(rule.value.clone().unwrap_or(Value::Null)));
        }
        self.line(base);
        Ok(None)
    }
}

fn part_names(response: &ModelResponse) -> String {
    response
        .parts
        .iter()
        .map(|p| match p {
            ModelResponsePart::ToolCall(c) => format!("tool-call:{}", c.tool_name),
            ModelResponsePart::Text(_) => "text".to_string(),
            ModelResponsePart::Thinking(_) => "thinking".to_string(),
            _ => "other".to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

impl Capability<Deps> for HookLog {
    async fn before_run(&self, _ctx: &RunContext<Deps>) -> Result<(), AgentRunError> {
        self.line("before_run".into());
        Ok(())
    }

    async fn after_run(&self, _ctx: &RunContext<Deps>, output: RunOutput) -> Result<RunOutput, AgentRunError> {
        self.line("after_run".into());
        Ok(output)
    }

    async fn on_run_error(&self, _ctx: &RunContext<Deps>, error: AgentRunError) -> Result<RunOutput, AgentRunError> {
        self.line(format!("on_run_error {}", run_error_text(&error)));
        Err(error)
    }

    async fn prepare_tools(
        &self,
        ctx: &RunContext<Deps>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        self.line(format!("prepare_tools step={} tools={}", ctx.run_step, names.join(",")));
        Ok(tools)
    }

    async fn before_model_request(
        &self,
        ctx: &RunContext<Deps>,
        request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        self.line(format!("before_model_request step={} messages={}", ctx.run_step, request.messages.len()));
        Ok(request)
    }

    async fn after_model_request(
        &self,
        ctx: &RunContext<Deps>,
        _request: &ModelRequestContext,
        response: ModelResponse,
    ) -> Result<ModelResponse, AgentRunError> {
        self.line(format!("after_model_request step={} parts={}", ctx.run_step, part_names(&response)));
        Ok(response)
    }

    async fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<Deps>,
        request: ModelRequestContext,
        next: toolsmith::capability::ModelRequestNext<'a>,
    ) -> Result<ModelResponse, AgentRunError> {
        let step = ctx.run_step;
        self.line(format!("wrap_model_request> step={step}"));
        match next.run(request).await {
            Ok(r) => {
                self.line(format!("wrap_model_request< step={step}"));
                Ok(r)
            }
            Err(e) => {
                self.line(format!("wrap_model_request! step={step} {}", run_error_text(&e)));
                Err(e)
            }
        }
    }

    async fn before_tool_validate(
        &self,
        _ctx: &RunContext<Deps>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.log_tool("before_tool_validate", &call.call.tool_name)?;
        Ok(args)
    }

    async fn after_tool_validate(
        &self,
        _ctx: &RunContext<Deps>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.log_tool("after_tool_validate", &call.call.tool_name)?;
        Ok(args)
    }

    async fn on_tool_validate_error(
        &self,
        _ctx: &RunContext<Deps>,
        call: ToolCallInfo<'_>,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        match self.log_error_hook("on_tool_validate_error", &call.call.tool_name, &error)? {
            Some(v) => Ok(v),
            None => Err(error),
        }
    }

    async fn wrap_tool_validate<'a>(
        &'a self,
        _ctx: &'a RunContext<Deps>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> Result<Value, ToolError> {
        let tool = &call.call.tool_name;
        self.log_tool_as("wrap_tool_validate", "wrap_tool_validate>", tool)?;
        match next.run(args).await {
            Ok(v) => {
                self.line(format!("wrap_tool_validate< {tool}"));
                Ok(v)
            }
            Err(e) => {
                self.line(format!("wrap_tool_validate! {tool} {}", tool_error_text(&e)));
                Err(e)
            }
        }
    }

    async fn before_tool_execute(
        &self,
        _ctx: &RunContext<Deps>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.log_tool("before_tool_execute", &call.call.tool_name)?;
        Ok(args)
    }

    async fn after_tool_execute(
        &self,
        _ctx: &RunContext<Deps>,
        call: ToolCallInfo<'_>,
        _args: &Value,
        result: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        self.log_tool("after_tool_execute", &call.call.tool_name)?;
        Ok(result)
    }

    async fn on_tool_execute_error(
        &self,
        _ctx: &RunContext<Deps>,
        call: ToolCallInfo<'_>,
        _args: &Value,
        error: ToolError,
    ) -> Result<ToolOutput, ToolError> {
        match self.log_error_hook("on_tool_execute_error", &call.call.tool_name, &error)? {
            Some(v) => Ok(ToolOutput::Value(v)),
            None => Err(error),
        }
    }

    async fn wrap_tool_execute<'a>(
        &'a self,
        _ctx: &'a RunContext<Deps>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> Result<ToolOutput, ToolError> {
        let tool = &call.call.tool_name;
        self.log_tool_as("wrap_tool_execute", "wrap_tool_execute>", tool)?;
        match next.run(args).await {
            Ok(v) => {
                self.line(format!("wrap_tool_execute< {tool}"));
                Ok(v)
            }
            Err(e) => {
                self.line(format!("wrap_tool_execute! {tool} {}", tool_error_text(&e)));
                Err(e)
            }
        }
    }
}
