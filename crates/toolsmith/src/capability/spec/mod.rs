//! Capability specs: an agent's capabilities written as data (JSON, or YAML with the `yaml`
//! feature), built through a [`CapabilityRegistry`] of names.
//!
//! A spec is a list of entries, or a mapping whose only key `capabilities` holds that list.
//! Each entry is a capability name alone (`- Thinking`), or a mapping of one name to its
//! arguments: named arguments (`{ReinjectSystemPrompt: {replace_existing: true}}`), or for
//! capabilities that have a main argument, that argument alone (`{Thinking: high}`).
//!
//! ```yaml
//! capabilities:
//!   - Instrumentation: {version: 2, include_content: false}
//!   - Thinking: high
//!   - ReinjectSystemPrompt: {replace_existing: true}
//!   - SetToolMetadata: {team: search}
//!   - IncludeToolReturnSchemas: {tools: [get_user]}
//!   - PrefixTools: {prefix: wx, capability: {Toolset: weather}}
//!   - ToolSearch: {strategy: keywords, max_results: 5}
//!   - ThreadExecutor: {max_threads: 4}
//! ```
//!
//! The built-in names and their arguments:
//!
//! | name | arguments | main argument |
//! |---|---|---|
//! | `Toolset` | `name`: a toolset registered with [`CapabilityRegistry::register_toolset`] | `name` |
//! | `PrefixTools` | `prefix`, `capability` (an entry, built with the same registry) | — |
//! | `SetToolMetadata` | the metadata: any keys and values | — |
//! | `IncludeToolReturnSchemas` | `tools`: `all` (the default) or a list of tool names | `tools` |
//! | `ReinjectSystemPrompt` | `replace_existing`: bool | `replace_existing` |
//! | `Thinking` | `effort`: `true`, `false`, `minimal` ... `xhigh` (default `true`); `format`: `auto`, `anthropic`, `gemini`, `openai_chat`, `openai_responses` | `effort` |
//! | `Instrumentation` | `include_content`, `include_binary_content`, `use_aggregated_usage_attribute_names`, `include_model_request_parameters`: bool; `version`: 2 to 6; `event_mode`: `attributes` or `logs` | — |
//! | `PrepareTools`, `PrepareOutputTools`, `ProcessHistory` | `function`: a name registered with [`CapabilityRegistry::register_prepare_tools`], [`register_prepare_output_tools`](CapabilityRegistry::register_prepare_output_tools), [`register_history_processor`](CapabilityRegistry::register_history_processor) | `function` |
//! | `ThreadExecutor` | `max_threads`: integer | `max_threads` |
//! | `ToolSearch` | `strategy`: absent (the provider's search where the model has one, else keywords), `keywords`, `bm25` / `regex` (the provider's, by name: Anthropic), `local_bm25` / `local_regex` (toolsmith's); `max_results`; `tool_description`; `parameter_description` | — |
//! | `NativeTool` | a [native tool](crate::native) as Pydantic AI's JSON writes it: `kind` (`web_search`, `web_fetch`, `code_execution`, `image_generation`, `mcp_server`, `file_search`, `memory`) and its fields, flat or under `tool` | — |
//! | `WebSearch` | [`WebSearch`](super::WebSearch): `search_context_size`, `user_location`, `allowed_domains`, `blocked_domains`, `max_uses`; `native`: bool; `local`: `true` / `duckduckgo` (the default) or `false` | — |
//! | `WebFetch` | [`WebFetch`](super::WebFetch): `allowed_domains`, `blocked_domains`, `max_uses`, `enable_citations`, `max_content_tokens`; `native`, `local`: bool | — |
//! | `ImageGeneration` | [`ImageGeneration`](super::ImageGeneration): the image settings of the native tool; `native`: bool | — |
//! | `MCP` | [`Mcp`](super::Mcp): `url`, `id`, `authorization_token`, `headers`, `allowed_tools`, `description`; `native`, `local`: bool | `url` |
//! | `ToolOutputLimits` | the harness's: `bands` (`[{over, action}]`, an action `Truncate` / `Spill` / `Summarize` / `Passthrough`, alone or with `strategy`, `max_chars`, `keep_tail_lines`, `preview_chars`, `then`), `per_tool`, `tool_filter`, `over_tokens`, `strip_ansi`, `summary_prompt`, `serializer` (`indented_json`, `json_lines`), `store` (`memory`, `{LocalFileStore: {base_dir, cleanup_after}}`); see [`ToolOutputLimits::from_spec_with`](super::ToolOutputLimits::from_spec_with) | — |
//! | `RepairToolArguments` | none | — |
//! | `ToolCallJudge` | the harness's: `model` (a `provider:model` name, [`infer_model`](crate::providers::infer_model)), `question`, `tools`, `include_conversation`, `conversation_window`, `on_uncertain` (`block`, `allow`, `ask`), `denial_message`, `id` | — |
//! | `ApprovalReviewer` | the harness's: `model`, `question`, `tools` (a list of names), `include_conversation`, `conversation_window`, `id` | — |
//! | `CompactRetryHistory` | `keep_last` (default 1), `tools` (a list of tool names) | `keep_last` |
//! | `ToolSearchBridge` | `enabled`: `auto`, `on`, `off`; `threshold_pct`, `search_default_limit`, `max_search_limit`, `core_tools`, `context_window` (or `true` / `"auto"` alone) | — |
//!
//! `ToolSearch` and `ToolSearchBridge` build the [`ToolSearch`](crate::search::ToolSearch) and
//! [`BridgeConfig`](crate::search::bridge::BridgeConfig) capabilities, which configure the
//! agent's tool search and bridge mode when it is built (one of each). A function cannot be
//! written as data: [`PrepareTools`](super::PrepareTools), [`PrepareOutputTools`](super::PrepareOutputTools)
//! and [`ProcessHistory`](super::ProcessHistory) entries name a function registered with the
//! registry; other capabilities made of functions ([`Hooks`](super::Hooks), your own) are
//! registered under a name of your own ([`CapabilityRegistry::register`],
//! [`CapabilityRegistry::register_capability`]).
//!
//! Errors name the offending entry by its path (`capabilities[2].PrefixTools.capability`): an
//! unknown name (with the known ones, and the closest one), arguments of the wrong shape, an
//! unknown or missing field.
//!
//! ```
//! use toolsmith::capability::{CapabilityRegistry, CapabilitySpec};
//! use toolsmith::prelude::*;
//!
//! /// Get the weather in a city.
//! #[tool]
//! fn get_weather(city: String) -> String { format!("Sunny in {city}") }
//!
//! # fn main() -> Result<(), UserError> {
//! let registry = CapabilityRegistry::new()
//!     .register_toolset("weather", FunctionToolset::new().with_tool(get_weather));
//! let spec = CapabilitySpec::from_json(r#"[
//!     {"PrefixTools": {"prefix": "wx", "capability": {"Toolset": "weather"}}},
//!     {"Thinking": "high"}
//! ]"#)?;
//! let agent = Agent::builder(TestModel::default()).capabilities_from_spec(&spec, &registry).build()?;
//! let result = agent.run("weather?").run_sync().map_err(|e| UserError::new(e.to_string()))?;
//! assert_eq!(result.output(), r#"{"wx_get_weather":"Sunny in a"}"#);
//!
//! let bad = CapabilitySpec::from_json(r#"[{"Thinkng": true}]"#)?;
//! let err = registry.load(&bad).unwrap_err();
//! assert!(err.message.contains("capabilities[0]: unknown capability 'Thinkng' (did you mean 'Thinking'?)"));
//! # Ok(())
//! # }
//! ```

mod builtins;
mod harness_entries;
mod native_entries;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::suggest::closest;
use serde_json::Value;

use super::{BoxedCapability, Capability};
use crate::error::UserError;
use crate::toolset::BoxedToolset;

/// A parsed capability spec: its entries, not yet built. Build it with
/// [`CapabilityRegistry::load`] or
/// [`AgentBuilder::capabilities_from_spec`](crate::AgentBuilder::capabilities_from_spec).
#[derive(Debug, Clone, PartialEq)]
pub struct CapabilitySpec {
    entries: Vec<Value>,
}

impl CapabilitySpec {
    /// From a JSON value: a list of entries, or `{"capabilities": [...]}`.
    pub fn from_value(value: Value) -> Result<Self, UserError> {
        let entries = match value {
            Value::Array(entries) => entries,
            Value::Object(mut map) => {
                if let Some(other) = map.keys().find(|k| k.as_str() != "capabilities") {
                    return Err(UserError::new(format!(
                        "capability spec: unknown key '{other}' at the top level: a spec is a list of capabilities, or a mapping with only the key `capabilities`"
                    )));
                }
                match map.remove("capabilities") {
                    Some(Value::Array(entries)) => entries,
                    Some(Value::Null) | None => Vec::new(),
                    Some(other) => {
                        return Err(UserError::new(format!(
                            "capability spec: `capabilities` must be a list of capabilities, got {}",
                            describe(&other)
                        )));
                    }
                }
            }
            Value::Null => Vec::new(),
            other => {
                return Err(UserError::new(format!(
                    "capability spec: expected a list of capabilities or a mapping with `capabilities`, got {}",
                    describe(&other)
                )));
            }
        };
        Ok(CapabilitySpec { entries })
    }

    /// From JSON text.
    pub fn from_json(text: &str) -> Result<Self, UserError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| UserError::new(format!("capability spec: invalid JSON: {e}")))?;
        Self::from_value(value)
    }

    /// From YAML text (feature `yaml`).
    ///
    /// ```
    /// use toolsmith::capability::CapabilitySpec;
    /// let spec = CapabilitySpec::from_yaml("capabilities:\n  - Thinking: high\n  - ReinjectSystemPrompt\n")?;
    /// assert_eq!(spec.entries().len(), 2);
    /// # Ok::<(), toolsmith::UserError>(())
    /// ```
    #[cfg(feature = "yaml")]
    pub fn from_yaml(text: &str) -> Result<Self, UserError> {
        let value: Value =
            serde_saphyr::from_str(text).map_err(|e| UserError::new(format!("capability spec: invalid YAML: {e}")))?;
        Self::from_value(value)
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[Value] {
        &self.entries
    }
}

/// An error while building one entry of a spec. [`SpecArgs`] makes them with the entry's path;
/// [`SpecError::new`] makes one the registry gives the path of the entry being built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    path: Option<String>,
    message: String,
}

impl SpecError {
    /// An error about the entry being built.
    pub fn new(message: impl Into<String>) -> Self {
        SpecError { path: None, message: message.into() }
    }

    fn at(path: &str, message: impl Into<String>) -> Self {
        SpecError { path: Some(path.to_string()), message: message.into() }
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SpecError {}

/// The arguments of one spec entry, given to a registered builder.
pub struct SpecArgs<'a, D> {
    name: &'a str,
    value: &'a Value,
    path: String,
    registry: &'a CapabilityRegistry<D>,
}

impl<'a, D: Clone + Send + Sync + 'static> SpecArgs<'a, D> {
    /// The capability name of the entry.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The raw arguments (`null` when the entry is a bare name).
    pub fn value(&self) -> &Value {
        self.value
    }

    /// The path of the entry in the spec (`capabilities[2].PrefixTools.capability`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// An error about this entry.
    pub fn error(&self, message: impl Into<String>) -> SpecError {
        SpecError::at(&self.path, message)
    }

    /// The named arguments deserialised into `T` (a bare name counts as no arguments). Use
    /// `#[serde(deny_unknown_fields)]` on `T` to reject misspelt fields.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, SpecError> {
        let value = match self.value {
            Value::Null => Value::Object(Default::default()),
            Value::Object(_) => self.value.clone(),
            other => {
                return Err(self.error(format!(
                    "{} takes named arguments (a mapping), got {}",
                    self.name,
                    describe(other)
                )));
            }
        };
        serde_json::from_value(value)
            .map_err(|e| self.error(format!("invalid arguments for {}: {e}{}", self.name, field_hint(&e))))
    }

    /// Like [`SpecArgs::parse`], with a main argument: an entry whose arguments are not a
    /// mapping (`{Thinking: high}`) is read as `{main: value}`.
    pub fn parse_with_main<T: DeserializeOwned>(&self, main: &str) -> Result<T, SpecError> {
        match self.value {
            Value::Null | Value::Object(_) => self.parse(),
            other => {
                let mut map = serde_json::Map::new();
                map.insert(main.to_string(), other.clone());
                serde_json::from_value(Value::Object(map))
                    .map_err(|e| self.error(format!("invalid arguments for {}: {e}{}", self.name, field_hint(&e))))
            }
        }
    }

    /// Builds a nested entry (the `capability` of `PrefixTools`, say) found under `field`.
    pub fn capability(&self, entry: &Value, field: &str) -> Result<BoxedCapability<D>, SpecError> {
        let path = format!("{}.{}.{field}", self.path, self.name);
        self.registry.build_entry(entry, &path)
    }

    /// The function capability of `kind` registered as `name` (see
    /// [`CapabilityRegistry::register_prepare_tools`]).
    fn function(&self, kind: &'static str, name: &str) -> Result<BoxedCapability<D>, SpecError> {
        if let Some(c) = self.registry.functions.get(&(kind, name.to_string())) {
            return Ok(c.clone());
        }
        let known: Vec<&str> =
            self.registry.functions.keys().filter(|(k, _)| *k == kind).map(|(_, n)| n.as_str()).collect();
        let register = match kind {
            "PrepareTools" => "register_prepare_tools",
            "PrepareOutputTools" => "register_prepare_output_tools",
            _ => "register_history_processor",
        };
        Err(self.error(if known.is_empty() {
            format!(
                "unknown {kind} function '{name}': no {kind} functions are registered; add it with `CapabilityRegistry::{register}(\"{name}\", {kind}::new(..))`"
            )
        } else {
            format!("unknown {kind} function '{name}'{}; registered: {}", closest(name, &known), known.join(", "))
        }))
    }

    /// The toolset registered under `name`.
    pub fn toolset(&self, name: &str) -> Result<BoxedToolset<D>, SpecError> {
        self.registry.toolsets.get(name).cloned().ok_or_else(|| {
            let known: Vec<&str> = self.registry.toolsets.keys().map(String::as_str).collect();
            self.error(if known.is_empty() {
                format!(
                    "unknown toolset '{name}': no toolsets are registered; add it with `CapabilityRegistry::register_toolset(\"{name}\", ...)`"
                )
            } else {
                format!("unknown toolset '{name}'{}; registered toolsets: {}", closest(name, &known), known.join(", "))
            })
        })
    }
}

type Builder<D> = Arc<dyn Fn(&SpecArgs<'_, D>) -> Result<BoxedCapability<D>, SpecError> + Send + Sync>;

/// What a spec built to: its capabilities, in order (a `ToolSearch` entry among them: the
/// agent reads it when it is built).
#[derive(Debug)]
#[non_exhaustive]
pub struct LoadedSpec<D> {
    /// The capabilities.
    pub capabilities: Vec<BoxedCapability<D>>,
}

/// The capability names a spec may use, and the toolsets `Toolset` entries refer to.
/// [`CapabilityRegistry::new`] knows the built-ins (see the [module](self) documentation);
/// register your own names, or replace a built-in, with [`register`](Self::register).
pub struct CapabilityRegistry<D> {
    entries: BTreeMap<String, Builder<D>>,
    toolsets: BTreeMap<String, BoxedToolset<D>>,
    /// Capabilities made of a function, by the capability's name (`PrepareTools`,
    /// `PrepareOutputTools`, `ProcessHistory`) and the function's registered name.
    functions: BTreeMap<(&'static str, String), BoxedCapability<D>>,
}

impl<D> Clone for CapabilityRegistry<D> {
    fn clone(&self) -> Self {
        CapabilityRegistry {
            entries: self.entries.clone(),
            toolsets: self.toolsets.clone(),
            functions: self.functions.clone(),
        }
    }
}

impl<D: Clone + Send + Sync + 'static> Default for CapabilityRegistry<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Clone + Send + Sync + 'static> CapabilityRegistry<D> {
    /// A registry of the built-in names.
    pub fn new() -> Self {
        harness_entries::register(native_entries::register(builtins::register(Self::empty())))
    }

    /// A registry without any name.
    pub fn empty() -> Self {
        CapabilityRegistry { entries: BTreeMap::new(), toolsets: BTreeMap::new(), functions: BTreeMap::new() }
    }

    /// Registers (or replaces) a name: `build` makes the capability from the entry's
    /// arguments, reporting bad ones with [`SpecArgs::error`] or [`SpecArgs::parse`].
    ///
    /// ```
    /// use serde::Deserialize;
    /// use toolsmith::capability::{BoxedCapability, CapabilityRegistry, CapabilitySpec, ProcessHistory};
    ///
    /// #[derive(Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct KeepLast { messages: usize }
    ///
    /// let registry = CapabilityRegistry::<()>::new().register("KeepLast", |args| {
    ///     let KeepLast { messages: n } = args.parse_with_main("messages")?;
    ///     Ok(BoxedCapability::new(ProcessHistory::new(move |_ctx, m| {
    ///         let skip = m.len().saturating_sub(n);
    ///         m.into_iter().skip(skip).collect()
    ///     })))
    /// });
    /// let spec = CapabilitySpec::from_json(r#"[{"KeepLast": 6}, {"KeepLast": {"mesages": 6}}]"#)?;
    /// let err = registry.load(&spec).unwrap_err();
    /// assert!(err.message.starts_with("capability spec: capabilities[1]: invalid arguments for KeepLast: unknown field `mesages`"));
    /// # Ok::<(), toolsmith::UserError>(())
    /// ```
    pub fn register<F>(mut self, name: impl Into<String>, build: F) -> Self
    where
        F: Fn(&SpecArgs<'_, D>) -> Result<BoxedCapability<D>, SpecError> + Send + Sync + 'static,
    {
        self.entries.insert(name.into(), Arc::new(build));
        self
    }

    /// Registers a name for one capability that takes no arguments (every entry with that name
    /// shares it).
    pub fn register_capability(self, name: impl Into<String>, capability: impl Capability<D>) -> Self {
        let capability = BoxedCapability::new(capability);
        self.register(name, move |args| match args.value() {
            Value::Null => Ok(capability.clone()),
            Value::Object(m) if m.is_empty() => Ok(capability.clone()),
            other => Err(args.error(format!("{} takes no arguments, got {}", args.name(), describe(other)))),
        })
    }

    /// Registers a toolset for `Toolset` entries (`{Toolset: name}`).
    pub fn register_toolset(mut self, name: impl Into<String>, toolset: impl crate::toolset::Toolset<D>) -> Self {
        self.toolsets.insert(name.into(), BoxedToolset::new(toolset));
        self
    }

    /// Registers a [`PrepareTools`](super::PrepareTools) under the name of its function, for
    /// `PrepareTools` entries (`{PrepareTools: name}`): a function cannot be written as data.
    ///
    /// ```
    /// use toolsmith::capability::{CapabilityRegistry, CapabilitySpec, PrepareTools, ProcessHistory};
    /// use toolsmith::prelude::*;
    ///
    /// # fn main() -> Result<(), UserError> {
    /// let registry = CapabilityRegistry::<()>::new()
    ///     .register_prepare_tools("hide_admin", PrepareTools::new(|_ctx, tools| {
    ///         tools.into_iter().filter(|t| !t.name.starts_with("admin_")).collect()
    ///     }))
    ///     .register_history_processor("last_ten", ProcessHistory::new(|_ctx, messages| {
    ///         let skip = messages.len().saturating_sub(10);
    ///         messages.into_iter().skip(skip).collect()
    ///     }));
    /// let spec = CapabilitySpec::from_json(r#"[{"PrepareTools": "hide_admin"}, {"ProcessHistory": "last_ten"}]"#)?;
    /// assert_eq!(registry.load(&spec)?.capabilities.len(), 2);
    ///
    /// let typo = CapabilitySpec::from_json(r#"[{"PrepareTools": "hide_admn"}]"#)?;
    /// let err = registry.load(&typo).unwrap_err();
    /// assert!(err.message.contains("unknown PrepareTools function 'hide_admn' (did you mean 'hide_admin'?)"), "{err}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn register_prepare_tools(self, name: impl Into<String>, capability: super::PrepareTools<D>) -> Self {
        self.with_function("PrepareTools", name.into(), BoxedCapability::new(capability))
    }

    /// Registers a [`PrepareOutputTools`](super::PrepareOutputTools) under the name of its
    /// function, for `PrepareOutputTools` entries (see [`register_prepare_tools`](Self::register_prepare_tools)).
    pub fn register_prepare_output_tools(
        self,
        name: impl Into<String>,
        capability: super::PrepareOutputTools<D>,
    ) -> Self {
        self.with_function("PrepareOutputTools", name.into(), BoxedCapability::new(capability))
    }

    /// Registers a [`ProcessHistory`](super::ProcessHistory) under the name of its function,
    /// for `ProcessHistory` entries (see [`register_prepare_tools`](Self::register_prepare_tools)).
    pub fn register_history_processor(self, name: impl Into<String>, capability: super::ProcessHistory<D>) -> Self {
        self.with_function("ProcessHistory", name.into(), BoxedCapability::new(capability))
    }

    fn with_function(mut self, kind: &'static str, name: String, capability: BoxedCapability<D>) -> Self {
        self.functions.insert((kind, name), capability);
        self
    }

    /// The registered capability names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Builds every entry of `spec`. The first bad entry is the error, with its path.
    pub fn load(&self, spec: &CapabilitySpec) -> Result<LoadedSpec<D>, UserError> {
        let mut loaded = LoadedSpec { capabilities: Vec::new() };
        let mut first_at: BTreeMap<&str, String> = BTreeMap::new();
        for (i, entry) in spec.entries.iter().enumerate() {
            let path = format!("capabilities[{i}]");
            let fail = |e: SpecError| UserError::new(format!("capability spec: {e}"));
            let (name, _) = split_entry(entry, &path).map_err(fail)?;
            // The agent takes one tool search and one bridge configuration.
            if matches!(name, "ToolSearch" | "ToolSearchBridge") {
                if let Some(first) = first_at.get(name) {
                    return Err(fail(SpecError::at(
                        &path,
                        format!("{name} appears twice (first at {first}): keep one"),
                    )));
                }
                first_at.insert(name, path.clone());
            }
            loaded.capabilities.push(self.build_entry(entry, &path).map_err(fail)?);
        }
        Ok(loaded)
    }

    fn build_entry(&self, entry: &Value, path: &str) -> Result<BoxedCapability<D>, SpecError> {
        let (name, value) = split_entry(entry, path)?;
        match self.entries.get(name) {
            Some(build) => {
                let args = SpecArgs { name, value, path: path.to_string(), registry: self };
                build(&args).map_err(|mut e| {
                    e.path.get_or_insert_with(|| path.to_string());
                    e
                })
            }
            None => Err(SpecError::at(path, self.unknown(name))),
        }
    }

    fn unknown(&self, name: &str) -> String {
        let known: Vec<&str> = self.names().collect();
        format!(
            "unknown capability '{name}'{}; known capabilities: {}. Register your own with `CapabilityRegistry::register`",
            closest(name, &known),
            known.join(", ")
        )
    }
}

/// `"Name"` or `{"Name": args}` -> (name, args).
fn split_entry<'v>(entry: &'v Value, path: &str) -> Result<(&'v str, &'v Value), SpecError> {
    static NULL: Value = Value::Null;
    match entry {
        Value::String(name) => Ok((name.as_str(), &NULL)),
        Value::Object(map) if map.len() == 1 => match map.iter().next() {
            Some((name, args)) => Ok((name.as_str(), args)),
            None => Err(SpecError::at(path, "empty entry")),
        },
        Value::Object(map) => Err(SpecError::at(
            path,
            format!(
                "an entry maps one capability name to its arguments, got {} keys ({}): write each capability as its own list item",
                map.len(),
                map.keys().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ")
            ),
        )),
        other => Err(SpecError::at(
            path,
            format!("expected a capability name or a mapping {{Name: arguments}}, got {}", describe(other)),
        )),
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "nothing".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(a) => format!("a list of {} item(s)", a.len()),
        Value::Object(_) => "a mapping".into(),
    }
}

/// For serde's "unknown field `x`, expected `a` or `b`": ` (did you mean 'a'?)` when a known
/// field is close to the misspelt one.
fn field_hint(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let Some(rest) = message.strip_prefix("unknown field `") else { return String::new() };
    let Some((field, expected)) = rest.split_once('`') else { return String::new() };
    // The expected names are the backquoted ones that follow.
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    closest(field, &known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_shapes() {
        assert_eq!(CapabilitySpec::from_json("[]").unwrap().entries().len(), 0);
        assert_eq!(CapabilitySpec::from_json(r#"{"capabilities": ["Thinking"]}"#).unwrap().entries().len(), 1);
        let err = CapabilitySpec::from_json(r#"{"model": "x", "capabilities": []}"#).unwrap_err();
        assert!(err.message.contains("unknown key 'model'"), "{}", err.message);
        let err = CapabilitySpec::from_json("3").unwrap_err();
        assert!(err.message.contains("got the number 3"), "{}", err.message);
        let err = CapabilitySpec::from_json("[").unwrap_err();
        assert!(err.message.starts_with("capability spec: invalid JSON"), "{}", err.message);
    }
}
