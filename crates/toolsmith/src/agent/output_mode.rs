//! The builder's output mode settings: [`OutputMode`], and the output's name, description,
//! strictness and prompted template.

use super::AgentBuilder;
use crate::context::ModelInfo;
use crate::error::UserError;
use crate::run::{OutputMode, OutputSpec};

impl<D: Clone + Send + Sync + 'static, O: Send + 'static> AgentBuilder<D, O> {
    /// How the model is asked for the structured output (default [`OutputMode::Tool`], the
    /// `final_result` output tool). [`OutputMode::Prompted`] describes the schema in the
    /// instructions and parses the model's text as JSON, for servers that refuse a forced tool
    /// call; [`OutputMode::Native`] uses the provider's JSON-schema response format, and
    /// `build()` refuses it for a model that has none. Either way the output is validated, and
    /// retried, as in tool mode.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct City { name: String }
    ///
    /// let agent = Agent::builder(TestModel::default())
    ///     .output_type::<City>()
    ///     .output_mode(OutputMode::Prompted)
    ///     .build()
    ///     .unwrap();
    /// assert!(agent.output_spec().prompted_instructions().unwrap().contains("\"title\": \"City\""));
    /// let city = agent.run("Where is the Eiffel tower?").run_sync().unwrap().into_output();
    /// assert_eq!(city.name, "a");
    /// ```
    pub fn output_mode(mut self, mode: OutputMode) -> Self {
        self.output_options.mode = mode;
        self
    }

    /// The output's name in the response format and the prompted instructions (default: the
    /// schema's title, or the output type's name).
    pub fn output_name(mut self, name: impl Into<String>) -> Self {
        self.output_options.name = Some(name.into());
        self
    }

    /// The output's description (default: the schema's); in tool mode, the output tool's.
    pub fn output_description(mut self, description: impl Into<String>) -> Self {
        self.output_options.description = Some(description.into());
        self
    }

    /// Whether the provider should enforce the output schema strictly (its strict mode).
    pub fn output_strict(mut self, strict: bool) -> Self {
        self.output_options.strict = Some(strict);
        self
    }

    /// The template of the prompted output instructions (default
    /// [`DEFAULT_PROMPTED_OUTPUT_TEMPLATE`](crate::agent::DEFAULT_PROMPTED_OUTPUT_TEMPLATE)):
    /// `{schema}` stands for the output's schema, which follows a template without it.
    pub fn prompted_output_template(mut self, template: impl Into<String>) -> Self {
        self.output_options.template = Some(template.into());
        self
    }
}

/// Refuses native output for a model whose provider has no JSON-schema response format.
pub(crate) fn check_support(output: &OutputSpec, model: &ModelInfo) -> Result<(), UserError> {
    if output.mode() == OutputMode::Native && !model.native_output {
        return Err(UserError::new(format!(
            "native output is not supported by the model `{}` ({}): use `OutputMode::Prompted` (the schema in the instructions) or `OutputMode::Tool`",
            model.name, model.system
        )));
    }
    Ok(())
}
