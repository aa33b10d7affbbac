//! Size bands and the actions they trigger.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::messages::{ModelMessage, ModelRequest};
use crate::model::{Model, ModelRequestParameters};

/// Which end(s) of an oversized text [`Truncate`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TruncationStrategy {
    /// The first characters (headers, schemas).
    Head,
    /// The last characters (build and test output, where errors land last).
    Tail,
    /// The first and last characters, the middle elided.
    #[default]
    HeadTail,
}

/// The default character budget of [`Truncate`].
pub const DEFAULT_TRUNCATE_CHARS: usize = 4_000;
/// The default preview length of [`Spill`].
pub const DEFAULT_PREVIEW_CHARS: usize = 1_000;

/// Clamp the text of a return to `max_chars` characters, the truncation marker included.
/// Lossy, free, no read-back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Truncate {
    /// Which end(s) to keep.
    pub strategy: TruncationStrategy,
    /// The budget, in characters whatever the size unit of the bands.
    pub max_chars: usize,
    /// The last lines kept whole before the rest of the budget is allocated (0: none).
    pub keep_tail_lines: usize,
    /// What runs when truncation cannot (a binary payload).
    pub then: Option<Box<Action>>,
}

impl Default for Truncate {
    fn default() -> Self {
        Truncate {
            strategy: TruncationStrategy::HeadTail,
            max_chars: DEFAULT_TRUNCATE_CHARS,
            keep_tail_lines: 0,
            then: None,
        }
    }
}

impl Truncate {
    /// Head and tail within 4,000 characters.
    pub fn new() -> Self {
        Self::default()
    }
    /// The strategy.
    pub fn strategy(mut self, strategy: TruncationStrategy) -> Self {
        self.strategy = strategy;
        self
    }
    /// The budget in characters.
    pub fn max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = max_chars;
        self
    }
    /// Keep the last `lines` lines whole.
    pub fn keep_tail_lines(mut self, lines: usize) -> Self {
        self.keep_tail_lines = lines;
        self
    }
    /// The fallback.
    pub fn then(mut self, then: impl Into<Action>) -> Self {
        self.then = Some(Box::new(then.into()));
        self
    }
}

/// Store the full return and replace it with a handle, a shape sketch and a preview; the model
/// pages through it with `read_tool_result`. Lossless.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Spill {
    /// Characters of the head and tail preview.
    pub preview_chars: usize,
    /// What runs when the store refuses the write.
    pub then: Option<Box<Action>>,
}

impl Default for Spill {
    fn default() -> Self {
        Spill { preview_chars: DEFAULT_PREVIEW_CHARS, then: None }
    }
}

impl Spill {
    /// A 1,000-character preview, no fallback.
    pub fn new() -> Self {
        Self::default()
    }
    /// The preview length.
    pub fn preview_chars(mut self, preview_chars: usize) -> Self {
        self.preview_chars = preview_chars;
        self
    }
    /// The fallback.
    pub fn then(mut self, then: impl Into<Action>) -> Self {
        self.then = Some(Box::new(then.into()));
        self
    }
}

/// A summariser: `(tool name, full text) -> summary`, or an error message (the fallback runs).
pub type SummarizeFn = Arc<dyn Fn(String, String) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// Replace the return with a summary written by a function, or by a model given the
/// capability's summary prompt. The expensive band.
#[derive(Clone)]
#[non_exhaustive]
pub struct Summarize {
    /// The summariser; `None` leaves the return to the fallback (a hook cannot reach the run's
    /// own model, so a model is named with [`Summarize::with_model`]).
    pub summarize: Option<SummarizeFn>,
    /// Whether `summarize` is a model given the summary prompt (rather than a function given the
    /// raw text).
    pub(super) prompted: bool,
    /// What runs when summarising fails.
    pub then: Option<Box<Action>>,
}

impl fmt::Debug for Summarize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Summarize")
            .field("summarize", &self.summarize.as_ref().map(|_| "<function>"))
            .field("then", &self.then)
            .finish()
    }
}

impl PartialEq for Summarize {
    fn eq(&self, other: &Self) -> bool {
        let ptr = |s: &Summarize| s.summarize.as_ref().map(|f| Arc::as_ptr(f) as *const ());
        ptr(self) == ptr(other) && self.prompted == other.prompted && self.then == other.then
    }
}

tokio::task_local! {
    /// The run's usage while a summariser runs: a model's request is added to it, as the
    /// harness's summarising agent runs with the run's usage.
    pub(super) static SUMMARY_SPENT: crate::context::UsageSink;
}

impl Summarize {
    /// Summarise with a function of the tool's name and its full text.
    pub fn with_fn<F, Fut>(f: F) -> Self
    where
        F: Fn(String, String) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<String, String>> + Send + 'static,
    {
        Summarize { summarize: Some(Arc::new(move |tool, text| Box::pin(f(tool, text)))), prompted: false, then: None }
    }

    /// Summarise with a model, asked with the capability's summary prompt under the harness's
    /// instructions ("You summarize oversized tool output."); its answer, trimmed, replaces the
    /// return.
    pub fn with_model(model: impl Model + 'static) -> Self {
        let model = Arc::new(model);
        let f: SummarizeFn = Arc::new(move |_tool, prompt| {
            let model = model.clone();
            Box::pin(async move {
                let mut request = ModelRequest::user_prompt(prompt);
                request.instructions = Some("You summarize oversized tool output.".into());
                let messages = [ModelMessage::Request(request)];
                let response = model
                    .request(&messages, None, &ModelRequestParameters::default())
                    .await
                    .map_err(|e| e.to_string())?;
                let _ = SUMMARY_SPENT.try_with(|spent| spent.add_request(&response.usage));
                Ok(response.text_content().unwrap_or_default().trim().to_string())
            })
        });
        Summarize { summarize: Some(f), prompted: true, then: None }
    }

    /// The fallback.
    pub fn then(mut self, then: impl Into<Action>) -> Self {
        self.then = Some(Box::new(then.into()));
        self
    }
}

/// What a band does with a return that reaches it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Action {
    /// Leave it as it is.
    Passthrough,
    /// [`Truncate`].
    Truncate(Truncate),
    /// [`Spill`].
    Spill(Spill),
    /// [`Summarize`].
    Summarize(Summarize),
}

impl Action {
    /// The fallback of this action.
    pub fn then(&self) -> Option<&Action> {
        match self {
            Action::Passthrough => None,
            Action::Truncate(t) => t.then.as_deref(),
            Action::Spill(s) => s.then.as_deref(),
            Action::Summarize(s) => s.then.as_deref(),
        }
    }
}

impl From<Truncate> for Action {
    fn from(v: Truncate) -> Self {
        Action::Truncate(v)
    }
}
impl From<Spill> for Action {
    fn from(v: Spill) -> Self {
        Action::Spill(v)
    }
}
impl From<Summarize> for Action {
    fn from(v: Summarize) -> Self {
        Action::Summarize(v)
    }
}

/// Runs `action` once a return's measured size reaches `over` (characters, or tokens).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Band {
    /// The threshold.
    pub over: usize,
    /// The action.
    pub action: Action,
}

impl Band {
    /// A band.
    pub fn new(over: usize, action: impl Into<Action>) -> Self {
        Band { over, action: action.into() }
    }
}

/// Orders bands largest threshold first, so the first match is the largest that fits.
pub(super) fn prepare(mut bands: Vec<Band>) -> Vec<Band> {
    bands.sort_by_key(|b| std::cmp::Reverse(b.over));
    bands
}

/// The first (largest-threshold) band whose threshold `size` meets.
pub(super) fn select(bands: &[Band], size: usize) -> Option<&Action> {
    bands.iter().find(|b| size >= b.over).map(|b| &b.action)
}
