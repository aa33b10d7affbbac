//! [`FunctionModel`]: a model whose answers come from your own function.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::{BoxStream, Stream, StreamExt};

use crate::messages::{ModelMessage, ModelResponse};
use crate::model::{
    Model, ModelError, ModelRequestParameters, ModelSettings, ModelStream, ModelStreamEvent, ResponseAssembler,
    StreamingModel, single_response_stream,
};
use crate::tool::ToolDefinition;

/// What a [`FunctionModel`]'s function is told about the request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentInfo {
    /// The function tools shown.
    pub function_tools: Vec<Arc<ToolDefinition>>,
    /// Whether a text answer ends the run.
    pub allow_text_output: bool,
    /// The output tools.
    pub output_tools: Vec<ToolDefinition>,
    /// The model settings.
    pub model_settings: Option<ModelSettings>,
    /// The instructions for this request.
    pub instructions: Option<String>,
    /// The native tools asked for (see [`FunctionModel::with_native_tools`]).
    pub native_tools: Vec<crate::native::NativeTool>,
    /// How the structured output is asked for.
    pub output_mode: crate::output_mode::OutputMode,
    /// The structured output's schema, name, description and strictness, if any.
    pub output_object: Option<Arc<crate::output_mode::OutputObject>>,
}

/// The function as the model calls it: the messages, the agent's information and the
/// `model_name` for a response that has none, to the answer's one boxed future.
type Func = Arc<
    dyn Fn(&[ModelMessage], &AgentInfo, Arc<str>) -> BoxFuture<'static, Result<ModelResponse, ModelError>>
        + Send
        + Sync,
>;

/// The answer with `label` as its `model_name` when the function gave none.
fn named(answer: Result<ModelResponse, ModelError>, label: Arc<str>) -> Result<ModelResponse, ModelError> {
    answer.map(|mut response| {
        response.model_name.get_or_insert(label);
        response
    })
}
type StreamFunc = Arc<dyn Fn(&[ModelMessage], &AgentInfo) -> BoxStream<'static, StreamDelta> + Send + Sync>;

/// One piece of a streamed answer from a [`FunctionModel::stream`] function: text, or a piece of
/// the tool call at `index` (its name and id with its first piece, then fragments of its
/// arguments as JSON text).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamDelta {
    /// More text.
    Text(String),
    /// A piece of the tool call at `index`.
    ToolCall {
        /// Which call of the response (a new index starts a new call).
        index: usize,
        /// The tool's name (with the first piece).
        name: Option<String>,
        /// The next fragment of the arguments' JSON text.
        args: Option<String>,
        /// The call's id (with the first piece; made up when never given).
        id: Option<String>,
    },
}

impl StreamDelta {
    /// More text.
    pub fn text(text: impl Into<String>) -> Self {
        StreamDelta::Text(text.into())
    }

    /// The start of the tool call at `index`: its tool and the first fragment of its arguments.
    pub fn tool_call(index: usize, name: impl Into<String>, args: impl Into<String>) -> Self {
        StreamDelta::ToolCall { index, name: Some(name.into()), args: Some(args.into()), id: None }
    }

    /// The next fragment of the arguments of the tool call at `index`.
    pub fn tool_args(index: usize, args: impl Into<String>) -> Self {
        StreamDelta::ToolCall { index, name: None, args: Some(args.into()), id: None }
    }
}

/// A model that calls your function to answer: scripted tests, demos and benchmarks.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::messages::{ModelResponse, ModelResponsePart, ToolCallPart};
///
/// let model = FunctionModel::sync(|messages, _info| {
///     if messages.len() == 1 {
///         ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
///             "roll_dice", serde_json::json!({}), "c1"))])
///     } else {
///         ModelResponse::text("done")
///     }
/// });
/// # let _ = model;
/// ```
#[derive(Clone)]
pub struct FunctionModel {
    f: Func,
    stream: Option<StreamFunc>,
    name: String,
    /// The `model_name` its responses carry (`function:` and the name), shared by them.
    label: Arc<str>,
    native: crate::native::NativeToolKinds,
    unapplied: Vec<(crate::native::NativeToolKind, &'static str)>,
    /// The parameters of the last request, shared by the model's clones.
    last: Arc<std::sync::Mutex<Option<ModelRequestParameters>>>,
}

impl std::fmt::Debug for FunctionModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionModel").field("name", &self.name).finish_non_exhaustive()
    }
}

impl FunctionModel {
    /// A model from an async function. The function reads what it needs from the borrowed
    /// messages and returns a `'static` future.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(&[ModelMessage], &AgentInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ModelResponse, ModelError>> + Send + 'static,
    {
        // A `map`, not an async block: that would hold the function's future twice.
        FunctionModel::from_parts(
            Arc::new(move |m, i, label| Box::pin(futures::FutureExt::map(f(m, i), move |answer| named(answer, label)))),
            None,
        )
    }

    /// A model from a synchronous function that always answers.
    pub fn sync<F>(f: F) -> Self
    where
        F: Fn(&[ModelMessage], &AgentInfo) -> ModelResponse + Send + Sync + 'static,
    {
        FunctionModel::from_parts(
            Arc::new(move |m, i, label| Box::pin(std::future::ready(named(Ok(f(m, i)), label)))),
            None,
        )
    }

    /// A model that streams its answers: the function returns the pieces of each answer
    /// ([`StreamDelta`]s), which reach the run as they come when the agent streams
    /// ([`Agent::builder_streaming`](crate::Agent::builder_streaming)); a request that is not
    /// streamed gets the whole answer at once.
    ///
    /// ```
    /// use futures::stream;
    /// use toolsmith::model::{FunctionModel, StreamDelta};
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let model = FunctionModel::stream(|_messages, _info| {
    ///     stream::iter([StreamDelta::text("Hello, "), StreamDelta::text("world")])
    /// });
    /// let agent = Agent::builder_streaming(model).build()?;
    /// assert_eq!(agent.run("hi").await?.output(), "Hello, world");
    /// # Ok(())
    /// # }
    /// ```
    pub fn stream<F, S>(f: F) -> Self
    where
        F: Fn(&[ModelMessage], &AgentInfo) -> S + Send + Sync + 'static,
        S: Stream<Item = StreamDelta> + Send + 'static,
    {
        let stream: StreamFunc = Arc::new(move |m, i| f(m, i).boxed());
        let whole = stream.clone();
        FunctionModel::from_parts(
            Arc::new(move |m, i, label| {
                let deltas = whole(m, i);
                Box::pin(async move {
                    let events: Vec<_> = assemble(deltas).collect().await;
                    let answer = match events.into_iter().last() {
                        Some(Ok(ModelStreamEvent::Final(r))) => Ok(r),
                        Some(Err(e)) => Err(e),
                        _ => Err(ModelError::new(
                            crate::model::ModelErrorKind::UnexpectedResponse,
                            "the stream function's stream ended early",
                        )),
                    };
                    named(answer, label)
                })
            }),
            Some(stream),
        )
    }

    /// A model named `function` from its answering (and streaming) function.
    fn from_parts(f: Func, stream: Option<StreamFunc>) -> Self {
        FunctionModel {
            f,
            stream,
            name: "function".into(),
            label: Arc::from("function:function"),
            native: Default::default(),
            unapplied: Vec::new(),
            last: Arc::default(),
        }
    }

    /// Sets the model's name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self.label = Arc::from(format!("function:{}", self.name));
        self
    }

    /// The parameters of the last request this model (or a clone of it, such as the one an
    /// agent holds) was sent.
    pub fn last_model_request_parameters(&self) -> Option<ModelRequestParameters> {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Says the model runs these [native tools](crate::native) (by default none); the function
    /// sees the ones asked for in [`AgentInfo::native_tools`].
    pub fn with_native_tools(mut self, kinds: crate::native::NativeToolKinds) -> Self {
        self.native = kinds;
        self
    }

    /// Says the model cannot apply these narrowing settings of its native tools (see
    /// [`Model::native_tool_unapplied_settings`]).
    pub fn with_unapplied_native_settings(
        mut self,
        settings: impl IntoIterator<Item = (crate::native::NativeToolKind, &'static str)>,
    ) -> Self {
        self.unapplied = settings.into_iter().collect();
        self
    }
}

impl Model for FunctionModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn system(&self) -> &str {
        "function"
    }

    /// The function answers any output mode.
    fn native_output_support(&self) -> bool {
        true
    }

    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        self.native
    }

    fn native_tool_unapplied_settings(&self) -> Vec<(crate::native::NativeToolKind, &'static str)> {
        self.unapplied.clone()
    }

    fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.answer(messages, settings, params)
    }

    fn request_boxed<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.answer(messages, settings, params)
    }
}

impl FunctionModel {
    /// The function's answer to a request, its one boxed future (the parameters kept for
    /// [`FunctionModel::last_model_request_parameters`] first).
    fn answer(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> BoxFuture<'static, Result<ModelResponse, ModelError>> {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(params.clone());
        (self.f)(messages, &Self::info(settings, params), self.label.clone())
    }

    fn info(settings: Option<&ModelSettings>, params: &ModelRequestParameters) -> AgentInfo {
        AgentInfo {
            function_tools: params.function_tools.clone(),
            allow_text_output: params.allow_text_output,
            output_tools: params.output_tools.clone(),
            model_settings: settings.cloned(),
            instructions: params.instructions.clone(),
            native_tools: params.native_tools.clone(),
            output_mode: params.output_mode,
            output_object: params.output_object.clone(),
        }
    }
}

impl StreamingModel for FunctionModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        let Some(stream) = &self.stream else {
            return Ok(single_response_stream(self.request(messages, settings, params).await?));
        };
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(params.clone());
        let name = self.label.clone();
        let deltas = stream(messages, &Self::info(settings, params));
        Ok(assemble(deltas)
            .map(move |event| match event {
                Ok(ModelStreamEvent::Final(mut r)) => {
                    r.model_name.get_or_insert_with(|| name.clone());
                    Ok(ModelStreamEvent::Final(r))
                }
                other => other,
            })
            .boxed())
    }
}

/// The events of a streamed answer made of `deltas`, ending with the whole response.
fn assemble(deltas: BoxStream<'static, StreamDelta>) -> BoxStream<'static, Result<ModelStreamEvent, ModelError>> {
    let state = Some((deltas, ResponseAssembler::new(), 0usize));
    futures::stream::unfold(state, |state| async move {
        let (mut deltas, mut assembler, mut made_up) = state?;
        loop {
            let Some(delta) = deltas.next().await else {
                let (parts, _) = assembler.finish(true);
                let response = ModelResponse::new(parts);
                return Some((vec![Ok(ModelStreamEvent::Final(response))], None));
            };
            let events: Vec<ModelStreamEvent> = match delta {
                StreamDelta::Text(text) => assembler.text_delta("text", &text).into_iter().collect(),
                StreamDelta::ToolCall { index, name, args, id } => {
                    let key = format!("call-{index}");
                    let mut events = Vec::new();
                    if !assembler.has_tool_call(&key) {
                        made_up += 1;
                        let id = id.unwrap_or_else(|| format!("pyd_ai_tool_call_id__{made_up}"));
                        events.push(assembler.tool_call_start(&key, &id, name.as_deref().unwrap_or_default()));
                    }
                    events.extend(args.and_then(|a| assembler.tool_call_args_delta(&key, &a)));
                    events
                }
            };
            if !events.is_empty() {
                return Some((events.into_iter().map(Ok).collect::<Vec<_>>(), Some((deltas, assembler, made_up))));
            }
        }
    })
    .flat_map(futures::stream::iter)
    .boxed()
}
