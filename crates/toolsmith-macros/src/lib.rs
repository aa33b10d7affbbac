//! The `#[tool]` attribute macro of [toolsmith](https://docs.rs/toolsmith).
//!
//! Use it through the `toolsmith` crate (`toolsmith::tool`, also in `toolsmith::prelude`): the code
//! it generates refers to `::toolsmith::__private`, so this crate is not useful on its own. The
//! examples below use it as a dev-dependency.
//!
//! # What it does
//!
//! `#[tool]` goes on a free `fn` or `async fn` and **replaces** it with a constant of type
//! `toolsmith::ToolSpec` that has the same name, visibility and doc comment. A `ToolSpec` is
//! `Copy`, so tools are passed around by name:
//!
//! ```
//! use toolsmith::prelude::*;
//!
//! /// Roll a six-sided die and return the result.
//! #[tool]
//! async fn roll_dice() -> String {
//!     "4".into()
//! }
//!
//! /// Get the player's name.
//! #[tool]
//! fn get_player_name(ctx: RunContext<String>) -> String {
//!     ctx.deps.clone()
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(TestModel::default())
//!     .deps::<String>()
//!     .tools([roll_dice, get_player_name])
//!     .build()?;
//! # Ok(())
//! # }
//! ```
//!
//! ## Calling the function
//!
//! The function itself is kept, unchanged, beside the constant under the name `{name}_fn` (same
//! visibility, `cfg` and place), and the tool calls it: `lookup` is the tool, `lookup_fn` the
//! function. A unit test calls it with Rust values, and other code can share it. Inside the body,
//! the function's own name still means the function, so a recursive tool calls itself.
//! `#[tool(fn_name = other)]` picks another name, e.g. when `lookup_fn` is taken.
//!
//! To test the tool as the model uses it, through its argument schema and deserialisation,
//! [`ToolSpec::call_json`](https://docs.rs/toolsmith/latest/toolsmith/struct.ToolSpec.html#method.call_json)
//! calls it with JSON arguments and a context:
//!
//! ```
//! use toolsmith::prelude::*;
//! use toolsmith::tool::ToolOutput;
//! use serde_json::json;
//!
//! /// Look up a city's population.
//! #[tool]
//! async fn population(ctx: RunContext<u64>, city: String) -> Result<u64, ModelRetry> {
//!     match city.as_str() {
//!         "Paris" => Ok(ctx.deps),
//!         _ => Err(ModelRetry::new(format!("unknown city {city}"))),
//!     }
//! }
//!
//! #[cfg(test)]
//! mod tests {
//!     use super::*;
//!
//!     #[tokio::test]
//!     async fn paris_is_known() {
//!         let ctx = RunContext::with_deps(2_100_000);
//!         assert_eq!(population_fn(ctx.clone(), "Paris".into()).await.unwrap(), 2_100_000);
//!         assert!(population_fn(ctx.clone(), "Atlantis".into()).await.is_err());
//!         let out = population.call_json(ctx, json!({"city": "Paris"})).await.unwrap();
//!         assert_eq!(out, ToolOutput::Value(json!(2_100_000)));
//!     }
//! }
//! # futures::executor::block_on(async {
//! # let ctx = RunContext::with_deps(2_100_000);
//! # assert_eq!(population_fn(ctx.clone(), "Paris".into()).await.unwrap(), 2_100_000);
//! # let out = population.call_json(ctx, json!({"city": "Paris"})).await.unwrap();
//! # assert_eq!(out, ToolOutput::Value(json!(2_100_000)));
//! # });
//! ```
//!
//! ## Parameters
//!
//! * An optional **first** parameter `ctx: RunContext<T>` receives the run context. With
//!   `RunContext` or `RunContext<()>` the tool works with agents of any dependency type; with
//!   `RunContext<T>` it needs an agent whose dependencies are `T` (the agent builder reports a
//!   mismatch). `RunContext` anywhere else is an error.
//! * Every other parameter is an argument the model provides. Its type must be owned and implement
//!   `serde::Deserialize` and `schemars::JsonSchema`; its name (without `r#`) is the argument
//!   name. The arguments are collected in a generated struct that rejects unknown fields, and its
//!   JSON schema is the tool's parameter schema.
//! * `#[serde(...)]` and `#[schemars(...)]` attributes written on a parameter move to that field of
//!   the generated struct, e.g. `#[serde(default)] limit: u32` or
//!   `#[schemars(range(min = 1, max = 6))] sides: u8`.
//! * **A single struct parameter**: when the tool has exactly one argument and its type is not a
//!   number, `bool`, `char`, string, collection, `Option`, `Box`/`Arc`/`Rc`/`Cow`, JSON value or
//!   another well-known non-struct type, it is taken to be a struct deriving `Deserialize` and
//!   `JsonSchema`: the tool's schema is that struct's own schema (title and description included)
//!   and the model's arguments deserialise straight into it, as in Pydantic AI for a single
//!   `BaseModel` parameter. `flatten = false` keeps the wrapper (`{"p": {...}}`); `flatten = true`
//!   forces the single-struct form for a type the macro cannot recognise, such as an alias.
//!
//! ## Descriptions
//!
//! The tool description is the function's doc comment without its `# Arguments` section (also
//! `# Args`, `# Parameters` or `# Params`, at any heading level, up to the next heading). Other
//! sections stay. Parameter descriptions come from that section's list, in any of these forms:
//!
//! ```text
//! # Arguments
//! * `city` - the city to look up
//! - `days` - how many days,
//!   continued on an indented line
//! * `units`: metric or imperial
//! * lang - the language
//! ```
//!
//! or from a doc comment on the parameter itself, which wins over the list:
//!
//! ```
//! # use toolsmith::prelude::*;
//! /// Add two integers.
//! #[tool]
//! fn add(
//!     /// first addend
//!     x: i64,
//!     /// second addend
//!     y: i64,
//! ) -> i64 {
//!     x + y
//! }
//! ```
//!
//! ## Return types
//!
//! The return type is read by its last path segment:
//!
//! | written                         | output                                             |
//! |---------------------------------|----------------------------------------------------|
//! | nothing, or `T: Serialize`      | the value, as JSON (`null` for `()`)               |
//! | `Result<T, E>`                  | the value, or the error converted into `ToolError` |
//! | `ToolReturn`                    | a rich return with content and metadata           |
//! | `Result<ToolReturn, E>`         | the rich return, or the error                      |
//!
//! `E` is anything that converts into `ToolError`: `ModelRetry` (the model tries again),
//! `ApprovalRequired`, `CallDeferred`, `String`, `std::io::Error`, boxed errors, `ToolError` itself.
//!
//! An `async fn` runs on the agent's runtime (its future must be `Send`); a plain `fn` runs on the
//! agent's bounded pool for blocking work.
//!
//! # Options
//!
//! `#[tool(option, option = value, ...)]`, all optional:
//!
//! | option                                    | meaning                                                                 |
//! |-------------------------------------------|-------------------------------------------------------------------------|
//! | `name = "str"`                            | the tool name (default: the function name)                              |
//! | `description = "str"`                     | the description, instead of the doc comment                             |
//! | `retries = 3`                             | the retry budget of this tool (default: the agent's)                    |
//! | `timeout = 5.0` or `timeout = "250ms"`    | how long a call may run: seconds, or a string with a unit (`ms`, `s`, `m`, `h`); greater than 0 |
//! | `strict`, `strict = bool`                 | provider strict mode for the schema                                     |
//! | `sequential`, `sequential = bool`         | the tool runs alone, never concurrently with other calls                |
//! | `requires_approval`, `= bool`             | every call needs a human's approval first                               |
//! | `defer_loading`, `= bool`                 | hidden until found through tool search                                  |
//! | `include_return_schema`, `= bool`         | show the model the return schema (`false`: never, whatever the capabilities) |
//! | `metadata = r#"{"k": "v"}"#`              | metadata, a JSON object (checked at compile time)                       |
//! | `require_parameter_descriptions`, `= bool`| building the tool fails if a parameter has no description               |
//! | `flatten = bool`                          | force (`true`) or prevent (`false`) the single-struct form              |
//! | `fn_name = ident`                         | the name of the function kept beside the tool (default: `{name}_fn`)     |
//!
//! ```
//! # use toolsmith::prelude::*;
//! # #[derive(Clone)] struct Http;
//! # impl Http { async fn get(&self, city: &str) -> Result<String, ModelRetry> { Ok(city.into()) } }
//! /// Get the weather forecast.
//! #[tool(name = "forecast", retries = 3, timeout = 5.0, sequential, metadata = r#"{"team": "weather"}"#)]
//! async fn get_forecast(ctx: RunContext<Http>, city: String) -> Result<String, ModelRetry> {
//!     ctx.deps.get(&city).await
//! }
//!
//! assert_eq!(get_forecast.name(), "forecast");
//! ```
//!
//! # Compile errors
//!
//! Mistakes are reported at the offending tokens. Parameters must be owned:
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! #[tool]
//! fn shout(text: &str) -> String {
//!     // error: tool parameters must be owned types: use String instead of &str
//!     text.to_uppercase()
//! }
//! ```
//!
//! Parameters must be plain identifiers, since their names are the argument names:
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! #[tool]
//! fn add((a, b): (i64, i64)) -> i64 {
//!     // error: tool parameters must be plain identifiers such as `city: String` ...
//!     a + b
//! }
//! ```
//!
//! The context comes first:
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! #[tool]
//! fn greet(name: String, ctx: RunContext) -> String {
//!     // error: `RunContext` must be the first parameter of a tool
//!     name
//! }
//! ```
//!
//! Tools are free functions and are not generic:
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! struct Calculator;
//! impl Calculator {
//!     #[tool]
//!     fn add(&self, x: i64, y: i64) -> i64 {
//!         // error: #[tool] goes on free functions, not methods: remove `self`
//!         x + y
//!     }
//! }
//! ```
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! #[tool]
//! fn echo<T: Clone>(value: T) -> String {
//!     // error: #[tool] functions cannot be generic: ...
//!     String::new()
//! }
//! ```
//!
//! Options are checked:
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! #[tool(retry = 3)] // error: unknown option `retry`; valid options are: name, description, ...
//! fn ping() {}
//! ```
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! #[tool(timeout = 0)] // error: timeout must be a duration greater than 0: ...
//! fn ping() {}
//! ```
//!
//! ```compile_fail
//! # use toolsmith::prelude::*;
//! #[tool(metadata = "[1, 2]")] // error: metadata must be a JSON object: ...
//! fn ping() {}
//! ```
//!
//! A type that does not deserialise, a context type that is not `Clone + Send + Sync + 'static`
//! or an error type that does not convert into `ToolError` is reported by rustc at that type.

mod docs;
mod expand;
mod json;
mod options;
#[cfg(test)]
mod tests;
mod types;

use proc_macro::TokenStream;

/// Turns a function into a tool: see the [`toolsmith-macros` documentation](https://docs.rs/toolsmith-macros/latest/toolsmith_macros/) for the rules and options.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Get me foobar.
/// ///
/// /// # Arguments
/// /// * `a` - apple pie
/// /// * `b` - banana cake
/// #[tool(retries = 3, timeout = 5.0)]
/// async fn foobar(ctx: RunContext<String>, a: i64, b: String) -> Result<String, ModelRetry> {
///     Ok(format!("{} {a} {b}", ctx.deps))
/// }
///
/// let tool: Tool<String> = foobar.into();
/// assert_eq!(tool.definition().description.as_deref(), Some("Get me foobar."));
/// assert_eq!(tool.definition().parameters_json_schema["properties"]["a"]["description"], "apple pie");
/// assert_eq!(tool.max_retries(), Some(3));
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(args.into(), item.into()).into()
}
