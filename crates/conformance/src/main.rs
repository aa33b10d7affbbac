//! `conformance SCENARIO.json`: runs a conformance scenario (see `shared/conformance/SCENARIOS.md`)
//! on toolsmith and prints the normalised result, to be compared with Pydantic AI's.

mod catalogue;
mod hooklog;
mod model;
mod normalise;
mod pystr;

use model::{Recorder, Records, Scripted};

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use toolsmith::agent::{AgentBuilder, Deferrable, EndStrategy, ParallelMode, RunRecord};
use toolsmith::capability::{HandleDeferredToolCalls, IncludeToolReturnSchemas, PrepareTools, SetToolMetadata};
use toolsmith::deferred::{DeferredKind, DeferredToolRequests, DeferredToolResults, ExternalResult, ToolApproval};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart};
use toolsmith::model::{
    Model, ModelError, ModelRequestParameters, ModelSettings, TestModel, ToolChoice, resolve_tool_choice,
};
use toolsmith::prelude::*;
use toolsmith::search::{SearchStrategy, ToolSearch};
use toolsmith::tool::ToolDefinition;
use toolsmith::toolset::{BoxedToolset, ExternalToolset, FunctionToolset};
use toolsmith::usage::UsageLimits;

type Deps = Value;

/// Fails the scenario with a message (printed to stderr, exit status 2).
#[derive(Debug)]
struct Unsupported(String);

fn unsupported(what: impl Into<String>) -> Unsupported {
    Unsupported(what.into())
}

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn concat(args: &Value) -> Result<Value, ModelRetry> {
    let (a, b) = (args.get("a"), args.get("b"));
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => Ok(match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => json!(x + y),
            _ => json!(x.as_f64().unwrap_or(0.0) + y.as_f64().unwrap_or(0.0)),
        }),
        (Some(Value::String(x)), Some(Value::String(y))) => Ok(json!(format!("{x}{y}"))),
        _ => Err(ModelRetry::new("a and b must be two numbers or two strings")),
    }
}

fn make_tool(entry: &Value) -> Result<Tool<Deps>, Unsupported> {
    if let Some(fs) = entry.get("from_schema") {
        let name = fs.get("name").and_then(Value::as_str).unwrap_or_default();
        let description = fs.get("description").and_then(Value::as_str).unwrap_or_default();
        let schema = fs.get("json_schema").cloned().unwrap_or(json!({}));
        let returns = fs.get("returns").and_then(Value::as_str).unwrap_or("echo").to_string();
        let mut tool = Tool::from_schema(name, description, schema, move |_ctx, args: Value| {
            let r = if returns == "concat" { concat(&args).map_err(ToolError::from) } else { Ok(args) };
            async move { r.map(toolsmith::tool::ToolOutput::Value) }
        });
        if fs.get("sequential").and_then(Value::as_bool) == Some(true) {
            tool = tool.sequential(true);
        }
        return Ok(tool);
    }
    let use_ = entry.get("use").and_then(Value::as_str).ok_or_else(|| unsupported(format!("tool entry {entry}")))?;
    let spec = catalogue::lookup(use_).ok_or_else(|| unsupported(format!("unknown catalogue tool {use_}")))?;
    let mut tool: Tool<Deps> = spec.into();
    if let Some(n) = get(entry, "name").and_then(Value::as_str) {
        tool = tool.name_as(n);
    }
    if let Some(d) = get(entry, "description").and_then(Value::as_str) {
        tool = tool.description(d);
    }
    if let Some(r) = get(entry, "retries").and_then(Value::as_u64) {
        tool = tool.retries(r as u32);
    }
    if let Some(t) = get(entry, "timeout").and_then(Value::as_f64) {
        tool = tool.timeout(seconds(t));
    }
    if let Some(b) = get(entry, "requires_approval").and_then(Value::as_bool) {
        tool = tool.requires_approval(b);
    }
    if let Some(b) = get(entry, "sequential").and_then(Value::as_bool) {
        tool = tool.sequential(b);
    }
    if let Some(b) = get(entry, "defer_loading").and_then(Value::as_bool) {
        tool = tool.defer_loading(b);
    }
    if let Some(p) = get(entry, "prepare").and_then(Value::as_str) {
        tool = match p {
            "only_if_deps_42" => tool.prepare(|ctx, def| (ctx.deps == json!(42)).then_some(def)),
            "describe_name_from_deps" => tool.prepare(|ctx, mut def| {
                // An f-string in the reference: Python's `str()` of the deps.
                let deps = pystr::py_str(&ctx.deps);
                if let Some(p) = def.parameters_mut().pointer_mut("/properties/name")
                    && let Value::Object(o) = p
                {
                    o.insert("description".into(), Value::String(format!("Name of the {deps} to greet.")));
                }
                Some(def)
            }),
            "hide" => tool.prepare(|_, _| None),
            other => return Err(unsupported(format!("prepare {other}"))),
        };
    }
    if let Some(v) = get(entry, "args_validator").and_then(Value::as_str) {
        tool = match v {
            "sum_at_most_deps" => tool.args_validator(|ctx, args| {
                let x = args.get("x").and_then(Value::as_i64).unwrap_or(0);
                let y = args.get("y").and_then(Value::as_i64).unwrap_or(0);
                let limit = ctx.deps.as_i64().unwrap_or(i64::MAX);
                if x + y > limit {
                    Err(ModelRetry::new(format!("Sum of x and y must not exceed {}", ctx.deps)))
                } else {
                    Ok(())
                }
            }),
            other => return Err(unsupported(format!("args_validator {other}"))),
        };
    }
    Ok(tool)
}

fn names(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(|n| n.as_str().map(String::from)).collect()
}

/// A scenario toolset, with its wrappers applied in the order filter_out, approval_required,
/// defer_loading, prefix.
fn make_toolset(cfg: &Value) -> Result<BoxedToolset<Deps>, Unsupported> {
    let kind = cfg.get("kind").and_then(Value::as_str).unwrap_or("function");
    let mut ts = match kind {
        "function" => {
            let mut ts = FunctionToolset::new();
            for t in cfg.get("tools").and_then(Value::as_array).into_iter().flatten() {
                ts.add(make_tool(t)?);
            }
            if let Some(r) = get(cfg, "max_retries").and_then(Value::as_u64) {
                ts = ts.max_retries(r as u32);
            }
            if let Some(t) = get(cfg, "timeout").and_then(Value::as_f64) {
                ts = ts.timeout(seconds(t));
            }
            BoxedToolset::new(ts)
        }
        "external" => {
            let defs = cfg.get("tool_defs").and_then(Value::as_array).cloned().unwrap_or_default();
            let defs: Vec<ToolDefinition> = defs
                .into_iter()
                .map(|d| {
                    let name = d.get("name").and_then(Value::as_str).unwrap_or_default();
                    // SCENARIOS.md: a missing (or null) parameters_json_schema is an empty object schema.
                    let schema = get(&d, "parameters_json_schema")
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                    let mut def = ToolDefinition::new(name, schema);
                    if let Some(desc) = d.get("description").and_then(Value::as_str) {
                        def = def.with_description(desc);
                    }
                    def
                })
                .collect();
            BoxedToolset::new(ExternalToolset::new(defs))
        }
        other => return Err(unsupported(format!("toolset kind {other}"))),
    };
    if let Some(hidden) = get(cfg, "filter_out") {
        let hidden = names(hidden);
        ts = BoxedToolset::new(ts.filtered(move |_ctx, def| !hidden.contains(&def.name)));
    }
    match get(cfg, "approval_required") {
        Some(Value::Bool(true)) => ts = BoxedToolset::new(ts.approval_required()),
        Some(v @ Value::Array(_)) => ts = BoxedToolset::new(ts.approval_required_for(names(v))),
        _ => {}
    }
    match get(cfg, "defer_loading") {
        Some(Value::Bool(true)) => ts = BoxedToolset::new(ts.defer_loading()),
        Some(v @ Value::Array(_)) => ts = BoxedToolset::new(ts.defer_loading_for(names(v))),
        _ => {}
    }
    if let Some(p) = get(cfg, "prefix").and_then(Value::as_str) {
        ts = BoxedToolset::new(ts.prefixed(p));
    }
    Ok(ts)
}

fn tool_choice(v: &Value) -> Result<ToolChoice, Unsupported> {
    Ok(match v {
        Value::String(s) if s == "auto" => ToolChoice::Auto,
        Value::String(s) if s == "none" => ToolChoice::None,
        Value::String(s) if s == "required" => ToolChoice::Required,
        Value::Array(a) => ToolChoice::Tools(a.iter().filter_map(|x| x.as_str().map(String::from)).collect()),
        Value::Object(o) if o.contains_key("ToolOrOutput") => ToolChoice::ToolOrOutput(
            o["ToolOrOutput"].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(String::from)).collect(),
        ),
        other => return Err(unsupported(format!("tool_choice {other}"))),
    })
}

struct RunOut {
    output: Value,
    deferred: Option<DeferredToolRequests>,
    error: Option<(String, String)>,
    messages: Vec<ModelMessage>,
    new_start: usize,
    requests: u32,
    tool_calls: u32,
}

trait OutputJson {
    fn split(&self) -> (Value, Option<DeferredToolRequests>);
}
impl OutputJson for String {
    fn split(&self) -> (Value, Option<DeferredToolRequests>) {
        (Value::String(self.clone()), None)
    }
}
impl OutputJson for Value {
    fn split(&self) -> (Value, Option<DeferredToolRequests>) {
        (self.clone(), None)
    }
}
impl<O: OutputJson> OutputJson for Deferrable<O> {
    fn split(&self) -> (Value, Option<DeferredToolRequests>) {
        match self {
            Deferrable::Deferred(d) => (Value::Null, Some(d.clone())),
            Deferrable::Output(o) => o.split(),
            _ => (Value::Null, None),
        }
    }
}

/// The error's type as Pydantic AI names its exceptions (toolsmith's names are Rust's).
pub(crate) fn reference_kind(e: &AgentRunError) -> &str {
    match e.kind() {
        "ModelHttpError" => "ModelHTTPError",
        "ModelApiError" | "ModelProtocolError" => "ModelAPIError",
        "HookTimeout" => "HookTimeoutError",
        "AllModelsFailed" => "FallbackExceptionGroup",
        other => other,
    }
}

fn record_out<O: OutputJson>(r: RunRecord<O>) -> RunOut {
    let (output, deferred, error) = match &r.result {
        Ok(o) => {
            let (v, d) = o.split();
            (v, d, None)
        }
        Err(e) => (Value::Null, None, Some((reference_kind(e).to_string(), e.message()))),
    };
    RunOut {
        output,
        deferred,
        error,
        new_start: r.new_start,
        requests: r.usage.requests,
        tool_calls: r.usage.tool_calls,
        messages: r.messages,
    }
}

async fn run_all<O: OutputJson + Send + 'static>(
    built: Result<Agent<Deps, O>, UserError>,
    scenario: &Value,
) -> Result<Vec<(RunOut, Option<Vec<ModelMessage>>)>, Unsupported> {
    let agent_deps = scenario.pointer("/agent/deps").cloned().unwrap_or(Value::Null);
    let mut previous: Vec<ModelMessage> = Vec::new();
    // The deferred requests of the last run that ended with some: results for the history they
    // came from are built from them (bound to the calls they list).
    let mut requests: Option<DeferredToolRequests> = None;
    let mut outs = Vec::new();
    for run in scenario.get("runs").and_then(Value::as_array).into_iter().flatten() {
        let agent = match &built {
            Ok(a) => a,
            Err(e) => {
                outs.push((
                    RunOut {
                        output: Value::Null,
                        deferred: None,
                        error: Some(("UserError".into(), e.message.clone())),
                        messages: Vec::new(),
                        new_start: 0,
                        requests: 0,
                        tool_calls: 0,
                    },
                    None,
                ));
                continue;
            }
        };
        let deps = match run.get("deps") {
            Some(d) => d.clone(),
            None => agent_deps.clone(),
        };
        let mut given_history = None;
        let history = match get(run, "message_history") {
            Some(h) => match toolsmith::messages::history_from_value(h.clone()) {
                Ok(m) => {
                    given_history = Some(m.clone());
                    m
                }
                Err(e) => return Err(unsupported(format!("message_history: {e}"))),
            },
            None => previous.clone(),
        };
        let builder = match get(run, "prompt").and_then(Value::as_str) {
            Some(p) => agent.run(p),
            None => agent.resume(),
        };
        let mut builder = builder.deps(deps).message_history(history.clone());
        if let Some(d) = get(run, "deferred_tool_results") {
            // The reference takes a result given for a call that waits for approval as the
            // call's answer; toolsmith only from a caller who takes the results as given.
            let result_for_approval = |r: &DeferredToolRequests| {
                d.get("calls")
                    .and_then(Value::as_object)
                    .is_some_and(|calls| calls.keys().any(|id| r.kind(id) == Some(DeferredKind::Approval)))
            };
            let results = match (&given_history, &requests) {
                // A history written by Pydantic AI: no requests of this runner's to bind to.
                (Some(_), _) => deferred_results(d, DeferredToolResults::new()).trust_history(),
                (None, Some(r)) if result_for_approval(r) => {
                    deferred_results(d, DeferredToolResults::new()).trust_history()
                }
                (None, Some(r)) => deferred_results(d, r.results()),
                // Results for calls a failed run left unanswered: the reference takes a result
                // for a call that waits for approval as its answer too.
                (None, None) if d.get("calls").and_then(Value::as_object).is_some_and(|c| !c.is_empty()) => {
                    deferred_results(d, DeferredToolResults::new()).trust_history()
                }
                (None, None) => deferred_results(d, DeferredToolResults::new()),
            };
            builder = builder.deferred_tool_results(results);
        }
        let record = builder.run_capturing().await;
        let out = record_out(record);
        // Results are bound to the requests of the run just before (a run that did not end
        // deferred leaves nothing to bind to).
        requests = out.deferred.clone();
        previous = if out.messages.is_empty() && out.new_start == 0 && out.error.is_some() {
            history
        } else {
            out.messages.clone()
        };
        outs.push((out, given_history));
    }
    Ok(outs)
}

/// Whether the scenario has tools whose calls always defer: tools that require approval,
/// external toolsets, toolsets wrapped to require approval.
fn may_defer(scenario: &Value) -> bool {
    let tools = scenario.get("tools").and_then(Value::as_array).into_iter().flatten();
    let toolsets = scenario.get("toolsets").and_then(Value::as_array).into_iter().flatten();
    let approval = |t: &Value| get(t, "requires_approval") == Some(&Value::Bool(true));
    tools.clone().any(approval)
        || toolsets.clone().any(|ts| {
            ts.get("kind").and_then(Value::as_str) == Some("external")
                || get(ts, "approval_required").is_some_and(|v| v != &Value::Bool(false))
                || ts.get("tools").and_then(Value::as_array).into_iter().flatten().any(approval)
        })
}

/// The scenario's results `d`, added to `results`.
fn deferred_results(d: &Value, mut results: DeferredToolResults) -> DeferredToolResults {
    for (id, a) in d.get("approvals").and_then(Value::as_object).into_iter().flatten() {
        let approval = match a {
            Value::Bool(b) => ToolApproval::from(*b),
            Value::Object(o) if o.contains_key("denied") => {
                ToolApproval::denied_with(o["denied"].as_str().unwrap_or_default())
            }
            Value::Object(o) => match o.get("override_args").filter(|v| !v.is_null()) {
                Some(args) => ToolApproval::approved_with(args.clone()),
                None => ToolApproval::approved(),
            },
            _ => ToolApproval::approved(),
        };
        results = results.approve(id.clone(), approval);
    }
    for (id, c) in d.get("calls").and_then(Value::as_object).into_iter().flatten() {
        let result = match c {
            Value::Object(o) if o.len() == 1 && o.contains_key("retry") => {
                ExternalResult::Retry(ModelRetry::with_content(o["retry"].clone()))
            }
            Value::Object(o) if o.len() == 1 && o.contains_key("tool_return") => {
                let tr = &o["tool_return"];
                let mut ret = ToolReturn::new(tr.get("return_value").cloned().unwrap_or(Value::Null));
                if let Some(m) = get(tr, "metadata") {
                    ret = ret.with_metadata(m.clone());
                }
                ExternalResult::Return(ret)
            }
            other => ExternalResult::Value(other.clone()),
        };
        results = results.call_result(id.clone(), result);
    }
    for (id, m) in d.get("metadata").and_then(Value::as_object).into_iter().flatten() {
        results = results.metadata(id.clone(), m.clone());
    }
    results
}

fn configure<O: Send + 'static>(mut b: AgentBuilder<Deps, O>, a: &Value) -> Result<AgentBuilder<Deps, O>, Unsupported> {
    if let Some(d) = get(a, "deps") {
        b = b.default_deps(d.clone());
    }
    if let Some(r) = get(a, "retries").and_then(Value::as_u64) {
        b = b.retries(r as u32);
    }
    if let Some(r) = get(a, "output_retries").and_then(Value::as_u64) {
        b = b.output_retries(r as u32);
    }
    if let Some(t) = get(a, "tool_timeout").and_then(Value::as_f64) {
        b = b.tool_timeout(seconds(t));
    }
    if let Some(s) = get(a, "end_strategy").and_then(Value::as_str) {
        b = b.end_strategy(match s {
            "early" => EndStrategy::Early,
            "exhaustive" => EndStrategy::Exhaustive,
            _ => EndStrategy::Graceful,
        });
    }
    if get(a, "parallel_mode").and_then(Value::as_str) == Some("sequential") {
        b = b.parallel_mode(ParallelMode::Sequential);
    }
    if let Some(l) = get(a, "usage_limits") {
        let mut limits = UsageLimits::new();
        if let Some(n) = get(l, "request_limit").and_then(Value::as_u64) {
            limits = limits.request_limit(n as u32);
        }
        if let Some(n) = get(l, "tool_calls_limit").and_then(Value::as_u64) {
            limits = limits.tool_calls_limit(n as u32);
        }
        b = b.usage_limits(limits);
    }
    if let Some(s) = get(a, "model_settings") {
        let mut settings = ModelSettings::new();
        if let Some(tc) = get(s, "tool_choice") {
            settings = settings.tool_choice(tool_choice(tc)?);
        }
        b = b.model_settings(settings);
    }
    Ok(b)
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn add_capabilities(
    mut b: AgentBuilder<Deps, String>,
    caps: &[Value],
    log: &Arc<Mutex<Vec<String>>>,
) -> Result<AgentBuilder<Deps, String>, Unsupported> {
    for cap in caps {
        let Some((name, cfg)) = cap.as_object().and_then(|o| o.iter().next()) else {
            return Err(unsupported(format!("capability {cap}")));
        };
        b = match name.as_str() {
            "HookLog" => b.capability(hooklog::HookLog::new(cfg, log.clone())),
            "PrepareTools" => match cfg.as_str() {
                Some("strict_all") => {
                    b.capability(PrepareTools::new(|_ctx: &RunContext<Deps>, defs: Vec<ToolDefinition>| {
                        defs.into_iter().map(|d| d.strict(true)).collect()
                    }))
                }
                Some("drop_launch_potato_if_deps") => {
                    b.capability(PrepareTools::new(|ctx: &RunContext<Deps>, defs: Vec<ToolDefinition>| {
                        if truthy(&ctx.deps) {
                            defs.into_iter().filter(|d| d.name != "launch_potato").collect()
                        } else {
                            defs
                        }
                    }))
                }
                other => return Err(unsupported(format!("PrepareTools {other:?}"))),
            },
            "SetToolMetadata" => {
                // A list under `tools` selects the tools; anything else is metadata.
                let mut metadata = cfg.as_object().cloned().unwrap_or_default();
                match metadata.get("tools").and_then(Value::as_array).cloned() {
                    Some(names) => {
                        metadata.remove("tools");
                        let names: Vec<String> = names.iter().filter_map(|n| n.as_str().map(String::from)).collect();
                        b.capability(SetToolMetadata::new(Value::Object(metadata)).for_tools(names))
                    }
                    None => b.capability(SetToolMetadata::new(Value::Object(metadata))),
                }
            }
            "IncludeToolReturnSchemas" => match cfg.get("tools").and_then(Value::as_array) {
                Some(names) => b.capability(IncludeToolReturnSchemas::for_tools(
                    names.iter().filter_map(|n| n.as_str().map(String::from)).collect::<Vec<_>>(),
                )),
                None => b.capability(IncludeToolReturnSchemas::all()),
            },
            "ToolSearch" => {
                // The reference's default strategy, unless the scenario names one.
                let mut ts = ToolSearch::new().strategy(SearchStrategy::PydanticAi);
                if get(cfg, "strategy").and_then(Value::as_str) == Some("keywords") {
                    ts = ts.strategy(SearchStrategy::Keywords);
                }
                if let Some(n) = get(cfg, "max_results").and_then(Value::as_u64) {
                    ts = ts.max_results(n as usize);
                }
                b.tool_search(ts)
            }
            other => return Err(unsupported(format!("capability {other}"))),
        };
    }
    Ok(b)
}

async fn run_scenario(scenario: &Value) -> Result<Value, Unsupported> {
    let records = Arc::new(Mutex::new(Records::default()));
    let empty = json!({});
    let a = scenario.get("agent").unwrap_or(&empty);
    let model = scenario.get("model").cloned().unwrap_or(Value::Null);
    let builder = match &model {
        Value::String(s) if s == "test" => {
            Agent::builder(Recorder { inner: TestModel::new(), records: records.clone() })
        }
        Value::Object(o) if o.contains_key("test") => {
            let t = &o["test"];
            let mut m = TestModel::new();
            if let Some(seed) = get(t, "seed").and_then(Value::as_u64) {
                m = m.seed(seed);
            }
            if let Some(names) = get(t, "call_tools").and_then(Value::as_array) {
                m = m.call_tools(names.iter().filter_map(|n| n.as_str().map(String::from)));
            }
            Agent::builder(Recorder { inner: m, records: records.clone() })
        }
        Value::Object(o) if o.contains_key("script") => Agent::builder(Recorder {
            inner: Scripted { script: o["script"].as_array().cloned().unwrap_or_default(), next: Mutex::new(0) },
            records: records.clone(),
        }),
        other => return Err(unsupported(format!("model {other}"))),
    };
    // Deferred tools are searched as the reference does unless a `ToolSearch` capability says
    // otherwise.
    let mut b = builder.deps::<Deps>().tool_search(ToolSearch::new().strategy(SearchStrategy::PydanticAi));
    if let Some(p) = get(a, "system_prompt").and_then(Value::as_str) {
        b = b.system_prompt(p);
    }
    let hook_log = Arc::new(Mutex::new(Vec::new()));
    let caps: Vec<Value> = get(a, "capabilities").and_then(Value::as_array).cloned().unwrap_or_default();
    let has_hook_log = caps.iter().any(|c| c.get("HookLog").is_some());
    b = add_capabilities(b, &caps, &hook_log)?;
    // toolsmith refuses tools whose every call defers on an agent that can neither end deferred
    // nor settle calls inline, at `build()` (or at the run's start, for toolsets); the reference
    // fails at the first such call. A capability that settles nothing builds the agent the
    // reference allows (any capability may settle deferred calls inline), with its behaviour
    // (also beside the scenario's own capabilities: some, like `ToolSearch`, configure the agent
    // rather than add a capability).
    let deferrable = matches!(get(a, "output"), Some(Value::String(s)) if s == "text_or_deferred")
        || get(a, "output").is_some_and(|o| o.get("structured_or_deferred").is_some());
    if !deferrable && may_defer(scenario) {
        b = b.capability(HandleDeferredToolCalls::new(|_, _| None));
    }
    for t in scenario.get("tools").and_then(Value::as_array).into_iter().flatten() {
        b = b.tool(make_tool(t)?);
    }
    for ts in scenario.get("toolsets").and_then(Value::as_array).into_iter().flatten() {
        b = b.toolset(make_toolset(ts)?);
    }
    let b = configure(b, a)?;
    let output = get(a, "output").cloned().unwrap_or(json!("text"));
    let outs = match &output {
        Value::String(s) if s == "text" => run_all(b.build(), scenario).await?,
        Value::String(s) if s == "text_or_deferred" => run_all(b.allow_deferred().build(), scenario).await?,
        Value::Object(o) if o.contains_key("structured") => {
            run_all(b.output_schema(output_model(o["structured"].clone())).build(), scenario).await?
        }
        Value::Object(o) if o.contains_key("structured_or_deferred") => {
            run_all(
                b.output_schema(output_model(o["structured_or_deferred"].clone())).allow_deferred().build(),
                scenario,
            )
            .await?
        }
        other => return Err(unsupported(format!("output {other}"))),
    };

    let mut ids = normalise::Ids::default();
    let mut runs = Vec::new();
    for (out, history) in outs {
        let mut run = Map::new();
        if let Some(h) = history {
            let mut msgs: Vec<Value> =
                h.iter().map(|m| normalise::message(serde_json::to_value(m).unwrap_or_default())).collect();
            msgs.iter_mut().for_each(|m| ids.replace(m));
            run.insert("history".into(), Value::Array(msgs));
        }
        let mut new: Vec<Value> = out.messages[out.new_start.min(out.messages.len())..]
            .iter()
            .map(|m| normalise::message(serde_json::to_value(m).unwrap_or_default()))
            .collect();
        new.iter_mut().for_each(|m| ids.replace(m));
        run.insert("new_messages".into(), Value::Array(new));
        let deferred = match out.deferred {
            Some(d) => {
                let mut calls = serde_json::to_value(&d.calls).unwrap_or_default();
                let mut approvals = serde_json::to_value(&d.approvals).unwrap_or_default();
                for v in [&mut calls, &mut approvals] {
                    if let Value::Array(items) = v {
                        for item in items.iter_mut() {
                            if let Value::Object(o) = item {
                                o.insert("part_kind".into(), json!("tool-call"));
                            }
                            *item = normalise::message(item.take());
                        }
                    }
                    ids.replace(v);
                }
                let metadata: Map<String, Value> = d.metadata.iter().map(|(k, v)| (ids.id(k), v.clone())).collect();
                json!({"calls": calls, "approvals": approvals, "metadata": metadata})
            }
            None => Value::Null,
        };
        run.insert("deferred".into(), deferred);
        run.insert("output".into(), out.output);
        run.insert(
            "error".into(),
            match out.error {
                Some((t, m)) => json!({"type": t, "message": normalise::sort_set_literals(&m)}),
                None => Value::Null,
            },
        );
        run.insert("requests".into(), json!(out.requests));
        run.insert("tool_calls".into(), json!(out.tool_calls));
        runs.push(Value::Object(run));
    }
    let records = records.lock().unwrap_or_else(|p| p.into_inner());
    let mut result = Map::new();
    result.insert("runs".into(), Value::Array(runs));
    result.insert("tool_defs".into(), Value::Array(records.tool_defs.clone()));
    if get(a, "model_settings").and_then(|s| get(s, "tool_choice")).is_some() {
        result.insert("tool_choice".into(), Value::Array(records.tool_choice.clone()));
    }
    if has_hook_log {
        let log = hook_log.lock().unwrap_or_else(|p| p.into_inner());
        result.insert("hook_log".into(), Value::Array(log.iter().map(|l| json!(l)).collect()));
    }
    Ok(Value::Object(result))
}

fn sorted(v: Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut entries: Vec<(String, Value)> = o.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: conformance SCENARIO.json");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let scenario: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{path} is not valid JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match rt.block_on(run_scenario(&scenario)) {
        Ok(result) => {
            println!("{}", serde_json::to_string_pretty(&sorted(result)).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(Unsupported(what)) => {
            eprintln!("unsupported in this version: {what}");
            ExitCode::from(3)
        }
    }
}

/// A scenario's timeout in seconds as a `Duration`: zero for a value that is not a positive
/// duration (the builder then reports it, as the reference does), the longest one past its range.
fn seconds(t: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(t).unwrap_or(if t > 0.0 {
        std::time::Duration::MAX
    } else {
        std::time::Duration::ZERO
    })
}

/// A structured output schema as the reference turns it into a typed model (`model_from_schema`):
/// the schema and each nested object with properties are models, named by their `title` or else
/// `Output` at the top and the key capitalised below (`area_km2` -> `Area_km2`; an array's items
/// get `_item` after their key's name), so a non-object given for one is refused as that model's
/// input. Objects without properties stay plain dictionaries.
fn output_model(mut schema: Value) -> Value {
    fn model(schema: &mut Value, name: &str) {
        let Some(o) = schema.as_object_mut() else { return };
        o.entry("title").or_insert_with(|| Value::String(name.to_string()));
        if let Some(props) = o.get_mut("properties").and_then(Value::as_object_mut) {
            for (key, prop) in props.iter_mut() {
                typed(prop, &capitalize(key));
            }
        }
    }
    fn typed(schema: &mut Value, name: &str) {
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => {
                if let Some(items) = schema.get_mut("items") {
                    typed(items, &format!("{name}_item"));
                }
            }
            Some("object") if schema.get("properties").is_some() => model(schema, name),
            _ => {}
        }
    }
    fn capitalize(key: &str) -> String {
        // Python's str.capitalize: the first character upper-cased, the rest lower-cased.
        let mut chars = key.chars();
        match chars.next() {
            Some(first) => first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect(),
            None => String::new(),
        }
    }
    model(&mut schema, "Output");
    schema
}
