//! [`ToolOutputLimits`] from a spec's arguments, with the harness's names.

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{Action, Band, FileStore, Serializer, Spill, Summarize, ToolOutputLimits, Truncate, TruncationStrategy};
use crate::toolset::ToolSelector;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default)]
    bands: Option<Vec<BandArgs>>,
    #[serde(default)]
    per_tool: HashMap<String, Vec<BandArgs>>,
    #[serde(default)]
    tool_filter: Option<Value>,
    #[serde(default)]
    over_tokens: bool,
    #[serde(default)]
    strip_ansi: bool,
    #[serde(default)]
    summary_prompt: Option<String>,
    #[serde(default)]
    serializer: Option<SerializerArg>,
    #[serde(default)]
    store: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BandArgs {
    over: usize,
    action: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum SerializerArg {
    IndentedJson,
    JsonLines,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TruncateArgs {
    #[serde(default)]
    strategy: Option<TruncationStrategy>,
    #[serde(default)]
    max_chars: Option<usize>,
    #[serde(default)]
    keep_tail_lines: usize,
    #[serde(default)]
    then: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SpillArgs {
    #[serde(default)]
    preview_chars: Option<usize>,
    #[serde(default)]
    then: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SummarizeArgs {
    function: String,
    #[serde(default)]
    then: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileStoreArgs {
    #[serde(default)]
    base_dir: Option<String>,
    /// Seconds.
    #[serde(default)]
    cleanup_after: Option<f64>,
}

fn parse<T: for<'de> Deserialize<'de> + Default>(v: &Value, what: &str) -> Result<T, String> {
    match v {
        Value::Null => Ok(T::default()),
        other => serde_json::from_value(other.clone()).map_err(|e| format!("{what}: {e}")),
    }
}

fn action(v: &Value, summarizers: &HashMap<String, Summarize>) -> Result<Action, String> {
    let (kind, args) = match v {
        Value::String(kind) => (kind.as_str(), &Value::Null),
        Value::Object(map) if map.len() == 1 => map.iter().next().map(|(k, v)| (k.as_str(), v)).unwrap_or(("", v)),
        other => {
            return Err(format!(
                "an action is `Truncate`, `Spill`, `Summarize` or `Passthrough` (alone or with its arguments), got {other}"
            ));
        }
    };
    let then = |t: &Option<Value>| t.as_ref().map(|t| action(t, summarizers)).transpose();
    Ok(match kind {
        "Passthrough" => Action::Passthrough,
        "Truncate" => {
            let a: TruncateArgs = parse(args, "Truncate")?;
            let mut t = Truncate::new().keep_tail_lines(a.keep_tail_lines);
            if let Some(s) = a.strategy {
                t = t.strategy(s);
            }
            if let Some(m) = a.max_chars {
                t = t.max_chars(m);
            }
            t.then = then(&a.then)?.map(Box::new);
            Action::Truncate(t)
        }
        "Spill" => {
            let a: SpillArgs = parse(args, "Spill")?;
            let mut s = Spill::new();
            if let Some(p) = a.preview_chars {
                s = s.preview_chars(p);
            }
            s.then = then(&a.then)?.map(Box::new);
            Action::Spill(s)
        }
        "Summarize" => {
            let a: SummarizeArgs = parse(args, "Summarize").and_then(|a: SummarizeArgs| {
                if a.function.is_empty() {
                    Err("Summarize needs `function`, a registered summariser".into())
                } else {
                    Ok(a)
                }
            })?;
            let Some(s) = summarizers.get(&a.function) else {
                let mut known: Vec<&str> = summarizers.keys().map(String::as_str).collect();
                known.sort_unstable();
                return Err(format!(
                    "unknown summariser '{}' (registered: {}); register ToolOutputLimits with ToolOutputLimits::from_spec_with",
                    a.function,
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ));
            };
            let mut s = s.clone();
            s.then = then(&a.then)?.map(Box::new);
            Action::Summarize(s)
        }
        other => return Err(format!("unknown action '{other}': `Truncate`, `Spill`, `Summarize` or `Passthrough`")),
    })
}

fn bands(list: Vec<BandArgs>, summarizers: &HashMap<String, Summarize>) -> Result<Vec<Band>, String> {
    list.into_iter().map(|b| Ok(Band::new(b.over, action(&b.action, summarizers)?))).collect()
}

impl<D: Clone + Send + Sync + 'static> ToolOutputLimits<D> {
    /// From a spec's arguments (the harness's names): `bands` (a list of `{over, action}`),
    /// `per_tool` (tool name -> bands), `tool_filter`, `over_tokens`, `strip_ansi`,
    /// `summary_prompt`, `serializer` (`indented_json`, `json_lines`) and `store` (`memory`, or
    /// `{LocalFileStore: {base_dir, cleanup_after}}` with seconds). An action is `Truncate`,
    /// `Spill`, `Passthrough` or `Summarize`, alone or as a mapping of its arguments (`strategy`,
    /// `max_chars`, `keep_tail_lines`, `preview_chars`, `then`); `Summarize` takes `function`, a
    /// name from `summarizers`.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use toolsmith::capability::tool_output_limits::ToolOutputLimits;
    ///
    /// let spec = serde_json::json!({
    ///     "bands": [{"over": 5000, "action": {"Truncate": {"strategy": "tail", "max_chars": 2000}}}],
    ///     "tool_filter": ["run_shell"]
    /// });
    /// let limits = ToolOutputLimits::<()>::from_spec_with(&spec, &HashMap::new()).unwrap();
    /// # let _ = limits;
    /// ```
    pub fn from_spec_with(args: &Value, summarizers: &HashMap<String, Summarize>) -> Result<Self, String> {
        let args = if args.is_null() { Value::Object(Default::default()) } else { args.clone() };
        let a: Args =
            serde_json::from_value(args).map_err(|e| format!("invalid arguments for ToolOutputLimits: {e}"))?;
        let mut limits = ToolOutputLimits::new().over_tokens(a.over_tokens).strip_ansi(a.strip_ansi);
        if let Some(b) = a.bands {
            limits = limits.bands(bands(b, summarizers)?);
        }
        for (tool, b) in a.per_tool {
            limits = limits.per_tool(tool, bands(b, summarizers)?);
        }
        if let Some(sel) = a.tool_filter {
            limits = limits.tool_filter(selector(&sel)?);
        }
        if let Some(p) = a.summary_prompt {
            if !p.contains("{tool_name}") || !p.contains("{output}") {
                return Err("summary_prompt must contain both {tool_name} and {output}".into());
            }
            super::py_format(&p, &[("tool_name", ""), ("output", "")]).map_err(|e| format!("summary_prompt: {e}"))?;
            limits = limits.summary_prompt(p);
        }
        match a.serializer {
            Some(SerializerArg::IndentedJson) => limits = limits.serializer(Serializer::IndentedJson),
            Some(SerializerArg::JsonLines) => limits = limits.serializer(Serializer::JsonLines),
            None => {}
        }
        match a.store {
            None => {}
            Some(Value::String(s)) if s == "memory" => {}
            Some(Value::Object(map)) if map.len() == 1 && map.contains_key("LocalFileStore") => {
                let f: FileStoreArgs = parse(&map["LocalFileStore"], "LocalFileStore")?;
                let mut store = f.base_dir.map(FileStore::new).unwrap_or_default();
                if let Some(secs) = f.cleanup_after {
                    let age = Duration::try_from_secs_f64(secs).map_err(|e| format!("cleanup_after: {e}"))?;
                    store = store.cleanup_after(age);
                }
                limits = limits.store(store);
            }
            Some(other) => {
                return Err(format!("`store` is `memory` or `{{LocalFileStore: {{base_dir}}}}`, got {other}"));
            }
        }
        Ok(limits)
    }
}

/// A `tool_filter`: `all`, a list of names, or a mapping of metadata pairs.
pub(crate) fn selector<D>(v: &Value) -> Result<ToolSelector<D>, String> {
    match v {
        Value::String(s) if s == "all" => Ok(ToolSelector::All),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            Ok(ToolSelector::names(items.iter().filter_map(Value::as_str).map(String::from).collect::<Vec<_>>()))
        }
        Value::Object(pairs) => Ok(ToolSelector::Metadata(pairs.clone())),
        other => Err(format!("a tool selector is \"all\", a list of tool names or a mapping of metadata, got {other}")),
    }
}
