//! Arguments validators: checks of a call's arguments after schema validation and before the
//! tool runs (and before approval is asked for), on the raw JSON or on the arguments as a Rust
//! type, synchronous or async.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{ModelRetry, Tool, ToolError};
use crate::context::RunContext;
use crate::validation::ErrorDetail;

/// What an arguments validator says: done, or a future to await.
pub(crate) enum ArgsCheck {
    Done(Result<(), ToolError>),
    Pending(BoxFuture<'static, Result<(), ToolError>>),
}

/// An arguments validator, called with the validated arguments.
pub(crate) type ArgsValidatorFn<D> = Arc<dyn Fn(&RunContext<D>, &Value) -> ArgsCheck + Send + Sync>;

/// Reads validated arguments as `A`. A failure is a validation error for the model, as when the
/// tool itself deserialises its arguments.
fn read_args<A: DeserializeOwned>(args: &Value) -> Result<A, ToolError> {
    A::deserialize(args).map_err(|e| ToolError::Validation(vec![ErrorDetail::value_error(e.to_string())]))
}

impl<D> Tool<D> {
    /// Sets an arguments validator over the raw JSON arguments, run after schema validation and
    /// before the tool runs (and before approval is asked for). An `Err(ModelRetry)` is sent
    /// back to the model as a retry, and counts against the tool's retry budget.
    ///
    /// This is the form for [`Tool::from_schema`] tools, whose arguments have no Rust type; for
    /// typed arguments see [`Tool::args_validator_typed`] and [`Tool::args_validator_async`].
    /// A panic in the validator is the tool's panic. Setting a validator replaces the previous
    /// one.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use serde_json::{Value, json};
    /// use toolsmith::tool::ToolOutput;
    ///
    /// let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    /// let read: Tool<()> = Tool::from_schema("read", "Read a file.", schema, |_ctx, args: Value| async move {
    ///     Ok(ToolOutput::Value(args["path"].clone()))
    /// })
    /// .args_validator(|_ctx, args: &Value| match args["path"].as_str() {
    ///     Some(path) if !path.contains("..") => Ok(()),
    ///     _ => Err(ModelRetry::new("`path` must be a relative path without `..`")),
    /// });
    /// # let _ = read;
    /// ```
    pub fn args_validator<F>(mut self, f: F) -> Self
    where
        F: Fn(&RunContext<D>, &Value) -> Result<(), ModelRetry> + Send + Sync + 'static,
    {
        self.args_validator = Some(Arc::new(move |ctx, args| ArgsCheck::Done(f(ctx, args).map_err(ToolError::Retry))));
        self
    }

    /// Sets an arguments validator over the arguments as a Rust type `A`: the tool's own
    /// argument struct (for [`Tool::new`], or a `#[tool]` with a single struct parameter), or
    /// any `Deserialize` type that reads the fields to check (serde ignores the others unless the
    /// type denies unknown fields). It runs where [`Tool::args_validator`] does, with the same
    /// effect: an `Err(ModelRetry)` is sent back to the model as a retry.
    ///
    /// The arguments are deserialised from the schema-validated JSON. If they do not fit `A`,
    /// the model gets a validation error, as for arguments that do not match the schema.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use serde::Deserialize;
    /// use schemars::JsonSchema;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Transfer {
    ///     from: String,
    ///     to: String,
    ///     cents: u64,
    /// }
    ///
    /// let transfer: Tool<()> = Tool::new("transfer", |_ctx: RunContext<()>, t: Transfer| async move {
    ///     Ok::<_, ModelRetry>(format!("moved {} from {} to {}", t.cents, t.from, t.to))
    /// })
    /// .args_validator_typed(|_ctx, t: &Transfer| {
    ///     if t.from == t.to {
    ///         return Err(ModelRetry::new("`from` and `to` must be different accounts"));
    ///     }
    ///     Ok(())
    /// });
    /// # let _ = transfer;
    /// ```
    pub fn args_validator_typed<A, F>(mut self, f: F) -> Self
    where
        A: DeserializeOwned + 'static,
        F: Fn(&RunContext<D>, &A) -> Result<(), ModelRetry> + Send + Sync + 'static,
    {
        self.args_validator = Some(Arc::new(move |ctx, args| {
            ArgsCheck::Done(read_args::<A>(args).and_then(|a| f(ctx, &a).map_err(ToolError::Retry)))
        }));
        self
    }

    /// Sets an async arguments validator over the arguments as a Rust type `A` (see
    /// [`Tool::args_validator_typed`]; `A` may be [`serde_json::Value`] for the raw arguments).
    /// It receives the context and the arguments by value, so that its future can hold them.
    /// The tool's timeout does not apply to it.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use serde::Deserialize;
    /// use schemars::JsonSchema;
    ///
    /// #[derive(Clone)]
    /// struct Accounts;
    /// impl Accounts {
    ///     async fn exists(&self, name: &str) -> bool { name != "nobody" }
    /// }
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Lookup {
    ///     account: String,
    /// }
    ///
    /// let balance: Tool<Accounts> = Tool::new("balance", |_ctx: RunContext<Accounts>, l: Lookup| async move {
    ///     Ok::<_, ModelRetry>(format!("{}: 42", l.account))
    /// })
    /// .args_validator_async(|ctx: RunContext<Accounts>, l: Lookup| async move {
    ///     if ctx.deps.exists(&l.account).await {
    ///         Ok(())
    ///     } else {
    ///         Err(ModelRetry::new(format!("there is no account '{}'", l.account)))
    ///     }
    /// });
    /// # let _ = balance;
    /// ```
    pub fn args_validator_async<A, F, Fut>(mut self, f: F) -> Self
    where
        D: Clone,
        A: DeserializeOwned + 'static,
        F: Fn(RunContext<D>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ModelRetry>> + Send + 'static,
    {
        self.args_validator = Some(Arc::new(move |ctx, args| match read_args::<A>(args) {
            Ok(a) => {
                let fut = f(ctx.clone(), a);
                ArgsCheck::Pending(Box::pin(async move { fut.await.map_err(ToolError::Retry) }))
            }
            Err(e) => ArgsCheck::Done(Err(e)),
        }));
        self
    }
}
