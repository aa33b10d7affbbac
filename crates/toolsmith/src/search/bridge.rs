//! PraisonAI's bridge mode: with many tools, the model sees three small tools instead of every
//! schema — `tool_search(query, limit)`, `tool_describe(tool_name)` and
//! `tool_call(tool_name, tool_args)` — and reaches the others through them.
//!
//! Which tools hide behind the bridge: tools marked deferrable (metadata `"deferrable": true`),
//! tools from MCP servers (metadata `"mcp"` present) and tools named `mcp_...`, never the core
//! tools (file, shell, web, scheduling, memory and clarify operations, or the set you give).
//! In `auto` mode the bridge opens only when the hidden tools' schemas would take more than
//! `threshold_pct` of the model's context window:
//!
//! - the schemas are counted in tokens as [`super::tokens`] counts them: exactly with
//!   the `tiktoken` cargo feature (`o200k_base` or `cl100k_base` by the model's name), else
//!   estimated at four bytes a token; once per set of deferrable tools, not per step;
//! - the window is the configuration's ([`BridgeConfig::context_window`]), else the agent's
//!   ([`AgentBuilder::context_window`](crate::AgentBuilder::context_window)), else the model's
//!   ([`Model::context_window`](crate::model::Model::context_window), by default its family's
//!   from [`ModelProfile`](crate::model::ModelProfile)). When none is known, 128,000
//!   ([`DEFAULT_CONTEXT_WINDOW`]) is assumed and a warning says so (once per agent, through
//!   `tracing`); [`BridgeConfig::decide`] reports every figure of the decision.
//!
//! `tool_call` runs the real tool through the ordinary path — validation, capabilities' hooks,
//! retries (counted under the real tool's name), timeouts, approval — and the result answers
//! the `tool_call` call.
//!
//! ```
//! use toolsmith::search::bridge::{BridgeConfig, BridgeMode};
//!
//! let on: BridgeConfig = "on".parse().unwrap();
//! assert_eq!(on.enabled, BridgeMode::On);
//! let auto: BridgeConfig = serde_json::from_str(r#"{"enabled": "auto", "threshold_pct": 15}"#).unwrap();
//! assert_eq!(auto.threshold_pct, 15.0);
//! let off = BridgeConfig::from(false);
//! assert_eq!(off.enabled, BridgeMode::Off);
//! ```

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Deserialize;
use serde_json::{Value, json};

use super::bm25::Bm25Index;
use super::tokens::{self, Encoding, TokenCount};
use crate::error::UserError;
use crate::model::ModelInfo;
use crate::tool::{Invocation, ModelRetry, ToolDefinition, ToolError, ToolOutput};

/// The bridge search tool's name.
pub const TOOL_SEARCH: &str = "tool_search";
/// The bridge describe tool's name.
pub const TOOL_DESCRIBE: &str = "tool_describe";
/// The bridge call tool's name.
pub const TOOL_CALL: &str = "tool_call";

/// Tools that never hide behind the bridge unless you give your own set.
pub const DEFAULT_CORE_TOOLS: &[&str] = &[
    "read_file",
    "write_file",
    "list_files",
    "get_file_info",
    "copy_file",
    "move_file",
    "delete_file",
    "execute_command",
    "list_processes",
    "kill_process",
    "get_system_info",
    "search_web",
    "web_search",
    "internet_search",
    "web_crawl",
    "crawl_web",
    "schedule_add",
    "schedule_list",
    "schedule_remove",
    "store_memory",
    "search_memory",
    "clarify",
];

/// The context window `auto` assumes when neither the configuration, the agent nor the model
/// gives one.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// When the bridge opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BridgeMode {
    /// When the deferrable schemas cross the threshold.
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

/// Bridge-mode configuration, accepted as a bool (`true` = auto), a string (`auto`, `on`,
/// `off`), a map or this struct.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BridgeConfig {
    /// When the bridge opens.
    pub enabled: BridgeMode,
    /// The share of the context window (in percent) the deferrable schemas must take for
    /// `auto` to open the bridge (default 10).
    pub threshold_pct: f64,
    /// Results of `tool_search` when the model gives no limit (default 5).
    pub search_default_limit: usize,
    /// The most results one `tool_search` returns (default 20).
    pub max_search_limit: usize,
    /// The tools that never hide (default: [`DEFAULT_CORE_TOOLS`]).
    pub core_tools: Option<BTreeSet<String>>,
    /// The context window to compare with, over the model's own.
    pub context_window: Option<u64>,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        BridgeConfig {
            enabled: BridgeMode::Auto,
            threshold_pct: 10.0,
            search_default_limit: 5,
            max_search_limit: 20,
            core_tools: None,
            context_window: None,
        }
    }
}

impl BridgeConfig {
    /// Auto mode with the defaults.
    pub fn auto() -> Self {
        Self::default()
    }

    /// Always on.
    pub fn on() -> Self {
        BridgeConfig { enabled: BridgeMode::On, ..Self::default() }
    }

    /// Sets the threshold (percent of the context window).
    pub fn threshold_pct(mut self, pct: f64) -> Self {
        self.threshold_pct = pct;
        self
    }

    /// Sets the core tools, which never hide.
    pub fn core_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.core_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the context window to compare with.
    pub fn context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    fn is_core(&self, name: &str) -> bool {
        match &self.core_tools {
            Some(set) => set.contains(name),
            None => DEFAULT_CORE_TOOLS.contains(&name),
        }
    }

    /// Whether this tool may hide behind the bridge.
    pub fn is_deferrable(&self, def: &ToolDefinition) -> bool {
        if self.is_core(&def.name) {
            return false;
        }
        let meta = def.metadata.as_ref();
        meta.and_then(|m| m.get("deferrable")).and_then(Value::as_bool) == Some(true)
            || meta.and_then(|m| m.get("mcp")).is_some()
            || def.name.starts_with("mcp_")
    }

    /// Whether the bridge opens for these deferrable tools and this context window (the
    /// model's, under the configuration's).
    pub fn opens(&self, deferrable: &[&ToolDefinition], model_window: Option<u64>) -> bool {
        let model = ModelInfo { context_window: model_window, ..ModelInfo::default() };
        self.decide(deferrable.iter().copied(), &model).open
    }

    /// How the bridge decides for these deferrable tools and this model, with every figure:
    /// the schemas' tokens (exact or estimated), the window and where it came from.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::ToolDefinition;
    /// use toolsmith::model::ModelInfo;
    /// use toolsmith::search::bridge::{BridgeConfig, WindowSource};
    ///
    /// let tool = ToolDefinition::new("mcp_query", json!({"type": "object"}));
    /// let decision = BridgeConfig::auto().decide([&tool], &ModelInfo::default());
    /// assert!(!decision.open);
    /// assert_eq!(decision.window_source, WindowSource::Assumed);
    /// assert!(decision.to_string().contains("no context window is known"));
    /// ```
    pub fn decide<'a>(
        &self,
        deferrable: impl IntoIterator<Item = &'a ToolDefinition>,
        model: &ModelInfo,
    ) -> BridgeDecision {
        let encoding = Encoding::for_model(&model.name);
        let defs: Vec<&ToolDefinition> = deferrable.into_iter().collect();
        let schema_tokens = match self.enabled {
            BridgeMode::Auto => tokens::schema_tokens(defs.iter().copied(), encoding),
            _ => TokenCount::default(),
        };
        self.decision(defs.len(), schema_tokens, encoding, model)
    }

    fn decision(
        &self,
        tools: usize,
        schema_tokens: TokenCount,
        encoding: Encoding,
        model: &ModelInfo,
    ) -> BridgeDecision {
        let (context_window, window_source) = match (self.context_window, model.context_window) {
            (Some(w), _) => (w, WindowSource::Config),
            (None, Some(w)) => (w, WindowSource::Model),
            (None, None) => (DEFAULT_CONTEXT_WINDOW, WindowSource::Assumed),
        };
        let threshold_tokens = context_window as f64 * self.threshold_pct / 100.0;
        let open = tools > 0
            && match self.enabled {
                BridgeMode::Off => false,
                BridgeMode::On => true,
                BridgeMode::Auto => schema_tokens.tokens as f64 > threshold_tokens,
            };
        BridgeDecision {
            open,
            mode: self.enabled,
            tools,
            schema_tokens,
            encoding,
            context_window,
            window_source,
            threshold_pct: self.threshold_pct,
            model: model.name.to_string(),
        }
    }
}

/// Where the context window of a bridge decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WindowSource {
    /// [`BridgeConfig::context_window`].
    Config,
    /// The agent's or the model's ([`ModelInfo::context_window`]).
    Model,
    /// None is known: [`DEFAULT_CONTEXT_WINDOW`] is assumed.
    Assumed,
}

/// Whether the bridge opens, and the figures it decided on ([`BridgeConfig::decide`]). Its
/// `Display` is a one-line report.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BridgeDecision {
    /// Whether the deferrable tools hide behind the bridge.
    pub open: bool,
    /// The mode decided in.
    pub mode: BridgeMode,
    /// How many deferrable tools there are.
    pub tools: usize,
    /// Their schemas' tokens (`auto` mode only; zero otherwise).
    pub schema_tokens: TokenCount,
    /// The vocabulary they were counted in.
    pub encoding: Encoding,
    /// The context window compared with.
    pub context_window: u64,
    /// Where that window came from.
    pub window_source: WindowSource,
    /// The share of the window (percent) the schemas must pass.
    pub threshold_pct: f64,
    /// The model's name.
    pub model: String,
}

impl fmt::Display for BridgeDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.open { "opens" } else { "stays closed" };
        match self.mode {
            BridgeMode::Auto => {}
            BridgeMode::On => {
                return write!(f, "bridge mode on: {} deferrable tools; the bridge {verdict}", self.tools);
            }
            BridgeMode::Off => return write!(f, "bridge mode off: the bridge {verdict}"),
        }
        let counted = if self.schema_tokens.exact {
            format!("counted exactly in {}", self.encoding)
        } else {
            "estimated at 4 bytes a token; the `tiktoken` feature counts exactly".to_string()
        };
        write!(
            f,
            "bridge mode auto: {} deferrable tools take {} schema tokens ({counted}) against {}% of a {}-token context window",
            self.tools, self.schema_tokens.tokens, self.threshold_pct, self.context_window
        )?;
        match self.window_source {
            WindowSource::Config => write!(f, " (from BridgeConfig::context_window)")?,
            WindowSource::Model => write!(f, " (the model's)")?,
            WindowSource::Assumed => write!(
                f,
                " (assumed: no context window is known for model '{}'; set one with AgentBuilder::context_window or BridgeConfig::context_window)",
                self.model
            )?,
        }
        write!(f, "; the bridge {verdict}")
    }
}

impl From<bool> for BridgeConfig {
    fn from(on: bool) -> Self {
        BridgeConfig { enabled: if on { BridgeMode::Auto } else { BridgeMode::Off }, ..Self::default() }
    }
}

impl FromStr for BridgeConfig {
    type Err = UserError;

    fn from_str(s: &str) -> Result<Self, UserError> {
        let enabled = match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "true" => BridgeMode::Auto,
            "on" | "always" => BridgeMode::On,
            "off" | "false" => BridgeMode::Off,
            other => {
                return Err(UserError::new(format!("tool search mode '{other}' is not one of auto, on, off")));
            }
        };
        Ok(BridgeConfig { enabled, ..Self::default() })
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Input {
    Bool(bool),
    Text(String),
    Map {
        #[serde(default)]
        enabled: Option<EnabledInput>,
        #[serde(default)]
        threshold_pct: Option<f64>,
        #[serde(default)]
        search_default_limit: Option<usize>,
        #[serde(default)]
        max_search_limit: Option<usize>,
        #[serde(default)]
        core_tools: Option<BTreeSet<String>>,
        #[serde(default)]
        context_window: Option<u64>,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum EnabledInput {
    Bool(bool),
    Text(String),
}

/// The keys of a configuration given as a mapping.
const KEYS: [&str; 6] =
    ["enabled", "threshold_pct", "search_default_limit", "max_search_limit", "core_tools", "context_window"];

impl<'de> Deserialize<'de> for BridgeConfig {
    fn deserialize<De: serde::Deserializer<'de>>(d: De) -> Result<Self, De::Error> {
        use serde::de::Error;
        // A misspelt key is an error naming the closest known one, not a setting silently left out.
        let value = Value::deserialize(d)?;
        if let Value::Object(map) = &value
            && let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str()))
        {
            return Err(De::Error::custom(format!(
                "unknown key '{unknown}' in the tool search configuration{}; the keys are: {}",
                crate::suggest::closest(unknown, &KEYS),
                KEYS.join(", ")
            )));
        }
        match Input::deserialize(value).map_err(De::Error::custom)? {
            Input::Bool(b) => Ok(b.into()),
            Input::Text(t) => t.parse().map_err(|e: UserError| De::Error::custom(e.message)),
            Input::Map {
                enabled,
                threshold_pct,
                search_default_limit,
                max_search_limit,
                core_tools,
                context_window,
            } => {
                let mut c = match enabled {
                    None => BridgeConfig::default(),
                    Some(EnabledInput::Bool(b)) => b.into(),
                    Some(EnabledInput::Text(t)) => t.parse().map_err(|e: UserError| De::Error::custom(e.message))?,
                };
                if let Some(v) = threshold_pct {
                    c.threshold_pct = v;
                }
                if let Some(v) = search_default_limit {
                    c.search_default_limit = v;
                }
                if let Some(v) = max_search_limit {
                    c.max_search_limit = v;
                }
                c.core_tools = core_tools;
                c.context_window = context_window;
                Ok(c)
            }
        }
    }
}

/// A tool as an OpenAI-style function schema (what `tool_describe` returns).
pub fn function_schema(def: &ToolDefinition) -> Value {
    json!({"type": "function", "function": {
        "name": def.name,
        "description": def.description.clone().unwrap_or_default(),
        "parameters": &*def.parameters_json_schema,
    }})
}

/// The three bridge tools' definitions.
pub fn bridge_definitions(config: &BridgeConfig) -> [ToolDefinition; 3] {
    [
        ToolDefinition::new(
            TOOL_SEARCH,
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "What you want to do, in a few words (e.g. 'create github issue')."},
                "limit": {"type": "integer", "description": format!("How many tools to return (default {}, at most {}).", config.search_default_limit, config.max_search_limit)}
            }, "required": ["query"], "additionalProperties": false}),
        )
        .with_description("Find tools that are not listed, by what they do. Returns their names and descriptions; call tool_describe for a tool's parameters, then tool_call to run it."),
        ToolDefinition::new(
            TOOL_DESCRIBE,
            json!({"type": "object", "properties": {
                "tool_name": {"type": "string", "description": "A name returned by tool_search."}
            }, "required": ["tool_name"], "additionalProperties": false}),
        )
        .with_description("Show the full schema of a tool found with tool_search, so that you can call it with tool_call."),
        ToolDefinition::new(
            TOOL_CALL,
            json!({"type": "object", "properties": {
                "tool_name": {"type": "string", "description": "The tool to run."},
                "tool_args": {"type": "object", "description": "Its arguments, as its schema describes them.", "additionalProperties": true}
            }, "required": ["tool_name", "tool_args"], "additionalProperties": false}),
        )
        .with_description("Run a tool found with tool_search, with arguments that follow the schema tool_describe showed."),
    ]
}

/// The deferrable tools of a step, with what is derived from them once per set of tools: their
/// schemas' tokens (per vocabulary) and the search index.
#[derive(Debug)]
pub(crate) struct BridgeCatalogue {
    defs: Vec<ToolDefinition>,
    index: OnceLock<Bm25Index>,
    o200k: OnceLock<TokenCount>,
    cl100k: OnceLock<TokenCount>,
}

impl BridgeCatalogue {
    fn matches(&self, defs: &[&ToolDefinition]) -> bool {
        self.defs.len() == defs.len()
            && self.defs.iter().zip(defs).all(|(a, b)| {
                a.name == b.name
                    && a.description == b.description
                    && (Arc::ptr_eq(&a.parameters_json_schema, &b.parameters_json_schema)
                        || a.parameters_json_schema == b.parameters_json_schema)
            })
    }

    fn find(&self, name: &str) -> Option<&ToolDefinition> {
        self.defs.iter().find(|d| d.name == name)
    }

    fn index(&self) -> &Bm25Index {
        self.index.get_or_init(|| Bm25Index::build(self.defs.iter()))
    }

    fn schema_tokens(&self, encoding: Encoding) -> TokenCount {
        let slot = match encoding {
            Encoding::Cl100kBase => &self.cl100k,
            _ => &self.o200k,
        };
        *slot.get_or_init(|| tokens::schema_tokens(&self.defs, encoding))
    }
}

/// The bridge catalogue cache of an agent.
#[derive(Debug, Default)]
pub(crate) struct BridgeCache {
    slot: Mutex<Option<Arc<BridgeCatalogue>>>,
    /// Whether the warning that no context window is known was given.
    warned: AtomicBool,
}

impl BridgeCache {
    fn get(&self, defs: &[&ToolDefinition]) -> Arc<BridgeCatalogue> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = slot.as_ref()
            && c.matches(defs)
        {
            return c.clone();
        }
        let c = Arc::new(BridgeCatalogue {
            defs: defs.iter().map(|d| (*d).clone()).collect(),
            index: OnceLock::new(),
            o200k: OnceLock::new(),
            cl100k: OnceLock::new(),
        });
        *slot = Some(c.clone());
        c
    }

    /// The catalogue of these deferrable tools when the bridge opens for them, `None` when it
    /// stays closed. In `auto` mode without a known context window, warns once.
    pub(crate) fn open(
        &self,
        config: &BridgeConfig,
        deferrable: &[&ToolDefinition],
        model: &ModelInfo,
    ) -> Option<Arc<BridgeCatalogue>> {
        if deferrable.is_empty() || config.enabled == BridgeMode::Off {
            return None;
        }
        let catalogue = self.get(deferrable);
        if config.enabled == BridgeMode::Auto {
            let encoding = Encoding::for_model(&model.name);
            let decision = config.decision(deferrable.len(), catalogue.schema_tokens(encoding), encoding, model);
            if decision.window_source == WindowSource::Assumed && !self.warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(target: "toolsmith::bridge", "{decision}");
            }
            if !decision.open {
                return None;
            }
        }
        Some(catalogue)
    }
}

/// The handler of `tool_search` and `tool_describe` (and of `tool_call` for a tool that does
/// not exist: real calls are rewritten by the engine before they get here).
pub(crate) fn bridge_invocation(
    config: &BridgeConfig,
    catalogue: &BridgeCatalogue,
    tool: &str,
    args: &Value,
) -> Invocation {
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    Invocation::Ready(match tool {
        TOOL_SEARCH => {
            let query = text("query");
            if query.trim().is_empty() {
                Err(ToolError::Retry(ModelRetry::new("Give a query: a few words about what you want to do.")))
            } else {
                let limit = args
                    .get("limit")
                    .and_then(Value::as_u64)
                    .map(|l| l as usize)
                    .unwrap_or(config.search_default_limit)
                    .clamp(1, config.max_search_limit.max(1));
                let hits = catalogue.index().search(&query, limit);
                let tools: Vec<Value> = hits
                    .iter()
                    .map(|(doc, _)| {
                        let d = &catalogue.defs[*doc as usize];
                        json!({"name": d.name, "description": d.description.clone().unwrap_or_default()})
                    })
                    .collect();
                if tools.is_empty() {
                    Ok(ToolOutput::Value(json!({"tools": [], "message": "No matching tools. Try other words."})))
                } else {
                    Ok(ToolOutput::Value(json!({"tools": tools})))
                }
            }
        }
        TOOL_DESCRIBE => match catalogue.find(&text("tool_name")) {
            Some(def) => Ok(ToolOutput::Value(function_schema(def))),
            None => Err(ToolError::Retry(ModelRetry::new(format!(
                "There is no tool named '{}': use tool_search to find one.",
                text("tool_name")
            )))),
        },
        _ => Err(ToolError::Retry(ModelRetry::new(format!(
            "There is no tool named '{}': use tool_search to find one, then tool_describe to see its parameters.",
            text("tool_name")
        )))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, meta: Option<Value>) -> ToolDefinition {
        let mut d = ToolDefinition::new(name, json!({"type": "object", "properties": {}}));
        d.metadata = meta;
        d
    }

    #[test]
    fn deferrable_tools_are_marked_mcp_or_prefixed_and_never_core() {
        let c = BridgeConfig::default();
        assert!(c.is_deferrable(&def("mcp_github_search", None)));
        assert!(c.is_deferrable(&def("search", Some(json!({"deferrable": true})))));
        assert!(c.is_deferrable(&def("list_issues", Some(json!({"mcp": {"server": "github"}})))));
        assert!(!c.is_deferrable(&def("add", None)));
        assert!(!c.is_deferrable(&def("read_file", Some(json!({"deferrable": true})))));
        let custom = BridgeConfig::default().core_tools(["mcp_keep"]);
        assert!(!custom.is_deferrable(&def("mcp_keep", None)));
        assert!(custom.is_deferrable(&def("read_file", Some(json!({"deferrable": true})))));
    }

    #[test]
    fn auto_opens_past_the_threshold_of_the_window() {
        let d = def("mcp_big", None);
        let tokens = tokens::schema_tokens([&d], Encoding::O200kBase).tokens;
        let c = BridgeConfig::default().context_window(tokens * 10);
        assert!(!c.opens(&[&d], None), "exactly 10% does not open");
        let c = BridgeConfig::default().context_window(tokens * 10 - 10);
        assert!(c.opens(&[&d], None));
        assert!(BridgeConfig::on().opens(&[&d], None));
        assert!(!BridgeConfig::from(false).opens(&[&d], None));
        assert!(!BridgeConfig::default().opens(&[&d], Some(1_000_000)));
        assert!(!BridgeConfig::on().opens(&[], None), "nothing to hide");
    }

    fn model(name: &str, window: Option<u64>) -> ModelInfo {
        ModelInfo { name: Arc::from(name), context_window: window, ..ModelInfo::default() }
    }

    /// 200 deferrable tools of 46 o200k tokens each (50 estimated): 9,200 tokens exactly, 10,000
    /// estimated; 10% of a 96,000-token window is 9,600, so the two counts decide differently.
    #[test]
    fn auto_compares_exact_or_estimated_tokens_with_the_models_window() {
        let tools: Vec<ToolDefinition> = (0..200)
            .map(|i| {
                ToolDefinition::new(
                    format!("mcp_weather_{i:03}"),
                    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
                )
                .with_description("Get the current weather of a city.")
            })
            .collect();
        let per_tool = tokens::schema_tokens([&tools[0]], Encoding::O200kBase);
        let decision = BridgeConfig::auto().decide(&tools, &model("gpt-4o", Some(96_000)));
        assert_eq!(decision.window_source, WindowSource::Model);
        assert_eq!(decision.context_window, 96_000);
        assert_eq!(decision.encoding, Encoding::O200kBase);
        assert_eq!(decision.schema_tokens.tokens, per_tool.tokens * 200);
        if cfg!(feature = "tiktoken") {
            assert_eq!(per_tool, TokenCount { tokens: 46, exact: true });
            assert!(!decision.open, "{decision}");
            assert!(decision.to_string().contains("counted exactly in o200k_base"), "{decision}");
        } else {
            assert_eq!(per_tool, TokenCount { tokens: 50, exact: false });
            assert!(decision.open, "{decision}");
            assert!(decision.to_string().contains("estimated at 4 bytes a token"), "{decision}");
        }
    }

    #[test]
    fn auto_says_when_no_window_is_known() {
        let d = def("mcp_big", None);
        let decision = BridgeConfig::auto().decide([&d], &model("my-local-model", None));
        assert_eq!((decision.window_source, decision.context_window), (WindowSource::Assumed, DEFAULT_CONTEXT_WINDOW));
        let report = decision.to_string();
        assert!(report.contains("no context window is known for model 'my-local-model'"), "{report}");
        assert!(report.contains("AgentBuilder::context_window"), "{report}");
        let configured = BridgeConfig::auto().context_window(1_000).decide([&d], &model("gpt-4o", Some(128_000)));
        assert_eq!((configured.window_source, configured.context_window), (WindowSource::Config, 1_000));
    }

    #[test]
    fn every_accepted_form_parses() {
        for (text, mode) in [
            ("true", BridgeMode::Auto),
            ("false", BridgeMode::Off),
            (r#""on""#, BridgeMode::On),
            (r#"{"enabled": false}"#, BridgeMode::Off),
            (r#"{"enabled": "on", "max_search_limit": 3}"#, BridgeMode::On),
        ] {
            let c: BridgeConfig = serde_json::from_str(text).unwrap();
            assert_eq!(c.enabled, mode, "{text}");
        }
        assert!(serde_json::from_str::<BridgeConfig>(r#""sometimes""#).is_err());
        let err = serde_json::from_str::<BridgeConfig>(r#"{"enabled": "on", "treshold_pct": 5}"#).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "unknown key 'treshold_pct' in the tool search configuration (did you mean 'threshold_pct'?)"
            ),
            "{err}"
        );
    }
}
