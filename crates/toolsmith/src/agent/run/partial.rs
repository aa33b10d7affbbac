//! The output so far while the model streams it (`RunBuilder::stream_output`): the output tool's
//! arguments or the text, read as partial JSON where the output is structured, through the
//! output hooks with `ctx.partial_output` set.

use serde_json::Value;

use crate::capability::{Capabilities, OutputInfo, OutputKind};
use crate::context::RunContext;
use crate::messages::ToolCallPart;
use crate::model::ModelStreamEvent;
use crate::run::partial::parse_partial;
use crate::run::{OutputSpec, RunOutput};

/// Follows one streamed response, validating the output it carries so far.
pub(super) struct PartialOutput<'a, D> {
    spec: &'a OutputSpec,
    caps: &'a Capabilities<D>,
    /// The context the output hooks see (`partial_output` set).
    ctx: RunContext<D>,
    /// The output tool's call, once the model started it: its index and id.
    tool: Option<(usize, String)>,
    args: String,
    text: String,
    /// How long the arguments or text were when last read.
    read_len: usize,
    /// What the last reading gave (raw), and a fingerprint of the last output shown (outputs
    /// are compared without keeping a copy of each).
    last_raw: Option<Value>,
    last: Option<(OutputKind, u64)>,
}

impl<'a, D: Clone + Send + Sync + 'static> PartialOutput<'a, D> {
    /// `ctx` is the context of the request, with the output retry budget.
    pub(super) fn new(spec: &'a OutputSpec, caps: &'a Capabilities<D>, mut ctx: RunContext<D>) -> Self {
        ctx.partial_output = true;
        PartialOutput {
            spec,
            caps,
            ctx,
            tool: None,
            args: String::new(),
            text: String::new(),
            read_len: 0,
            last_raw: None,
            last: None,
        }
    }

    /// The output so far after `event`, when it changed and validates as partial output.
    ///
    /// The output is read again once it grew by an eighth since the last reading (each piece,
    /// while it is short): reading every piece of a long output would cost time quadratic in
    /// its length, this costs about nine readings of the whole.
    pub(super) async fn observe(&mut self, event: &ModelStreamEvent) -> Option<RunOutput> {
        let output_tool = self.spec.output_tool();
        let kind = match event {
            ModelStreamEvent::ToolCallStart { index, tool_call_id, tool_name }
                if output_tool.is_some_and(|t| &t.name == tool_name) && self.tool.is_none() =>
            {
                self.tool = Some((*index, tool_call_id.clone()));
                self.ctx.tool_name = Some(tool_name.clone());
                self.ctx.tool_call_id = Some(tool_call_id.clone());
                return None;
            }
            ModelStreamEvent::ToolCallArgsDelta { index, delta }
                if self.tool.as_ref().is_some_and(|t| t.0 == *index) =>
            {
                self.args.push_str(delta);
                OutputKind::Tool
            }
            ModelStreamEvent::TextDelta { delta, .. } if self.tool.is_none() => {
                self.text.push_str(delta);
                if self.spec.allows_text() {
                    OutputKind::Text
                } else if self.spec.is_structured() {
                    OutputKind::StructuredText
                } else {
                    return None;
                }
            }
            _ => return None,
        };
        let len = if kind == OutputKind::Tool { self.args.len() } else { self.text.len() };
        if len - self.read_len < self.read_len / 8 {
            return None;
        }
        self.read_len = len;
        // What the hooks are given: the arguments so far as JSON, or the text so far.
        let raw = match kind {
            OutputKind::Tool => parse_partial(&self.args)?,
            _ => Value::String(self.text.clone()),
        };
        // Structured text that reads as the same partial JSON as before has nothing new.
        let key = match kind {
            OutputKind::StructuredText => Some(parse_partial(&self.text)?),
            _ => None,
        };
        if self.last_raw.as_ref() == Some(key.as_ref().unwrap_or(&raw)) {
            return None;
        }
        let mut call = match (&self.tool, output_tool) {
            (Some((_, id)), Some(def)) if kind == OutputKind::Tool => {
                Some(ToolCallPart::new(def.name.clone(), raw.clone(), id.clone()))
            }
            _ => None,
        };
        let info = OutputInfo { kind, call: call.as_ref(), def: output_tool };
        let settled = crate::execution::settle_output(self.spec, self.caps, &self.ctx, info, raw).await;
        // The reading is kept whether it validated or not: the call's arguments are the raw
        // output (no second copy), the text's reading is the key.
        self.last_raw = key.or_else(|| call.take().map(|c| c.args));
        let settled = settled.ok()?;
        let fingerprint = (kind, fingerprint(&settled));
        if self.last == Some(fingerprint) {
            return None;
        }
        self.last = Some(fingerprint);
        Some(match (kind, settled) {
            (OutputKind::Text, Value::String(s)) => RunOutput::Text(s),
            (OutputKind::Text, other) => RunOutput::Text(other.to_string()),
            (_, value) => RunOutput::Structured(value),
        })
    }
}

/// A 64-bit fingerprint of `value` (its structure and contents, object keys in order), made
/// without recursion.
fn fingerprint(value: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Null => 0u8.hash(&mut h),
            Value::Bool(b) => (1u8, *b).hash(&mut h),
            Value::Number(n) => (2u8, n.as_f64().map(f64::to_bits), n.as_i64(), n.as_u64()).hash(&mut h),
            Value::String(s) => (3u8, s).hash(&mut h),
            Value::Array(items) => {
                (4u8, items.len()).hash(&mut h);
                stack.extend(items.iter().rev());
            }
            Value::Object(map) => {
                (5u8, map.len()).hash(&mut h);
                for (k, v) in map.iter().rev() {
                    k.hash(&mut h);
                    stack.push(v);
                }
            }
        }
    }
    h.finish()
}
