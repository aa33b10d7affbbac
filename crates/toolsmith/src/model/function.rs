//! [`FunctionModel`]: a model whose answers come from your own function.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::messages::{ModelMessage, ModelResponse};
use crate::model::{Model, ModelError, ModelRequestParameters, ModelSettings};
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
}

type Func =
    Arc<dyn Fn(&[ModelMessage], &AgentInfo) -> BoxFuture<'static, Result<ModelResponse, ModelError>> + Send + Sync>;

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
    name: String,
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
        FunctionModel { f: Arc::new(move |m, i| Box::pin(f(m, i))), name: "function".into() }
    }

    /// A model from a synchronous function that always answers.
    pub fn sync<F>(f: F) -> Self
    where
        F: Fn(&[ModelMessage], &AgentInfo) -> ModelResponse + Send + Sync + 'static,
    {
        FunctionModel {
            f: Arc::new(move |m, i| {
                let r = f(m, i);
                Box::pin(async move { Ok(r) })
            }),
            name: "function".into(),
        }
    }

    /// Sets the model's name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
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

    async fn request(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        let info = AgentInfo {
            function_tools: params.function_tools.clone(),
            allow_text_output: params.allow_text_output,
            output_tools: params.output_tools.clone(),
            model_settings: settings.cloned(),
            instructions: params.instructions.clone(),
        };
        let mut response = (self.f)(messages, &info).await?;
        if response.model_name.is_none() {
            response.model_name = Some(format!("function:{}", self.name));
        }
        Ok(response)
    }
}
