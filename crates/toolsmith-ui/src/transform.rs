//! A run's events as both protocols read them: parts that start, grow and end, tool calls and
//! their results, the turn between the model's response and the next request, and the run's end.
//!
//! This is the shared half of Pydantic AI's `UIEventStream`: each protocol's encoder implements
//! [`Encoder`] (what each of these moments becomes on its wire), and [`Transformer`] feeds it from
//! [`AgentEvent`]s, streamed or not.

use toolsmith::agent::AgentEvent;
use toolsmith::deferred::DeferredToolRequests;
use toolsmith::messages::{ModelResponse, ModelResponsePart, ToolCallPart, ToolOutcome, ToolReturnPart};
use toolsmith::model::ModelStreamEvent;

/// The text of the result a tool call gets when the run fails before it answered.
pub(crate) const INTERRUPTED_BY_ERROR: &str = "Tool execution was interrupted by an error.";
/// What an output tool's call is answered with.
pub(crate) const FINAL_RESULT_PROCESSED: &str = "Final result processed.";

/// A moment of the run, as the encoders see it.
#[derive(Debug)]
pub(crate) enum Moment<'a> {
    TextStart {
        content: &'a str,
        follows_text: bool,
    },
    TextDelta {
        delta: &'a str,
    },
    TextEnd {
        followed_by_text: bool,
    },
    ThinkingStart {
        content: &'a str,
        follows_thinking: bool,
    },
    ThinkingDelta {
        delta: &'a str,
    },
    ThinkingEnd,
    ToolCallStart {
        id: &'a str,
        name: &'a str,
        args: &'a str,
    },
    ToolCallDelta {
        id: &'a str,
        delta: &'a str,
    },
    ToolCallEnd {
        call: &'a ToolCallPart,
    },
    /// The run calls the tool (`args_valid` false: it answers with a retry instead).
    ToolCall {
        call: &'a ToolCallPart,
        args_valid: bool,
    },
    ToolResult {
        result: &'a ToolReturnPart,
    },
    RunResult {
        response: Option<&'a ModelResponse>,
        deferred: Option<&'a DeferredToolRequests>,
    },
}

/// What a protocol makes of each moment.
pub(crate) trait Encoder {
    type Event;
    fn before_stream(&mut self, out: &mut Vec<Self::Event>);
    fn before_response(&mut self, _out: &mut Vec<Self::Event>) {}
    fn handle(&mut self, moment: Moment<'_>, out: &mut Vec<Self::Event>);
    fn on_error(&mut self, message: &str, out: &mut Vec<Self::Event>);
    fn after_stream(&mut self, out: &mut Vec<Self::Event>);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

#[derive(Debug)]
struct OpenPart {
    index: usize,
    kind: Kind,
    content: String,
    tool_id: String,
    tool_name: String,
    call: Option<ToolCallPart>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    Request,
    Response,
}

/// Feeds an [`Encoder`] from a run's events.
#[derive(Debug)]
pub(crate) struct Transformer<E> {
    pub(crate) encoder: E,
    turn: Option<Turn>,
    open: Option<OpenPart>,
    streamed: bool,
    /// Calls dispatched without a result yet: (id, tool name).
    pending: Vec<(String, String)>,
    last_response: Option<ModelResponse>,
    final_tool: Option<String>,
    /// Calls the run reported as made (a deferred call is not: it is announced at the end).
    called: Vec<String>,
    /// Calls whose results the client gave itself: not sent back to it.
    client_answered: Vec<String>,
    started: bool,
}

impl<E: Encoder> Transformer<E> {
    pub(crate) fn new(encoder: E) -> Self {
        Transformer {
            encoder,
            turn: None,
            open: None,
            streamed: false,
            pending: Vec::new(),
            last_response: None,
            final_tool: None,
            called: Vec::new(),
            client_answered: Vec::new(),
            started: false,
        }
    }

    /// Calls whose results the client sent (calls executed outside): the run's reports of
    /// those results are not sent back to it.
    pub(crate) fn client_answered(&mut self, ids: impl IntoIterator<Item = String>) {
        self.client_answered.extend(ids);
    }

    /// The stream's first events (before any of the run's).
    pub(crate) fn start(&mut self) -> Vec<E::Event> {
        let mut out = Vec::new();
        if !self.started {
            self.started = true;
            self.encoder.before_stream(&mut out);
        }
        out
    }

    /// The protocol events for one of the run's events.
    pub(crate) fn push(&mut self, event: &AgentEvent) -> Vec<E::Event> {
        let mut out = self.start();
        match event {
            AgentEvent::ModelRequest { .. } => self.streamed = false,
            AgentEvent::Stream(e) => {
                self.streamed = true;
                self.stream_event(e, &mut out);
            }
            AgentEvent::ModelResponse { response } => {
                if !self.streamed {
                    self.whole_response(response, &mut out);
                }
                self.close_open(None, &mut out);
                self.last_response = Some(response.clone());
            }
            AgentEvent::FunctionToolCall { call, args_valid } => {
                self.pending.push((call.tool_call_id.clone(), call.tool_name.clone()));
                self.called.push(call.tool_call_id.clone());
                self.turn_to(Some(Turn::Request), &mut out);
                self.encoder.handle(Moment::ToolCall { call, args_valid: *args_valid }, &mut out);
            }
            AgentEvent::FunctionToolResult { result } => {
                self.pending.retain(|(id, _)| id != &result.tool_call_id);
                self.called.push(result.tool_call_id.clone());
                if !self.client_answered.contains(&result.tool_call_id) {
                    self.encoder.handle(Moment::ToolResult { result }, &mut out);
                }
            }
            AgentEvent::FinalResult { tool_name } => {
                self.final_tool = tool_name.clone();
            }
            _ => {}
        }
        out
    }

    /// The last events of a run that ended with an output or deferred calls.
    pub(crate) fn finish_ok(&mut self, deferred: Option<&DeferredToolRequests>) -> Vec<E::Event> {
        let mut out = self.start();
        self.close_open(None, &mut out);
        self.answer_output_tool(&mut out);
        for call in deferred.iter().flat_map(|d| d.approvals.iter().chain(&d.calls)) {
            if !self.called.contains(&call.tool_call_id) {
                self.turn_to(Some(Turn::Request), &mut out);
                self.encoder.handle(Moment::ToolCall { call, args_valid: true }, &mut out);
            }
        }
        self.turn_to(None, &mut out);
        let response = self.last_response.take();
        self.encoder.handle(Moment::RunResult { response: response.as_ref(), deferred }, &mut out);
        self.encoder.after_stream(&mut out);
        out
    }

    /// The last events of a run that failed with `message`: the open part and the calls still
    /// running are closed first, so that a page does not show them as running.
    pub(crate) fn finish_err(&mut self, message: &str) -> Vec<E::Event> {
        let mut out = self.start();
        self.close_open(None, &mut out);
        for (id, name) in std::mem::take(&mut self.pending) {
            self.turn_to(Some(Turn::Request), &mut out);
            let mut result = ToolReturnPart::success(name, INTERRUPTED_BY_ERROR.into(), id);
            result.outcome = ToolOutcome::Failed;
            result.timestamp = None;
            self.encoder.handle(Moment::ToolResult { result: &result }, &mut out);
        }
        self.encoder.on_error(message, &mut out);
        self.turn_to(None, &mut out);
        self.encoder.after_stream(&mut out);
        out
    }

    fn stream_event(&mut self, event: &ModelStreamEvent, out: &mut Vec<E::Event>) {
        match event {
            ModelStreamEvent::TextDelta { index, delta } => match &mut self.open {
                Some(p) if p.index == *index && p.kind == Kind::Text => {
                    p.content.push_str(delta);
                    self.encoder.handle(Moment::TextDelta { delta }, out);
                }
                _ => self.start_part(*index, Kind::Text, delta, "", "", out),
            },
            ModelStreamEvent::ThinkingDelta { index, delta } => match &mut self.open {
                Some(p) if p.index == *index && p.kind == Kind::Thinking => {
                    p.content.push_str(delta);
                    self.encoder.handle(Moment::ThinkingDelta { delta }, out);
                }
                _ => self.start_part(*index, Kind::Thinking, delta, "", "", out),
            },
            ModelStreamEvent::ToolCallStart { index, tool_call_id, tool_name } => {
                self.start_part(*index, Kind::ToolCall, "", tool_call_id, tool_name, out);
            }
            ModelStreamEvent::ToolCallArgsDelta { index, delta } => {
                if let Some(p) = self.open.as_mut().filter(|p| p.index == *index && p.kind == Kind::ToolCall) {
                    p.content.push_str(delta);
                    let id = p.tool_id.clone();
                    self.encoder.handle(Moment::ToolCallDelta { id: &id, delta }, out);
                }
            }
            ModelStreamEvent::ToolCallEnd { index, call } => {
                if let Some(p) = self.open.as_mut().filter(|p| p.index == *index && p.kind == Kind::ToolCall) {
                    p.call = Some(call.clone());
                }
            }
            ModelStreamEvent::Final(_) => {
                self.close_open(None, out);
            }
            _ => {}
        }
    }

    /// A response that was not streamed: each part starts and ends at once.
    fn whole_response(&mut self, response: &ModelResponse, out: &mut Vec<E::Event>) {
        for (index, part) in response.parts.iter().enumerate() {
            match part {
                ModelResponsePart::Text(t) => self.start_part(index, Kind::Text, &t.content, "", "", out),
                ModelResponsePart::Thinking(t) => self.start_part(index, Kind::Thinking, &t.content, "", "", out),
                ModelResponsePart::ToolCall(c) => {
                    let args = args_text(&c.args);
                    self.start_part(index, Kind::ToolCall, &args, &c.tool_call_id, &c.tool_name, out);
                    if let Some(p) = self.open.as_mut() {
                        p.call = Some(c.clone());
                    }
                }
                _ => {}
            }
        }
    }

    fn start_part(&mut self, index: usize, kind: Kind, content: &str, id: &str, name: &str, out: &mut Vec<E::Event>) {
        let previous = self.close_open(Some(kind), out);
        self.turn_to(Some(Turn::Response), out);
        let follows = previous == Some(kind);
        match kind {
            Kind::Text => self.encoder.handle(Moment::TextStart { content, follows_text: follows }, out),
            Kind::Thinking => self.encoder.handle(Moment::ThinkingStart { content, follows_thinking: follows }, out),
            Kind::ToolCall => self.encoder.handle(Moment::ToolCallStart { id, name, args: content }, out),
        }
        self.open = Some(OpenPart {
            index,
            kind,
            content: content.to_string(),
            tool_id: id.to_string(),
            tool_name: name.to_string(),
            call: None,
        });
    }

    /// Ends the open part (`next`: the kind of the part that follows it); returns its kind.
    fn close_open(&mut self, next: Option<Kind>, out: &mut Vec<E::Event>) -> Option<Kind> {
        let part = self.open.take()?;
        match part.kind {
            Kind::Text => self.encoder.handle(Moment::TextEnd { followed_by_text: next == Some(Kind::Text) }, out),
            Kind::Thinking => self.encoder.handle(Moment::ThinkingEnd, out),
            Kind::ToolCall => {
                let call = part.call.unwrap_or_else(|| {
                    let args = serde_json::from_str(&part.content)
                        .unwrap_or_else(|_| serde_json::Value::String(part.content.clone()));
                    ToolCallPart::new(part.tool_name.clone(), args, part.tool_id.clone())
                });
                self.encoder.handle(Moment::ToolCallEnd { call: &call }, out);
            }
        }
        Some(part.kind)
    }

    /// The output tool's call and its answer, which the run does not report as tool events.
    fn answer_output_tool(&mut self, out: &mut Vec<E::Event>) {
        let Some(name) = self.final_tool.take() else { return };
        let Some(call) = self.last_response.as_ref().and_then(|r| {
            r.parts.iter().find_map(|p| match p {
                ModelResponsePart::ToolCall(c) if c.tool_name == name => Some(c.clone()),
                _ => None,
            })
        }) else {
            return;
        };
        if self.called.contains(&call.tool_call_id) {
            return;
        }
        self.turn_to(Some(Turn::Request), out);
        self.encoder.handle(Moment::ToolCall { call: &call, args_valid: true }, out);
        let mut result =
            ToolReturnPart::success(call.tool_name.clone(), FINAL_RESULT_PROCESSED.into(), call.tool_call_id.clone());
        result.timestamp = None;
        self.encoder.handle(Moment::ToolResult { result: &result }, out);
    }

    fn turn_to(&mut self, turn: Option<Turn>, out: &mut Vec<E::Event>) {
        if self.turn == turn {
            return;
        }
        self.turn = turn;
        if turn == Some(Turn::Response) {
            self.encoder.before_response(out);
        }
    }
}

/// A call's arguments as the JSON text a client reads.
pub(crate) fn args_text(args: &serde_json::Value) -> String {
    match args {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A call's arguments as a JSON object (text arguments parsed; anything else as it is).
pub(crate) fn args_value(args: &serde_json::Value) -> serde_json::Value {
    match args {
        serde_json::Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| args.clone()),
        other => other.clone(),
    }
}
