//! [`ToolOutputLimits`]: oversized tool returns truncated, spilled to a store (paged back with
//! `read_tool_result`) or summarised when they are produced, as the harness's capability of that
//! name does.

mod bands;
mod read;
mod spec;

pub(crate) use spec::selector as spec_selector;
mod store;
mod text;

pub(crate) use text::py_format;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use bands::{
    Action, Band, DEFAULT_PREVIEW_CHARS, DEFAULT_TRUNCATE_CHARS, Spill, Summarize, SummarizeFn, Truncate,
    TruncationStrategy,
};
pub use read::{MAX_READ_CHARS, MAX_READ_LINES, READ_TOOL_NAME};
pub use store::{FileStore, MemoryStore, OverflowStore, StoreError};

use super::{Capability, HookStage, ToolCallInfo};
use crate::context::RunContext;
use crate::tool::{ToolError, ToolOutput, ToolReturn};
use crate::toolset::{BoxedToolset, FunctionToolset, ToolSelector};

/// The threshold of the default band: smaller returns pass through.
pub const DEFAULT_THRESHOLD: usize = 10_000;

/// The harness's summary prompt (`{tool_name}` and `{output}` are filled in).
pub const DEFAULT_SUMMARY_PROMPT: &str = "The following output from the `{tool_name}` tool is too large to keep in full. Summarize it so the summary carries everything needed to keep working: concrete values, identifiers, errors, and structure. Respond ONLY with the summary, no preamble.\n\n<output>\n{output}\n</output>";

/// A tokenizer for [`ToolOutputLimits::over_tokens`]: text -> tokens.
pub type Tokenizer = Arc<dyn Fn(&str) -> usize + Send + Sync>;

/// A serializer function: the value -> its text, or why not (compact JSON is used instead).
pub type SerializeFn = Arc<dyn Fn(&Value) -> Result<String, String> + Send + Sync>;

/// How a structured (non-string) return becomes the text that is measured, previewed, spilled
/// and read back. Without one it is compact JSON, one long line.
#[derive(Clone)]
#[non_exhaustive]
pub enum Serializer {
    /// Indented JSON, one field per line.
    IndentedJson,
    /// A list as one compact JSON value per line (anything else as indented JSON).
    JsonLines,
    /// A function; an error falls back to compact JSON.
    Custom(SerializeFn),
}

impl std::fmt::Debug for Serializer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Serializer::IndentedJson => f.write_str("IndentedJson"),
            Serializer::JsonLines => f.write_str("JsonLines"),
            Serializer::Custom(_) => f.write_str("Custom(<function>)"),
        }
    }
}

/// Reduces oversized tool returns when they are produced, so the reduction (not the payload)
/// stays in the history and is what every later request carries.
///
/// Bands pick the action by size (characters, or estimated tokens with
/// [`over_tokens`](Self::over_tokens)): the band with the largest threshold the return reaches
/// wins, smaller returns pass through. The default is one band at 10,000 characters,
/// `Spill(then=Truncate())`: stored whole and paged back with the `read_tool_result` tool this
/// capability adds, or truncated head and tail when the store refuses it. What the model sees
/// (markers, previews, read-back pages) is the harness's text.
///
/// The store is in memory by default ([`MemoryStore`]; clones of the capability share it, so a
/// run resumed from a saved history still reads earlier spills), or [`FileStore`] for spills that
/// outlive the process. Errors and retries are never reduced (they are not returns), nor are
/// `read_tool_result`'s own pages or tool search's returns.
///
/// ```
/// use toolsmith::capability::tool_output_limits::{Band, Spill, ToolOutputLimits, Truncate, TruncationStrategy};
/// use toolsmith::prelude::*;
///
/// let limits = ToolOutputLimits::<()>::new()
///     .bands([
///         Band::new(100_000, Spill::new().then(Truncate::new())),
///         Band::new(5_000, Truncate::new()),
///     ])
///     .per_tool("run_shell", [Band::new(8_000, Truncate::new().strategy(TruncationStrategy::Tail))]);
/// let agent = Agent::builder(TestModel::default()).capability(limits).build().unwrap();
/// # let _ = agent;
/// ```
pub struct ToolOutputLimits<D> {
    bands: Vec<Band>,
    per_tool: HashMap<String, Vec<Band>>,
    tool_filter: ToolSelector<D>,
    over_tokens: bool,
    tokenizer: Option<Tokenizer>,
    store: Arc<dyn OverflowStore>,
    strip_ansi: bool,
    summary_prompt: String,
    serializer: Option<Serializer>,
}

impl<D> Clone for ToolOutputLimits<D> {
    fn clone(&self) -> Self {
        ToolOutputLimits {
            bands: self.bands.clone(),
            per_tool: self.per_tool.clone(),
            tool_filter: self.tool_filter.clone(),
            over_tokens: self.over_tokens,
            tokenizer: self.tokenizer.clone(),
            store: self.store.clone(),
            strip_ansi: self.strip_ansi,
            summary_prompt: self.summary_prompt.clone(),
            serializer: self.serializer.clone(),
        }
    }
}

impl<D: Clone + Send + Sync + 'static> Default for ToolOutputLimits<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Clone + Send + Sync + 'static> ToolOutputLimits<D> {
    /// The default: spill returns of 10,000 characters or more to memory, truncate if that fails.
    pub fn new() -> Self {
        ToolOutputLimits {
            bands: vec![Band::new(DEFAULT_THRESHOLD, Spill::new().then(Truncate::new()))],
            per_tool: HashMap::new(),
            tool_filter: ToolSelector::All,
            over_tokens: false,
            tokenizer: None,
            store: Arc::new(MemoryStore::new()),
            strip_ansi: false,
            summary_prompt: DEFAULT_SUMMARY_PROMPT.into(),
            serializer: None,
        }
    }

    /// The global bands (replacing the default; empty: only `per_tool` tools are reduced).
    pub fn bands(mut self, bands: impl IntoIterator<Item = Band>) -> Self {
        self.bands = bands::prepare(bands.into_iter().collect());
        self
    }

    /// Bands for one tool, replacing the global ones for it.
    pub fn per_tool(mut self, tool: impl Into<String>, bands: impl IntoIterator<Item = Band>) -> Self {
        self.per_tool.insert(tool.into(), bands::prepare(bands.into_iter().collect()));
        self
    }

    /// Which tools are touched at all (default: all).
    pub fn tool_filter(mut self, tools: ToolSelector<D>) -> Self {
        self.tool_filter = tools;
        self
    }

    /// Measure thresholds in estimated tokens (4 characters a token, or the
    /// [`tokenizer`](Self::tokenizer)). Truncation budgets stay in characters.
    pub fn over_tokens(mut self, over_tokens: bool) -> Self {
        self.over_tokens = over_tokens;
        self
    }

    /// The token counter of [`over_tokens`](Self::over_tokens).
    pub fn tokenizer(mut self, tokenizer: impl Fn(&str) -> usize + Send + Sync + 'static) -> Self {
        self.tokenizer = Some(Arc::new(tokenizer));
        self
    }

    /// Where spills go (default: a fresh [`MemoryStore`]).
    pub fn store(mut self, store: impl OverflowStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Strip ANSI escape sequences from text returns before measuring and reducing.
    pub fn strip_ansi(mut self, strip: bool) -> Self {
        self.strip_ansi = strip;
        self
    }

    /// The prompt a [`Summarize::with_model`] model is given; `{tool_name}` and `{output}` are
    /// filled in.
    pub fn summary_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.summary_prompt = prompt.into();
        self
    }

    /// How structured returns become text.
    pub fn serializer(mut self, serializer: Serializer) -> Self {
        self.serializer = Some(serializer);
        self
    }

    fn render(&self, value: &Value) -> String {
        let text = match (value, &self.serializer) {
            (Value::String(s), _) => s.clone(),
            (other, None) => text::to_text(other),
            (other, Some(Serializer::IndentedJson)) => text::indented_json(other),
            (other, Some(Serializer::JsonLines)) => text::json_lines(other),
            (other, Some(Serializer::Custom(f))) => f(other).unwrap_or_else(|_| text::to_text(other)),
        };
        if self.strip_ansi { text::strip_ansi(&text) } else { text }
    }

    /// Applies `action`, then its fallbacks while one cannot run: `(replacement, handle)`.
    async fn apply(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        first: &Action,
        value: &Value,
        text: &str,
    ) -> (Option<String>, Option<String>) {
        let mut action = Some(first);
        while let Some(current) = action {
            match current {
                Action::Passthrough => return (None, None),
                Action::Truncate(t) => {
                    return (Some(text::truncate_text(text, t.max_chars, t.strategy, t.keep_tail_lines)), None);
                }
                Action::Spill(spill) => {
                    let run = if ctx.run_id.is_empty() { "run" } else { &ctx.run_id };
                    let id = if call.call.tool_call_id.is_empty() { "call" } else { &call.call.tool_call_id };
                    let key = format!("{run}/{id}.{}", ctx.retry);
                    if let Ok(handle) = self.store.write(key, text.as_bytes().to_vec()).await {
                        return (Some(self.spill_preview(&handle, value, text, spill.preview_chars)), Some(handle));
                    }
                }
                Action::Summarize(s) => {
                    if let Some(f) = &s.summarize {
                        let input = if s.prompted {
                            let values = [("tool_name", call.call.tool_name.as_str()), ("output", text)];
                            text::py_format(&self.summary_prompt, &values).unwrap_or_else(|_| text.to_string())
                        } else {
                            text.to_string()
                        };
                        let summary = f(call.call.tool_name.clone(), input);
                        // A summarising model's request is the run's (see `Summarize::with_model`).
                        let summary = match ctx.spent.clone() {
                            Some(sink) => bands::SUMMARY_SPENT.scope(sink, summary).await,
                            None => summary.await,
                        };
                        if let Ok(summary) = summary {
                            return (Some(summary), None);
                        }
                    }
                }
            }
            action = current.then();
        }
        (None, None)
    }

    fn spill_preview(&self, handle: &str, value: &Value, text: &str, preview_chars: usize) -> String {
        let size = if self.over_tokens {
            format!("{} tokens", text::commas(text::measure(text, true, None)))
        } else {
            format!("{} chars", text::commas(text.chars().count()))
        };
        let handle = text::py_repr(handle);
        let mut parts = vec![format!(
            "[Tool output too large ({size}); stored to handle {handle}. Read it with {READ_TOOL_NAME}(handle={handle}, offset=0, limit=200, from_end=False, pattern=None).]"
        )];
        let sketch = text::json_sketch(value);
        if !sketch.is_empty() {
            parts.push(format!("shape: {sketch}"));
        }
        parts.push(text::head_tail_preview(text, preview_chars));
        parts.join("\n")
    }
}

/// The return's metadata with the spill's keys added (a non-object is kept as `original_metadata`).
fn with_handle(existing: Option<Value>, handle: String, bytes: usize) -> Value {
    let mut base = match existing {
        Some(Value::Object(map)) => map,
        Some(other) => Map::from_iter([("original_metadata".to_string(), other)]),
        None => Map::new(),
    };
    base.insert("overflow_handle".into(), Value::String(handle));
    base.insert("overflow_bytes".into(), Value::from(bytes));
    Value::Object(base)
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for ToolOutputLimits<D> {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ToolExecute
    }

    fn has_prepare_tools(&self) -> bool {
        false
    }

    fn toolset(&self) -> Option<BoxedToolset<D>> {
        Some(BoxedToolset::new(FunctionToolset::new().with_tool(read::tool::<D>(self.store.clone()))))
    }

    async fn after_tool_execute(
        &self,
        ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        _args: &Value,
        result: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        // Never reduced: read_tool_result's own pages, and tool search's returns (read back from
        // the history to know which tools were found), whatever `tool_filter` says.
        let exempt = call.def.name == READ_TOOL_NAME
            || call.def.name == crate::search::SEARCH_TOOL_NAME
            || call.call.tool_kind.is_some();
        if exempt || !self.tool_filter.matches(ctx, call.def) {
            return Ok(result);
        }
        let value = match &result {
            ToolOutput::Value(v) => v,
            ToolOutput::Return(r) => &r.return_value,
        };
        let bands = self.per_tool.get(&call.call.tool_name).unwrap_or(&self.bands);
        let text = self.render(value);
        let size = text::measure(&text, self.over_tokens, self.tokenizer.as_deref());
        let Some(action) = bands::select(bands, size) else {
            return Ok(result);
        };
        let (replacement, handle) = self.apply(ctx, call, action, value, &text).await;
        let Some(replacement) = replacement else {
            return Ok(result);
        };
        let bytes = text.len();
        Ok(match (result, handle) {
            (ToolOutput::Return(mut r), handle) => {
                r.return_value = Value::String(replacement);
                if let Some(handle) = handle {
                    r.metadata = Some(with_handle(r.metadata.take(), handle, bytes));
                }
                ToolOutput::Return(r)
            }
            (ToolOutput::Value(_), Some(handle)) => {
                ToolOutput::Return(ToolReturn::new(replacement).with_metadata(with_handle(None, handle, bytes)))
            }
            (ToolOutput::Value(_), None) => ToolOutput::Value(Value::String(replacement)),
        })
    }
}
