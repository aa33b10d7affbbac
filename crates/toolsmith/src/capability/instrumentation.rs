//! [`Instrumentation`]: tracing spans for runs, model requests and tool executions.

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tracing::field::Empty;
use tracing::{Instrument, Span};

use super::{
    BoxedCapability, Capability, CapabilityOrdering, HookStage, ModelRequestContext, ModelRequestNext, ToolCallInfo,
    ToolExecuteNext,
};
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::messages::{
    MediaContent, ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, RetryCause, UserContent,
    UserPromptContent,
};
use crate::run::RunOutput;
use crate::tool::{ToolError, ToolOutput};

/// The format of what [`Instrumentation`] records: Pydantic AI's instrumentation versions, so
/// that dashboards built on its telemetry read toolsmith's. Written as a number (2 to 6) in
/// specs.
///
/// | version | what changes |
/// |---|---|
/// | 2 | messages as JSON in `gen_ai.input.messages` / `gen_ai.output.messages`, the run's in `toolsmith.all_messages`; no thinking parts; media as `{"type": "binary", "media_type"}` and `{"type": "image-url", "url"}` |
/// | 3 | 2 with thinking parts (`{"type": "thinking", "content"}`) |
/// | 4 | 3 with the GenAI conventions' media parts: `{"type": "blob", "modality", "mime_type"}` and `{"type": "uri", "modality", "mime_type", "uri"}` |
/// | 5 (the default) | 4, and a deferred call (approval required, call deferred) is not an error on its span |
/// | 6 | 5 with tool results in `tool` messages (not `user`), and retry feedback for an answer with no usable output in a `system` message |
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
#[non_exhaustive]
pub enum InstrumentationVersion {
    /// Version 2.
    V2,
    /// Version 3.
    V3,
    /// Version 4.
    V4,
    /// Version 5, the default.
    #[default]
    V5,
    /// Version 6.
    V6,
}

impl TryFrom<u8> for InstrumentationVersion {
    type Error = String;

    fn try_from(version: u8) -> Result<Self, String> {
        Ok(match version {
            2 => InstrumentationVersion::V2,
            3 => InstrumentationVersion::V3,
            4 => InstrumentationVersion::V4,
            5 => InstrumentationVersion::V5,
            6 => InstrumentationVersion::V6,
            other => return Err(format!("the instrumentation version must be 2, 3, 4, 5 or 6, got {other}")),
        })
    }
}

impl From<InstrumentationVersion> for u8 {
    fn from(version: InstrumentationVersion) -> u8 {
        match version {
            InstrumentationVersion::V2 => 2,
            InstrumentationVersion::V3 => 3,
            InstrumentationVersion::V4 => 4,
            InstrumentationVersion::V5 => 5,
            InstrumentationVersion::V6 => 6,
        }
    }
}

fn yes() -> bool {
    true
}

/// What [`Instrumentation`] records. Serialisable, for [specs](super::spec).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct InstrumentationSettings {
    /// Record message content: the messages sent and received (`gen_ai.input.messages`,
    /// `gen_ai.output.messages`, `gen_ai.system_instructions`), the tool definitions, and tool
    /// arguments and results. Off by default: prompts and tool data often hold personal data.
    #[serde(default)]
    pub include_content: bool,
    /// With `include_content`, also binary content (images, audio, documents) as base64; without
    /// it a blob is recorded by media type only.
    #[serde(default)]
    pub include_binary_content: bool,
    /// The format of what is recorded (see [`InstrumentationVersion`]).
    #[serde(default)]
    pub version: InstrumentationVersion,
    /// Record the run's token usage as `gen_ai.aggregated_usage.input_tokens` /
    /// `output_tokens` on the run span (the default), not under the `gen_ai.usage.*` names the
    /// model spans use: a backend that sums usage over a trace then does not count it twice.
    #[serde(default = "yes")]
    pub use_aggregated_usage_attribute_names: bool,
    /// Record what each request offered the model (`model_request_parameters` on the `chat`
    /// span: the function and output tools, whether text ends the run; on by default). It holds
    /// every tool definition: turn it off when large schemas make spans too big to export.
    #[serde(default = "yes")]
    pub include_model_request_parameters: bool,
    /// Where message content goes (with `include_content`): span attributes (the default), or
    /// `tracing` events (`logs`, Pydantic AI's older `event_mode`) inside the model span: one
    /// event `gen_ai.client.inference.operation.details` with the input messages and one with
    /// the output messages, which an OpenTelemetry logs bridge exports as log records.
    #[serde(default)]
    pub event_mode: EventMode,
}

/// Where [`Instrumentation`] records message content (see
/// [`InstrumentationSettings::event_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum EventMode {
    /// Span attributes (`gen_ai.input.messages`, `gen_ai.output.messages`).
    #[default]
    Attributes,
    /// `tracing` events inside the model span.
    Logs,
}

impl Default for InstrumentationSettings {
    fn default() -> Self {
        InstrumentationSettings {
            include_content: false,
            include_binary_content: false,
            version: InstrumentationVersion::default(),
            use_aggregated_usage_attribute_names: true,
            include_model_request_parameters: true,
            event_mode: EventMode::Attributes,
        }
    }
}

impl InstrumentationSettings {
    /// Nothing but metadata (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Records message content (see [`InstrumentationSettings::include_content`]).
    pub fn include_content(mut self, include: bool) -> Self {
        self.include_content = include;
        self
    }

    /// Records binary content too (see [`InstrumentationSettings::include_binary_content`]).
    pub fn include_binary_content(mut self, include: bool) -> Self {
        self.include_binary_content = include;
        self
    }

    /// The format of what is recorded (see [`InstrumentationVersion`]).
    pub fn version(mut self, version: InstrumentationVersion) -> Self {
        self.version = version;
        self
    }

    /// Whether the run span's usage takes the `gen_ai.aggregated_usage.*` names (see
    /// [`InstrumentationSettings::use_aggregated_usage_attribute_names`]).
    pub fn use_aggregated_usage_attribute_names(mut self, aggregated: bool) -> Self {
        self.use_aggregated_usage_attribute_names = aggregated;
        self
    }

    /// Whether `chat` spans record what the request offered the model (see
    /// [`InstrumentationSettings::include_model_request_parameters`]).
    pub fn include_model_request_parameters(mut self, include: bool) -> Self {
        self.include_model_request_parameters = include;
        self
    }

    /// Where message content goes (see [`InstrumentationSettings::event_mode`]).
    pub fn event_mode(mut self, mode: EventMode) -> Self {
        self.event_mode = mode;
        self
    }
}

/// The spans of one run.
#[derive(Default)]
struct RunSpans {
    run: Option<Span>,
    model: Option<Span>,
}

/// A capability that records [`tracing`] spans for the run, each model request and each tool
/// execution, with attributes named after the OpenTelemetry GenAI semantic conventions. Any
/// tracing subscriber sees them; with the `otel` feature, `capability::otel::layer` exports
/// them to OpenTelemetry (the special fields `otel.name`, `otel.kind` and `otel.status_code`
/// give the spans their OpenTelemetry names, kinds and statuses).
///
/// | span (`otel.name`) | attributes |
/// |---|---|
/// | `invoke_agent` (`invoke_agent {agent}`) | `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.conversation.id`, `toolsmith.run_id`; at the end `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `toolsmith.requests`, `toolsmith.tool_calls` (and `toolsmith.all_messages` with content) |
/// | `chat` (`chat {model}`), a child of the run | `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, the request settings (`gen_ai.request.temperature`, `max_tokens`, `top_p`, `seed`), `gen_ai.response.model`, `gen_ai.response.id`, `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`; with content `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`, `gen_ai.tool.definitions` |
/// | `execute_tool` (`execute_tool {tool}`), a child of the run | `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `gen_ai.tool.description`; with content `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result` |
///
/// A failure sets `error.type`, `otel.status_code = "ERROR"` and `otel.status_description`; a
/// tool retry is recorded the same way with `error.type = "ModelRetry"` (or
/// `"ValidationError"`). Messages use the conventions' JSON shape (`[{"role", "parts": [...]}]`)
/// and are recorded as JSON strings. The spans are at `INFO` level, with the target
/// `toolsmith::capability::instrumentation`.
///
/// The capability asks to be outermost, so its spans cover every other capability's hooks, and
/// keeps its spans per run ([`Capability::for_run`]). Inside a hook, the span of the model
/// request or tool call is the current one: a tracing span keeps only the fields it declares,
/// so record attributes of your own with `tracing_opentelemetry`'s
/// `OpenTelemetrySpanExt::set_attribute` on `tracing::Span::current()` (feature `otel`,
/// re-exported as `capability::otel::tracing_opentelemetry`): any key is exported with the
/// span.
///
/// ```
/// use toolsmith::capability::{Instrumentation, InstrumentationSettings};
/// use toolsmith::prelude::*;
///
/// # fn main() -> Result<(), UserError> {
/// let agent = Agent::builder(TestModel::default())
///     .name("support")
///     .capability(Instrumentation::new(InstrumentationSettings::new().include_content(true)))
///     .build()?;
/// # let _ = agent;
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct Instrumentation {
    settings: InstrumentationSettings,
    agent_name: OnceLock<Arc<str>>,
    spans: Mutex<RunSpans>,
}

impl std::fmt::Debug for Instrumentation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instrumentation").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Clone for Instrumentation {
    fn clone(&self) -> Self {
        Instrumentation {
            settings: self.settings.clone(),
            agent_name: self.agent_name.clone(),
            spans: Mutex::new(RunSpans::default()),
        }
    }
}

impl Instrumentation {
    /// Instrumentation with these settings.
    pub fn new(settings: InstrumentationSettings) -> Self {
        Instrumentation { settings, ..Self::default() }
    }

    /// The settings.
    pub fn settings(&self) -> &InstrumentationSettings {
        &self.settings
    }

    /// Gives the capability the agent's name (the first agent wins).
    pub(crate) fn bind(&self, agent_name: Option<&str>) {
        if let Some(name) = agent_name {
            let _ = self.agent_name.set(Arc::from(name));
        }
    }

    fn agent_name(&self) -> &str {
        self.agent_name.get().map(|n| &**n).unwrap_or("agent")
    }

    fn spans(&self) -> std::sync::MutexGuard<'_, RunSpans> {
        self.spans.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A span made inside the run span, so that it is the run's child.
    fn child(&self, make: impl FnOnce() -> Span) -> Span {
        let run = self.spans().run.clone();
        match run {
            Some(run) => run.in_scope(make),
            None => make(),
        }
    }

    fn content(&self, value: &Value) -> Option<String> {
        self.settings.include_content.then(|| value.to_string())
    }
}

fn record_error(span: &Span, kind: &str, message: &str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", message);
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for Instrumentation {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        matches!(stage, HookStage::Run | HookStage::ModelRequest | HookStage::ToolExecute)
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    fn ordering(&self) -> Option<CapabilityOrdering> {
        Some(CapabilityOrdering::outermost())
    }

    fn for_run(&self, _ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        Some(BoxedCapability::new(self.clone()))
    }

    async fn before_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        let agent = self.agent_name();
        let span = tracing::info_span!(
            "invoke_agent",
            otel.name = %format!("invoke_agent {agent}"),
            otel.kind = "internal",
            otel.status_code = Empty,
            otel.status_description = Empty,
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = agent,
            gen_ai.provider.name = %ctx.model.system,
            gen_ai.request.model = %ctx.model.name,
            gen_ai.conversation.id = %ctx.conversation_id,
            toolsmith.run_id = %ctx.run_id,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.aggregated_usage.input_tokens = Empty,
            gen_ai.aggregated_usage.output_tokens = Empty,
            toolsmith.requests = Empty,
            toolsmith.tool_calls = Empty,
            toolsmith.all_messages = Empty,
            "error.type" = Empty,
        );
        self.spans().run = Some(span);
        Ok(())
    }

    async fn after_run(&self, ctx: &RunContext<D>, output: RunOutput) -> Result<RunOutput, AgentRunError> {
        if let Some(span) = self.spans().run.take() {
            record_usage(&span, ctx, &self.settings);
            if let Some(all) = self.content(&otel_messages(&ctx.messages, &self.settings)) {
                span.record("toolsmith.all_messages", all);
            }
        }
        Ok(output)
    }

    async fn on_run_error(&self, ctx: &RunContext<D>, error: AgentRunError) -> Result<RunOutput, AgentRunError> {
        if let Some(span) = self.spans().run.take() {
            record_usage(&span, ctx, &self.settings);
            record_error(&span, error.kind(), &error.to_string());
        }
        Err(error)
    }

    fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'a {
        let model = &ctx.model.name;
        let span = self.child(|| {
            tracing::info_span!(
                "chat",
                otel.name = %format!("chat {model}"),
                otel.kind = "client",
                otel.status_code = Empty,
                otel.status_description = Empty,
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = %ctx.model.system,
                gen_ai.request.model = %model,
                gen_ai.request.temperature = Empty,
                gen_ai.request.max_tokens = Empty,
                gen_ai.request.top_p = Empty,
                gen_ai.request.seed = Empty,
                gen_ai.response.model = Empty,
                gen_ai.response.id = Empty,
                gen_ai.response.finish_reasons = Empty,
                gen_ai.usage.input_tokens = Empty,
                gen_ai.usage.output_tokens = Empty,
                gen_ai.input.messages = Empty,
                gen_ai.output.messages = Empty,
                gen_ai.system_instructions = Empty,
                gen_ai.tool.definitions = Empty,
                model_request_parameters = Empty,
                "error.type" = Empty,
            )
        });
        if self.settings.include_model_request_parameters {
            let params = &request.params;
            let function_tools: Vec<&crate::tool::ToolDefinition> =
                params.function_tools.iter().map(|t| &**t).collect();
            let recorded = json!({
                "function_tools": function_tools,
                "output_tools": params.output_tools,
                "allow_text_output": params.allow_text_output,
            });
            span.record("model_request_parameters", recorded.to_string());
        }
        if let Some(s) = &request.settings {
            if let Some(t) = s.temperature {
                span.record("gen_ai.request.temperature", t);
            }
            if let Some(m) = s.max_tokens {
                span.record("gen_ai.request.max_tokens", u64::from(m));
            }
            if let Some(p) = s.top_p {
                span.record("gen_ai.request.top_p", p);
            }
            if let Some(seed) = s.seed {
                span.record("gen_ai.request.seed", seed);
            }
        }
        self.spans().model = Some(span.clone());
        let inner = span.clone();
        async move {
            let result = next.run(request).await;
            match &result {
                Ok(response) => {
                    if let Some(m) = &response.model_name {
                        span.record("gen_ai.response.model", &**m);
                    }
                    if let Some(id) = &response.provider_response_id {
                        span.record("gen_ai.response.id", &**id);
                    }
                    let reason = response
                        .finish_reason
                        .as_deref()
                        .unwrap_or(if response.tool_calls().next().is_some() { "tool_call" } else { "stop" });
                    span.record("gen_ai.response.finish_reasons", json!([reason]).to_string());
                    span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
                    span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
                    if let Some(out) = self.content(&output_messages(response, &self.settings)) {
                        match self.settings.event_mode {
                            EventMode::Logs => tracing::info!(
                                parent: &span,
                                event.name = "gen_ai.client.inference.operation.details",
                                gen_ai.output.messages = %out,
                            ),
                            _ => {
                                span.record("gen_ai.output.messages", out);
                            }
                        }
                    }
                }
                Err(e) => record_error(&span, e.kind(), &e.to_string()),
            }
            self.spans().model = None;
            result
        }
        .instrument(inner)
    }

    async fn after_model_request(
        &self,
        _ctx: &RunContext<D>,
        request: &ModelRequestContext,
        response: ModelResponse,
    ) -> Result<ModelResponse, AgentRunError> {
        self.record_request(request);
        Ok(response)
    }

    async fn on_model_request_error(
        &self,
        _ctx: &RunContext<D>,
        request: &ModelRequestContext,
        error: AgentRunError,
    ) -> Result<ModelResponse, AgentRunError> {
        self.record_request(request);
        Err(error)
    }

    fn wrap_tool_execute<'a>(
        &'a self,
        _ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
        let name = call.def.name.as_str();
        let span = self.child(|| {
            tracing::info_span!(
                "execute_tool",
                otel.name = %format!("execute_tool {name}"),
                otel.kind = "internal",
                otel.status_code = Empty,
                otel.status_description = Empty,
                gen_ai.operation.name = "execute_tool",
                gen_ai.tool.name = name,
                gen_ai.tool.call.id = call.call.tool_call_id.as_str(),
                "gen_ai.tool.type" = "function",
                gen_ai.tool.description = call.def.description.as_deref(),
                gen_ai.tool.call.arguments = Empty,
                gen_ai.tool.call.result = Empty,
                "error.type" = Empty,
            )
        });
        if let Some(a) = self.content(&args) {
            span.record("gen_ai.tool.call.arguments", a);
        }
        let inner = span.clone();
        async move {
            let result = next.run(args).await;
            match &result {
                Ok(output) => {
                    if self.settings.include_content {
                        let value = match output {
                            ToolOutput::Value(v) => v,
                            ToolOutput::Return(r) => &r.return_value,
                        };
                        span.record("gen_ai.tool.call.result", value.to_string());
                    }
                }
                // Control flow, not failures (from version 5 on).
                Err(ToolError::ApprovalRequired(_)) if self.settings.version < InstrumentationVersion::V5 => {
                    record_error(&span, "ApprovalRequired", "the call needs approval")
                }
                Err(ToolError::CallDeferred(_)) if self.settings.version < InstrumentationVersion::V5 => {
                    record_error(&span, "CallDeferred", "the call was deferred")
                }
                Err(ToolError::ApprovalRequired(_) | ToolError::CallDeferred(_)) => {}
                Err(ToolError::Retry(r)) => record_error(&span, "ModelRetry", &r.to_string()),
                Err(e @ ToolError::Validation(_)) => record_error(&span, "ValidationError", &e.to_string()),
                Err(e @ ToolError::Panicked { .. }) => record_error(&span, "ToolPanicked", &e.to_string()),
                Err(e @ ToolError::RetriesExhausted { .. }) => {
                    record_error(&span, "UnexpectedModelBehavior", &e.to_string())
                }
                Err(ToolError::Failed { kind, message, .. }) => record_error(&span, kind, message),
            }
            result
        }
        .instrument(inner)
    }
}

impl Instrumentation {
    /// Records what was sent on the current model span (content only).
    fn record_request(&self, request: &ModelRequestContext) {
        if !self.settings.include_content {
            return;
        }
        let Some(span) = self.spans().model.clone() else { return };
        let input = otel_messages(&request.messages, &self.settings).to_string();
        match self.settings.event_mode {
            EventMode::Logs => tracing::info!(
                parent: &span,
                event.name = "gen_ai.client.inference.operation.details",
                gen_ai.input.messages = %input,
            ),
            _ => {
                span.record("gen_ai.input.messages", input);
            }
        }
        if let Some(i) = &request.params.instructions {
            span.record("gen_ai.system_instructions", json!([{"type": "text", "content": i}]).to_string());
        }
        let tools: Vec<Value> = request
            .params
            .all_tools()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": &*t.parameters_json_schema,
                })
            })
            .collect();
        if !tools.is_empty() {
            span.record("gen_ai.tool.definitions", Value::Array(tools).to_string());
        }
    }
}

fn record_usage<D>(span: &Span, ctx: &RunContext<D>, settings: &InstrumentationSettings) {
    let (input, output) = if settings.use_aggregated_usage_attribute_names {
        ("gen_ai.aggregated_usage.input_tokens", "gen_ai.aggregated_usage.output_tokens")
    } else {
        ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
    };
    span.record(input, ctx.usage.input_tokens);
    span.record(output, ctx.usage.output_tokens);
    span.record("toolsmith.requests", u64::from(ctx.usage.requests));
    span.record("toolsmith.tool_calls", u64::from(ctx.usage.tool_calls));
}

/// One item of user content as a GenAI message part.
fn user_part(item: &UserContent, settings: &InstrumentationSettings) -> Value {
    let binary = settings.include_binary_content;
    if settings.version < InstrumentationVersion::V4 {
        return match item {
            UserContent::Media(MediaContent::Binary(b)) => {
                let mut part = json!({"type": "binary", "media_type": b.media_type});
                if binary {
                    part["content"] = Value::String(b.data.clone());
                }
                part
            }
            UserContent::Media(
                m @ (MediaContent::ImageUrl(u)
                | MediaContent::AudioUrl(u)
                | MediaContent::VideoUrl(u)
                | MediaContent::DocumentUrl(u)),
            ) => {
                let kind = match m {
                    MediaContent::ImageUrl(_) => "image-url",
                    MediaContent::AudioUrl(_) => "audio-url",
                    MediaContent::VideoUrl(_) => "video-url",
                    _ => "document-url",
                };
                json!({"type": kind, "url": u.url})
            }
            other => {
                user_part(other, &InstrumentationSettings { version: InstrumentationVersion::V4, ..settings.clone() })
            }
        };
    }
    match item {
        UserContent::Text(t) => json!({"type": "text", "content": t}),
        UserContent::Media(MediaContent::Binary(b)) => {
            let modality = b.media_type.split('/').next().unwrap_or("file");
            let mut part = json!({"type": "blob", "modality": modality, "mime_type": b.media_type});
            if binary {
                part["content"] = Value::String(b.data.clone());
            }
            part
        }
        UserContent::Media(
            m @ (MediaContent::ImageUrl(u)
            | MediaContent::AudioUrl(u)
            | MediaContent::VideoUrl(u)
            | MediaContent::DocumentUrl(u)),
        ) => {
            let modality = match m {
                MediaContent::ImageUrl(_) => "image",
                MediaContent::AudioUrl(_) => "audio",
                MediaContent::VideoUrl(_) => "video",
                _ => "document",
            };
            let mut part = json!({"type": "uri", "modality": modality, "uri": u.url});
            if let Some(mt) = &u.media_type {
                part["mime_type"] = Value::String(mt.clone());
            }
            part
        }
        other => json!({"type": "text", "content": serde_json::to_value(other).unwrap_or_default()}),
    }
}

fn text_of(v: &Value) -> Value {
    match v {
        Value::String(_) => v.clone(),
        other => Value::String(other.to_string()),
    }
}

/// The response as a GenAI assistant message.
fn assistant_message(r: &ModelResponse, settings: &InstrumentationSettings) -> Value {
    let parts: Vec<Value> = r
        .parts
        .iter()
        .filter_map(|p| match p {
            ModelResponsePart::Text(t) => Some(json!({"type": "text", "content": t.content})),
            ModelResponsePart::ToolCall(c) => {
                Some(json!({"type": "tool_call", "id": c.tool_call_id, "name": c.tool_name, "arguments": c.args}))
            }
            // Thinking parts from version 3 on.
            ModelResponsePart::Thinking(t) => (settings.version >= InstrumentationVersion::V3)
                .then(|| json!({"type": "thinking", "content": t.content})),
            ModelResponsePart::NativeToolCall(c) => Some(json!({
                "type": "tool_call", "id": c.tool_call_id, "name": c.tool_name, "builtin": true, "arguments": c.args,
            })),
            ModelResponsePart::NativeToolReturn(r) => Some(json!({
                "type": "tool_call_response", "id": r.tool_call_id, "name": r.tool_name, "builtin": true,
                "result": r.content,
            })),
            ModelResponsePart::File(f) => Some(user_part(&UserContent::Media(f.content.clone()), settings)),
        })
        .collect();
    json!({"role": "assistant", "parts": parts})
}

fn output_messages(r: &ModelResponse, settings: &InstrumentationSettings) -> Value {
    let mut m = assistant_message(r, settings);
    let reason = r
        .finish_reason
        .clone()
        .unwrap_or_else(|| if r.tool_calls().next().is_some() { "tool_call".into() } else { "stop".into() });
    m["finish_reason"] = Value::String(reason.to_string());
    json!([m])
}

/// Messages in the GenAI conventions' shape: `[{"role", "parts": [...]}]`, consecutive parts
/// of one role in one message.
pub(crate) fn otel_messages(messages: &[ModelMessage], settings: &InstrumentationSettings) -> Value {
    // Tool results take the `tool` role from version 6 on, `user` before.
    let tool_role = if settings.version >= InstrumentationVersion::V6 { "tool" } else { "user" };
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        match m {
            ModelMessage::Response(r) => out.push(assistant_message(r, settings)),
            ModelMessage::Request(r) => {
                let mut current: Option<(&str, Vec<Value>)> = None;
                for p in &r.parts {
                    let (role, parts): (&str, Vec<Value>) = match p {
                        ModelRequestPart::SystemPrompt(s) => {
                            ("system", vec![json!({"type": "text", "content": s.content})])
                        }
                        ModelRequestPart::UserPrompt(u) => (
                            "user",
                            match &u.content {
                                UserPromptContent::Text(t) => vec![json!({"type": "text", "content": t})],
                                UserPromptContent::Parts(items) => {
                                    items.iter().map(|i| user_part(i, settings)).collect()
                                }
                            },
                        ),
                        ModelRequestPart::ToolReturn(t) => (
                            tool_role,
                            vec![json!({"type": "tool_call_response", "id": t.tool_call_id, "response": t.content})],
                        ),
                        ModelRequestPart::RetryFeedback(f) => {
                            // From version 6 on, the feedback for an answer with no usable
                            // output is the harness's own voice.
                            let role = if settings.version >= InstrumentationVersion::V6
                                && f.retry.cause == RetryCause::NoOutput
                            {
                                "system"
                            } else {
                                "user"
                            };
                            (role, vec![json!({"type": "text", "content": text_of(&f.content)})])
                        }
                        ModelRequestPart::RetryPrompt(rp) => match &rp.tool_call_id {
                            Some(id) => (
                                tool_role,
                                vec![json!({"type": "tool_call_response", "id": id, "response": rp.content})],
                            ),
                            None => ("user", vec![json!({"type": "text", "content": text_of(&rp.content)})]),
                        },
                    };
                    match &mut current {
                        Some((r, acc)) if *r == role => acc.extend(parts),
                        _ => {
                            if let Some((r, acc)) = current.take() {
                                out.push(json!({"role": r, "parts": acc}));
                            }
                            current = Some((role, parts));
                        }
                    }
                }
                if let Some((r, acc)) = current {
                    out.push(json!({"role": r, "parts": acc}));
                }
            }
        }
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests;
