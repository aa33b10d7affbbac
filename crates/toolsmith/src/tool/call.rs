//! Calling a tool directly with JSON arguments, outside an agent run: for unit tests.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::Value;

use super::{ArgsCheck, Invocation, Tool, ToolError, ToolOutput, ToolSpec};
use crate::context::RunContext;
use crate::error::panic_message;

impl<D: Clone + Send + Sync + 'static> Tool<D> {
    /// Calls the tool with JSON arguments, outside an agent run, the way a run does: the
    /// arguments are validated against the schema (with its coercions), the arguments validator
    /// runs, then the arguments are deserialised and the tool called. A JSON string is read as
    /// the arguments' text, as a model sends them.
    ///
    /// The result is what the run would turn into the model's next message: the output, or the
    /// error (`ToolError::Validation` for invalid arguments, `ToolError::Retry` for a
    /// [`ModelRetry`](super::ModelRetry), `ToolError::Panicked` for a panic, a `UserError`
    /// failure for a tool that [`check`](Tool::check) rejects). The tool's timeout is not
    /// applied, and a synchronous tool runs on the calling thread.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use toolsmith::tool::ToolOutput;
    /// use serde_json::json;
    ///
    /// /// Add two integers.
    /// #[tool]
    /// fn add(x: i64, y: i64) -> i64 {
    ///     x + y
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let tool: Tool<()> = add.into();
    /// let out = tool.call_json(RunContext::detached(), json!({"x": "1", "y": 2})).await;
    /// assert_eq!(out.unwrap(), ToolOutput::Value(json!(3)));
    /// assert!(matches!(
    ///     tool.call_json(RunContext::detached(), json!({"x": 1})).await,
    ///     Err(ToolError::Validation(_))
    /// ));
    /// # });
    /// ```
    pub async fn call_json(&self, ctx: RunContext<D>, args: Value) -> Result<ToolOutput, ToolError> {
        if let Some(problem) = &self.problem {
            return Err(ToolError::Failed { kind: "UserError".into(), message: problem.clone(), source: None });
        }
        let args = self.validate_value(args).map_err(ToolError::Validation)?;
        if let Some(check) = &self.args_validator {
            let checked = std::panic::catch_unwind(AssertUnwindSafe(|| check(&ctx, &args)));
            match checked.map_err(|p| ToolError::Panicked { message: panic_message(p) })? {
                ArgsCheck::Done(result) => result?,
                ArgsCheck::Pending(fut) => AssertUnwindSafe(fut)
                    .catch_unwind()
                    .await
                    .map_err(|p| ToolError::Panicked { message: panic_message(p) })??,
            }
        }
        let handler = self.handler.clone();
        let invocation =
            std::panic::catch_unwind(AssertUnwindSafe(move || handler.call(|| ctx, std::borrow::Cow::Owned(args))))
                .map_err(|p| ToolError::Panicked { message: panic_message(p) })?;
        let result = match invocation {
            Invocation::Ready(result) => Ok(result),
            Invocation::Async(fut) => AssertUnwindSafe(fut).catch_unwind().await,
            Invocation::Blocking(f) => std::panic::catch_unwind(AssertUnwindSafe(f)),
        };
        result.map_err(|p| ToolError::Panicked { message: panic_message(p) })?
    }

    /// Schema validation of arguments given as JSON (a string is their text), as in a run.
    fn validate_value(&self, args: Value) -> Result<Value, Vec<crate::validation::ErrorDetail>> {
        match (&self.validator, args) {
            (Some(v), Value::String(s)) => v.validate_str(&s),
            (Some(v), Value::Null) => v.validate(&Value::Object(Default::default())),
            (Some(v), other) => v.validate(&other),
            (None, Value::String(s)) => crate::validation::parse_json_args(&s).map_err(|e| vec![e]),
            (None, Value::Null) => Ok(Value::Object(Default::default())),
            (None, other) => Ok(other),
        }
    }
}

impl ToolSpec {
    /// Calls the tool with JSON arguments outside an agent run: [`Tool::call_json`] on this tool
    /// for dependencies `D`. With [`RunContext::detached`] for a tool that takes no context or
    /// `RunContext<()>`, or [`RunContext::with_deps`] for one that reads dependencies.
    ///
    /// This goes through the tool's argument schema and deserialisation; to call the function
    /// itself with Rust values, use the function the macro keeps beside the constant (`add_fn`
    /// for `add`, see [`macro@crate::tool`]).
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use toolsmith::tool::ToolOutput;
    /// use serde_json::json;
    ///
    /// /// Greet the user.
    /// #[tool]
    /// async fn greet(ctx: RunContext<String>, greeting: String) -> String {
    ///     format!("{greeting}, {}!", ctx.deps)
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let ctx = RunContext::with_deps("Ada".to_string());
    /// let out = greet.call_json(ctx, json!({"greeting": "Hello"})).await;
    /// assert_eq!(out.unwrap(), ToolOutput::Value(json!("Hello, Ada!")));
    /// // The function itself, with Rust values.
    /// assert_eq!(greet_fn(RunContext::with_deps("Bob".into()), "Hi".into()).await, "Hi, Bob!");
    /// # });
    /// ```
    pub async fn call_json<D: Clone + Send + Sync + 'static>(
        self,
        ctx: RunContext<D>,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        Tool::from_spec(self).call_json(ctx, args).await
    }
}
