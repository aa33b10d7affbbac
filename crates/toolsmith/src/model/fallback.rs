//! [`FallbackModel`]: tries models in order until one answers.

use std::sync::Arc;

use crate::error::UserError;
use crate::messages::{ModelMessage, ModelResponse};
use crate::model::AnyModel;
use crate::model::stream::{ModelStream, StreamingModel};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings};

type FallbackOn = Arc<dyn Fn(&ModelError) -> bool + Send + Sync>;

/// A model that tries several models in order: when one fails with an error that allows a
/// fallback (by default an HTTP error, an error the provider reported, a connection failure, a
/// timeout or a broken wire format: the kinds [`ModelErrorKind::is_transient`] names), the next
/// one is asked. When every model fails, the error (kind `ModelErrorKind::AllModelsFailed`) lists
/// each model's error.
///
/// Each model keeps its own retries: a provider's 429 is retried with backoff first, and only
/// an error that survives the retries moves on to the next model.
///
/// ```
/// use toolsmith::model::{AnyModel, FallbackModel, TestModel};
/// let model = FallbackModel::new([AnyModel::from_model(TestModel::default())]).unwrap();
/// let agent = toolsmith::Agent::builder(model).build().unwrap();
/// # let _ = agent;
/// ```
///
/// [`ModelErrorKind::is_transient`]: crate::model::ModelErrorKind::is_transient
#[derive(Clone)]
pub struct FallbackModel {
    models: Vec<AnyModel>,
    name: String,
    fallback_on: FallbackOn,
}

impl std::fmt::Debug for FallbackModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FallbackModel").field("models", &self.models).finish_non_exhaustive()
    }
}

/// The default fallback condition: an error of a kind that another model may not have
/// ([`ModelErrorKind::is_transient`]: HTTP errors, errors the provider reported, connection
/// failures, timeouts, broken wire formats).
///
/// [`ModelErrorKind::is_transient`]: crate::model::ModelErrorKind::is_transient
pub fn is_api_error(error: &ModelError) -> bool {
    error.kind.is_transient()
}

impl FallbackModel {
    /// Tries `models` in order. An empty list is a [`UserError`].
    pub fn new(models: impl IntoIterator<Item = AnyModel>) -> Result<Self, UserError> {
        let models: Vec<AnyModel> = models.into_iter().collect();
        if models.is_empty() {
            return Err(UserError::new("FallbackModel needs at least one model: pass the models to try, in order"));
        }
        let name = format!(
            "fallback:{}",
            models.iter().map(|m| format!("{}:{}", m.system(), m.name())).collect::<Vec<_>>().join(",")
        );
        Ok(FallbackModel { models, name, fallback_on: Arc::new(is_api_error) })
    }

    /// Sets which errors move on to the next model (the others are returned at once).
    pub fn fallback_on(mut self, f: impl Fn(&ModelError) -> bool + Send + Sync + 'static) -> Self {
        self.fallback_on = Arc::new(f);
        self
    }

    /// The models, in order.
    pub fn models(&self) -> &[AnyModel] {
        &self.models
    }

    fn all_failed(&self, errors: Vec<(String, ModelError)>) -> ModelError {
        let list: Vec<String> = errors
            .iter()
            .enumerate()
            .map(|(i, (name, e))| format!("{}. {name}: {} ({})", i + 1, e.message, e.kind))
            .collect();
        ModelError::new(
            super::ModelErrorKind::AllModelsFailed,
            format!(
                "all {} models of the FallbackModel failed: {}. Check the providers' keys and status, or add another model to the list",
                errors.len(),
                list.join("; ")
            ),
        )
    }
}

impl Model for FallbackModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn system(&self) -> &str {
        "fallback"
    }

    /// Only when every model takes them natively: the schemas go into descriptions otherwise.
    fn native_tool_return_schemas(&self) -> bool {
        self.models.iter().all(|m| m.native_tool_return_schemas())
    }

    /// Only when every model takes a response format (a request may go to any of them).
    fn native_output_support(&self) -> bool {
        self.models.iter().all(|m| m.native_output_support())
    }

    /// The kinds every model runs (a request may go to any of them).
    fn native_tool_support(&self) -> crate::native::NativeToolKinds {
        let mut kinds = self.models.iter().map(|m| m.native_tool_support());
        let first = kinds.next().unwrap_or_default();
        kinds.fold(first, |a, b| a.intersection(b))
    }

    /// Every model's (a request may go to any of them).
    fn native_tool_unapplied_settings(&self) -> Vec<(crate::native::NativeToolKind, &'static str)> {
        let mut all: Vec<_> = self.models.iter().flat_map(|m| m.native_tool_unapplied_settings()).collect();
        all.sort_by_key(|(k, s)| (k.name(), *s));
        all.dedup();
        all
    }

    /// The least of the models' (a request may go to any of them).
    fn tool_search_support(&self) -> super::ToolSearchSupport {
        self.models.iter().map(|m| m.tool_search_support()).min().unwrap_or_default()
    }

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        let mut errors = Vec::new();
        for model in &self.models {
            match model.request(messages, settings, params).await {
                Ok(response) => return Ok(response),
                Err(e) if (self.fallback_on)(&e) => {
                    tracing::warn!(model = %model.name(), kind = %e.kind, "model failed, falling back to the next one");
                    errors.push((format!("{}:{}", model.system(), model.name()), e));
                }
                Err(e) => return Err(e),
            }
        }
        Err(self.all_failed(errors))
    }
}

impl StreamingModel for FallbackModel {
    async fn request_stream(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        let mut errors = Vec::new();
        for model in &self.models {
            match model.request_stream(messages, settings, params).await {
                Ok(stream) => return Ok(stream),
                Err(e) if (self.fallback_on)(&e) => {
                    tracing::warn!(model = %model.name(), kind = %e.kind, "model failed, falling back to the next one");
                    errors.push((format!("{}:{}", model.system(), model.name()), e));
                }
                Err(e) => return Err(e),
            }
        }
        Err(self.all_failed(errors))
    }
}
