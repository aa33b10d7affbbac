//! [`AnyModel`], a shareable type-erased model.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::messages::{ModelMessage, ModelResponse};
use crate::model::stream::{ModelStream, StreamingModel, single_response_stream};
use crate::model::{DynModel, Model, ModelError, ModelInfo, ModelRequestParameters, ModelSettings};

/// The requests of a wrapped model (what it says about itself is read once, into
/// [`ModelInfo`]).
trait ErasedModel: Send + Sync {
    fn request<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;
    fn request_stream<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelStream, ModelError>>;
}

struct Streaming<M>(M);
struct NonStreaming<M>(M);

impl<M: StreamingModel> ErasedModel for Streaming<M> {
    fn request<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.0.request(messages, settings, params))
    }
    fn request_stream<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelStream, ModelError>> {
        Box::pin(self.0.request_stream(messages, settings, params))
    }
}

impl<M: Model> ErasedModel for NonStreaming<M> {
    fn request<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.0.request(messages, settings, params))
    }
    fn request_stream<'a>(
        &'a self,
        messages: &'a [ModelMessage],
        settings: Option<&'a ModelSettings>,
        params: &'a ModelRequestParameters,
    ) -> BoxFuture<'a, Result<ModelStream, ModelError>> {
        Box::pin(async move { self.0.request(messages, settings, params).await.map(single_response_stream) })
    }
}

/// A model of any type behind a shared handle: what [`infer_model`](crate::providers::infer_model) returns, what
/// [`FallbackModel`](crate::model::FallbackModel) holds, and what `Agent::builder` accepts like
/// any other model. Cloning is cheap.
///
/// ```
/// use toolsmith::model::{AnyModel, Model, TestModel};
/// let model = AnyModel::from_model(TestModel::default());
/// assert_eq!(model.system(), "test");
/// ```
#[derive(Clone)]
pub struct AnyModel {
    inner: Arc<dyn ErasedModel>,
    info: ModelInfo,
}

impl std::fmt::Debug for AnyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnyModel").field("system", &self.info.system).field("name", &self.info.name).finish()
    }
}

impl AnyModel {
    /// Wraps a model that streams.
    pub fn new<M: StreamingModel>(model: M) -> Self {
        let info = DynModel::info(&model);
        AnyModel { inner: Arc::new(Streaming(model)), info }
    }

    /// Wraps a model that does not stream: its stream is the whole response as one event.
    pub fn from_model<M: Model>(model: M) -> Self {
        let info = DynModel::info(&model);
        AnyModel { inner: Arc::new(NonStreaming(model)), info }
    }
}

impl Model for AnyModel {
    fn name(&self) -> &str {
        &self.info.name
    }

    fn system(&self) -> &str {
        &self.info.system
    }

    fn context_window(&self) -> Option<u64> {
        self.info.context_window
    }

    fn api(&self) -> &str {
        &self.info.api
    }

    fn native_tool_return_schemas(&self) -> bool {
        self.info.native_tool_return_schemas
    }

    fn tool_search_support(&self) -> super::ToolSearchSupport {
        self.info.tool_search
    }

    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        self.info.native_tools
    }

    fn native_output_support(&self) -> bool {
        self.info.native_output
    }

    fn native_tool_unapplied_settings(&self) -> Vec<(crate::native::NativeToolKind, &'static str)> {
        self.info.native_unapplied.to_vec()
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        self.inner.request(messages, settings, params).await
    }
}

impl StreamingModel for AnyModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        self.inner.request_stream(messages, settings, params).await
    }
}
