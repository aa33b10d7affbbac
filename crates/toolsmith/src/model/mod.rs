//! Models: the [`Model`] and [`StreamingModel`] traits, settings, profiles, the offline models
//! [`TestModel`] and [`FunctionModel`], and [`FallbackModel`]. Provider adapters are in
//! [`providers`](crate::providers).

mod any;
mod fallback;
mod function;
mod profile;
mod retry;
mod return_schemas;
mod stream;
mod test;
mod tool_choice;

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

pub use crate::error::model_error::{ModelError, ModelErrorKind, ModelHttpError};
pub use crate::model_info::{ModelInfo, ToolSearchSupport};
pub use crate::settings::{ModelSettings, ToolChoice};
pub use any::AnyModel;
pub use fallback::{FallbackModel, is_api_error};
pub use function::{AgentInfo, FunctionModel, StreamDelta};
pub use profile::{Encoding, ModelProfile, UnknownEncoding};

pub use retry::{ProviderRetry, RetryObserver};
pub use return_schemas::prepare_return_schemas;
pub use stream::{
    ModelStream, ModelStreamEvent, ResponseAssembler, StreamingModel, collect_stream, single_response_stream,
};
pub use test::{TestModel, generate_args};
pub use tool_choice::{ResolvedToolChoice, check_static_tool_choice, resolve_tool_choice};

use crate::messages::{ModelMessage, ModelResponse};
use crate::tool::ToolDefinition;

/// A server-side tool search strategy the agent asks for by name
/// ([`SearchStrategy::NativeBm25`](crate::search::SearchStrategy::NativeBm25) and
/// [`NativeRegex`](crate::search::SearchStrategy::NativeRegex)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NativeSearchStrategy {
    /// Natural-language queries ranked with BM25.
    Bm25,
    /// Regular-expression queries.
    Regex,
}

/// What the model is offered for one request.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ModelRequestParameters {
    /// The function tools shown to the model (shared with the agent's tool index: a hook that
    /// edits one uses [`Arc::make_mut`](std::sync::Arc::make_mut)).
    pub function_tools: Vec<std::sync::Arc<ToolDefinition>>,
    /// The output tools (structured output), if any.
    pub output_tools: Vec<ToolDefinition>,
    /// Whether a plain text answer ends the run (or, in [`OutputMode::Native`] and
    /// [`OutputMode::Prompted`], is the output's JSON).
    ///
    /// [`OutputMode::Native`]: crate::output_mode::OutputMode::Native
    /// [`OutputMode::Prompted`]: crate::output_mode::OutputMode::Prompted
    pub allow_text_output: bool,
    /// How the structured output is asked for: with [`OutputMode::Native`](crate::output_mode::OutputMode::Native)
    /// the adapter sends `output_object` as the provider's JSON-schema response format.
    pub output_mode: crate::output_mode::OutputMode,
    /// The structured output's schema, name, description and strictness (any mode).
    pub output_object: Option<std::sync::Arc<crate::output_mode::OutputObject>>,
    /// In [`OutputMode::Prompted`](crate::output_mode::OutputMode::Prompted), the instructions that
    /// describe the output (also part of `instructions`).
    pub prompted_output_instructions: Option<String>,
    /// Instructions for this request.
    pub instructions: Option<String>,
    /// The tools that exist but are withheld from the model this step (deferred loading, not
    /// discovered yet): not in `function_tools`, not callable.
    pub withheld_tools: WithheldTools,
    /// The server-side search strategy the agent asks for by name, when it does: the
    /// deferred tools are then in `function_tools` (with `defer_loading`) and the provider must
    /// search them with this strategy.
    pub native_search_strategy: Option<NativeSearchStrategy>,
    /// The tools the provider runs itself, asked for by the capabilities (see
    /// [`native`](crate::native)).
    pub native_tools: Vec<crate::native::NativeTool>,
}

/// Which tools are withheld from the model (see
/// [`ModelRequestParameters::withheld_tools`]): a lookup, so that a large deferred catalogue is
/// not copied into every request.
///
/// ```
/// use toolsmith::model::WithheldTools;
///
/// let hidden = ["send_invoice", "refund"];
/// let withheld = WithheldTools::new(true, move |n| hidden.contains(&n))
///     .with_names(move || hidden.iter().map(|n| n.to_string()).collect());
/// assert!(withheld.contains("refund") && !withheld.contains("search_tools"));
/// assert_eq!(withheld.names(), ["refund", "send_invoice"]);
/// ```
#[derive(Clone, Default)]
pub struct WithheldTools {
    contains: Option<std::sync::Arc<WithheldLookup>>,
    names: Option<std::sync::Arc<WithheldNames>>,
    any: bool,
}

type WithheldLookup = dyn Fn(&str) -> bool + Send + Sync;
type WithheldNames = dyn Fn() -> Vec<String> + Send + Sync;

impl WithheldTools {
    /// Withheld tools as answered by `contains`; `any` says whether there is at least one.
    pub fn new(any: bool, contains: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        WithheldTools { contains: Some(std::sync::Arc::new(contains)), names: None, any }
    }

    /// Lists the withheld tools with `names` (called only when they are listed, as in an
    /// error message).
    pub fn with_names(mut self, names: impl Fn() -> Vec<String> + Send + Sync + 'static) -> Self {
        self.names = Some(std::sync::Arc::new(names));
        self
    }

    /// Whether any tool is withheld.
    pub fn any(&self) -> bool {
        self.any
    }

    /// Whether the tool of this name exists and is withheld.
    pub fn contains(&self, name: &str) -> bool {
        self.contains.as_ref().is_some_and(|f| f(name))
    }

    /// The withheld tools' names, sorted (empty when they cannot be listed).
    pub fn names(&self) -> Vec<String> {
        let mut names = self.names.as_ref().map(|f| f()).unwrap_or_default();
        names.sort();
        names
    }
}

impl std::fmt::Debug for WithheldTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.contains.is_some() { "WithheldTools(..)" } else { "WithheldTools(none)" })
    }
}

impl PartialEq for WithheldTools {
    fn eq(&self, other: &Self) -> bool {
        self.any == other.any
            && match (&self.contains, &other.contains) {
                (None, None) => true,
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl ModelRequestParameters {
    /// Every tool definition (function tools, then output tools).
    pub fn all_tools(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.function_tools.iter().map(|t| &**t).chain(self.output_tools.iter())
    }
}

/// A language model: answers a list of messages with a response.
///
/// Implement it for a provider; [`TestModel`] and [`FunctionModel`] are offline models for
/// tests and demos.
///
/// ```
/// use toolsmith::messages::{ModelMessage, ModelResponse};
/// use toolsmith::model::{Model, ModelError, ModelRequestParameters, ModelSettings};
///
/// struct Echo;
///
/// impl Model for Echo {
///     fn name(&self) -> &str { "echo" }
///     async fn request(
///         &self,
///         messages: &[ModelMessage],
///         _settings: Option<&ModelSettings>,
///         _params: &ModelRequestParameters,
///     ) -> Result<ModelResponse, ModelError> {
///         Ok(ModelResponse::text(format!("{} messages", messages.len())))
///     }
/// }
/// ```
pub trait Model: Send + Sync + 'static {
    /// The model's name.
    fn name(&self) -> &str;

    /// The provider or system name.
    fn system(&self) -> &str {
        "custom"
    }

    /// The context window in tokens, when known (tool search's bridge mode compares the tool
    /// schemas' size with it). By default, the window of the model's family by its name
    /// ([`ModelProfile`]); `None` for names the table does not know.
    fn context_window(&self) -> Option<u64> {
        ModelProfile::for_model(self.name()).context_window
    }

    /// The API the model speaks, for capabilities that write provider settings
    /// ([`Thinking`](crate::capability::Thinking)): `"openai-chat"`, `"openai-responses"`,
    /// `"anthropic-messages"`, `"gemini"`; empty when the model does not say.
    fn api(&self) -> &str {
        ""
    }

    /// Whether the model's API takes a tool's return schema in a field of its own (Gemini's
    /// `responseJsonSchema`). Otherwise the agent appends the return schemas of the tools that
    /// ask for them to their descriptions ([`prepare_return_schemas`]).
    fn native_tool_return_schemas(&self) -> bool {
        false
    }

    /// The tool search the model's provider runs server-side over tools sent with
    /// `defer_loading`: with [`SearchStrategy::PydanticAi`](crate::search::SearchStrategy::PydanticAi)
    /// the agent then sends its deferred catalogue to the model instead of its own
    /// `search_tools`. By default none.
    fn tool_search_support(&self) -> ToolSearchSupport {
        ToolSearchSupport::None
    }

    /// The [native tools](crate::native) the model's provider runs (by default none): an agent
    /// whose capabilities ask for another is refused when it is built.
    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        crate::native::NativeToolKinds::NONE
    }

    /// The settings that narrow what a native tool may do (`allowed_domains`, `blocked_domains`,
    /// `max_uses`) which the provider cannot apply, by kind: a tool with one of them set is
    /// treated as one the model does not run, so that a limit is never silently dropped. By
    /// default none.
    fn native_tool_unapplied_settings(&self) -> Vec<(crate::native::NativeToolKind, &'static str)> {
        Vec::new()
    }

    /// Whether the model takes a JSON-schema response format for structured output
    /// ([`OutputMode::Native`](crate::output_mode::OutputMode::Native)): OpenAI's `response_format`,
    /// Gemini's `responseJsonSchema`. By default not: an agent asking for it is refused when it
    /// is built.
    fn native_output_support(&self) -> bool {
        false
    }

    /// Answers one request.
    fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;

    /// [`Model::request`] as the boxed future an agent holds while it waits. The default boxes
    /// `request`'s future; a model whose answer is a boxed future already returns that one
    /// (an allocation less per request, and no second state around the first).
    fn request_boxed<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>
    where
        Self: Sized,
    {
        Box::pin(self.request(messages, settings, params))
    }
}

/// The dyn-compatible form of [`Model`], used inside the agent.
pub(crate) trait DynModel: Send + Sync {
    fn info(&self) -> ModelInfo;
    fn request_boxed<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;
}

impl<M: Model> DynModel for M {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            name: Arc::from(self.name()),
            system: Arc::from(self.system()),
            context_window: self.context_window(),
            api: Arc::from(self.api()),
            native_tool_return_schemas: self.native_tool_return_schemas(),
            tool_search: self.tool_search_support(),
            native_tools: self.native_tool_support(),
            native_unapplied: self.native_tool_unapplied_settings().into(),
            native_output: self.native_output_support(),
        }
    }
    fn request_boxed<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        <M as Model>::request_boxed(self, messages, settings, params)
    }
}

/// A shared model handle.
pub(crate) type SharedModel = Arc<dyn DynModel>;

/// The dyn-compatible form of [`StreamingModel`].
pub(crate) trait DynStreamingModel: Send + Sync {
    fn request_stream_boxed<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelStream, ModelError>>;
}

impl<M: StreamingModel> DynStreamingModel for M {
    fn request_stream_boxed<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelStream, ModelError>> {
        Box::pin(self.request_stream(messages, settings, params))
    }
}
