//! The built-in names of [`CapabilityRegistry::new`] and their arguments.

use serde::Deserialize;
use serde_json::Value;

use super::{CapabilityRegistry, SpecError, describe, field_hint};
use crate::capability::{
    BoxedCapability, IncludeToolReturnSchemas, Instrumentation, InstrumentationSettings, PrefixTools,
    ReinjectSystemPrompt, SetToolMetadata, Thinking, ThinkingEffort, ThinkingFormat, ThreadExecutor, Toolset,
};
use crate::search::bridge::BridgeConfig;
use crate::search::{SearchStrategy, ToolSearch};
use crate::toolset::ToolSelector;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsetArgs {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PrefixArgs {
    prefix: String,
    capability: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReturnSchemaArgs {
    #[serde(default)]
    tools: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReinjectArgs {
    #[serde(default)]
    replace_existing: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum FormatArg {
    Auto,
    Anthropic,
    Gemini,
    #[serde(rename = "openai_chat")]
    OpenAIChat,
    #[serde(rename = "openai_responses")]
    OpenAIResponses,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThinkingArgs {
    #[serde(default)]
    effort: Option<ThinkingEffort>,
    #[serde(default)]
    format: Option<FormatArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionArgs {
    function: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadArgs {
    max_threads: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum StrategyArg {
    Keywords,
    /// The provider's BM25 (Anthropic's), as in Pydantic AI.
    Bm25,
    /// The provider's regex search (Anthropic's), as in Pydantic AI.
    Regex,
    /// toolsmith's own BM25.
    LocalBm25,
    /// toolsmith's own regex search.
    LocalRegex,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSearchArgs {
    #[serde(default)]
    strategy: Option<StrategyArg>,
    #[serde(default)]
    max_results: Option<usize>,
    #[serde(default)]
    tool_description: Option<String>,
    #[serde(default)]
    parameter_description: Option<String>,
}

/// A `tools` selector of a spec: `all`, a list of tool names, or a mapping of metadata pairs the
/// selected tools' metadata includes.
fn selector<D>(v: &Value) -> Result<ToolSelector<D>, String> {
    match v {
        Value::String(s) if s == "all" => Ok(ToolSelector::All),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            Ok(ToolSelector::names(items.iter().filter_map(Value::as_str).map(String::from).collect::<Vec<_>>()))
        }
        Value::Object(pairs) => Ok(ToolSelector::Metadata(pairs.clone())),
        other => Err(format!(
            "`tools` must be \"all\", a list of tool names or a mapping of metadata to match, got {}",
            describe(other)
        )),
    }
}

/// `registry` with every built-in name.
pub(super) fn register<D: Clone + Send + Sync + 'static>(registry: CapabilityRegistry<D>) -> CapabilityRegistry<D> {
    registry
        .register("Toolset", |args| {
            let a: ToolsetArgs = args.parse_with_main("name")?;
            Ok(BoxedCapability::new(Toolset::new(args.toolset(&a.name)?)))
        })
        .register("PrefixTools", |args| {
            let a: PrefixArgs = args.parse()?;
            let inner = args.capability(&a.capability, "capability")?;
            Ok(BoxedCapability::new(PrefixTools::new(a.prefix, inner)))
        })
        .register("SetToolMetadata", |args| match args.value() {
            // `tools` selects the tools (every other key is metadata), as in Pydantic AI.
            Value::Object(map) => {
                let mut metadata = map.clone();
                let tools = match metadata.remove("tools") {
                    None => ToolSelector::All,
                    Some(t) => selector(&t).map_err(|e| args.error(format!("SetToolMetadata: {e}")))?,
                };
                Ok(BoxedCapability::new(SetToolMetadata::new(Value::Object(metadata)).for_tools(tools)))
            }
            Value::Null => Ok(BoxedCapability::new(SetToolMetadata::<D>::new(Value::Object(Default::default())))),
            other => Err(args.error(format!(
                "SetToolMetadata takes the metadata as a mapping (e.g. {{SetToolMetadata: {{team: search}}}}), got {}",
                describe(other)
            ))),
        })
        .register("IncludeToolReturnSchemas", |args| {
            let a: ReturnSchemaArgs = args.parse_with_main("tools")?;
            let tools = match a.tools {
                None | Some(Value::Null) => ToolSelector::All,
                Some(t) => selector(&t).map_err(|e| args.error(format!("IncludeToolReturnSchemas: {e}")))?,
            };
            Ok(BoxedCapability::new(IncludeToolReturnSchemas::for_tools(tools)))
        })
        .register("ReinjectSystemPrompt", |args| {
            let a: ReinjectArgs = args.parse_with_main("replace_existing")?;
            Ok(BoxedCapability::new(ReinjectSystemPrompt::new().replace_existing(a.replace_existing)))
        })
        .register("Thinking", |args| {
            let a: ThinkingArgs = args.parse_with_main("effort")?;
            let format = match a.format.unwrap_or(FormatArg::Auto) {
                FormatArg::Auto => ThinkingFormat::Auto,
                FormatArg::Anthropic => ThinkingFormat::Anthropic,
                FormatArg::Gemini => ThinkingFormat::Gemini,
                FormatArg::OpenAIChat => ThinkingFormat::OpenAIChat,
                FormatArg::OpenAIResponses => ThinkingFormat::OpenAIResponses,
            };
            Ok(BoxedCapability::new(Thinking::new(a.effort.unwrap_or_default()).format(format)))
        })
        .register("Instrumentation", |args| {
            // `event_mode` (Pydantic AI's older option): `attributes` or `logs`.
            let settings: InstrumentationSettings = args.parse()?;
            Ok(BoxedCapability::new(Instrumentation::new(settings)))
        })
        .register("PrepareTools", |args| {
            let a: FunctionArgs = args.parse_with_main("function")?;
            args.function("PrepareTools", &a.function)
        })
        .register("PrepareOutputTools", |args| {
            let a: FunctionArgs = args.parse_with_main("function")?;
            args.function("PrepareOutputTools", &a.function)
        })
        .register("ProcessHistory", |args| {
            let a: FunctionArgs = args.parse_with_main("function")?;
            args.function("ProcessHistory", &a.function)
        })
        .register("ThreadExecutor", |args| {
            let a: ThreadArgs = args.parse_with_main("max_threads")?;
            if a.max_threads == 0 {
                return Err(args.error("max_threads must be at least 1"));
            }
            Ok(BoxedCapability::new(ThreadExecutor::new(a.max_threads)))
        })
        .register("ToolSearch", |args| Ok(BoxedCapability::new(tool_search(args.value(), args.path())?)))
        .register("ToolSearchBridge", |args| {
            let config: BridgeConfig = serde_json::from_value(args.value().clone())
                .map_err(|e| args.error(format!("invalid arguments for ToolSearchBridge: {e}")))?;
            Ok(BoxedCapability::new(config))
        })
}

/// The tool search configuration of a `ToolSearch` entry.
pub(super) fn tool_search(args: &Value, path: &str) -> Result<ToolSearch, SpecError> {
    let value = match args {
        Value::Null => Value::Object(Default::default()),
        Value::Object(_) => args.clone(),
        other => {
            return Err(SpecError::at(
                path,
                format!("ToolSearch takes named arguments (a mapping), got {}", describe(other)),
            ));
        }
    };
    let a: ToolSearchArgs = serde_json::from_value(value)
        .map_err(|e| SpecError::at(path, format!("invalid arguments for ToolSearch: {e}{}", field_hint(&e))))?;
    let mut config = ToolSearch::new();
    match a.strategy {
        None => {}
        Some(StrategyArg::Keywords) => config = config.strategy(SearchStrategy::Keywords),
        Some(StrategyArg::Bm25) => config = config.strategy(SearchStrategy::NativeBm25),
        Some(StrategyArg::Regex) => config = config.strategy(SearchStrategy::NativeRegex),
        Some(StrategyArg::LocalBm25) => config = config.strategy(SearchStrategy::Bm25),
        Some(StrategyArg::LocalRegex) => config = config.strategy(SearchStrategy::Regex),
    }
    if let Some(n) = a.max_results {
        if n == 0 {
            return Err(SpecError::at(path, "ToolSearch: max_results must be at least 1"));
        }
        config = config.max_results(n);
    }
    if let Some(d) = a.tool_description {
        config = config.tool_description(d);
    }
    if let Some(d) = a.parameter_description {
        config = config.parameter_description(d);
    }
    Ok(config)
}
