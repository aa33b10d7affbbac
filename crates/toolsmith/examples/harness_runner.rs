//! `harness_runner SCENARIO.json`: runs a harness scenario (tests/harness/README.md) on toolsmith
//! and prints the normalised result, to be compared with the real pydantic-ai-harness's
//! (`tests/harness/run_harness.py`) by `tests/harness/compare.py`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use toolsmith::agent::Deferrable;
use toolsmith::capability::tool_output_limits::{Summarize, ToolOutputLimits};
use toolsmith::capability::{ApprovalReviewer, BoxedCapability, CapabilityRegistry, CapabilitySpec, ToolCallJudge};
use toolsmith::deferred::{DeferredToolRequests, ToolApproval};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart};
use toolsmith::model::{AnyModel, ModelError, ModelErrorKind};
use toolsmith::prelude::*;
use toolsmith::tool::{ToolOutput, ToolReturn};

/// `{"$repeat": {text, times}}` and `{"$lines": {prefix, count}}` become text.
fn expand(v: &Value) -> Value {
    match v {
        Value::Object(map) if map.len() == 1 && map.contains_key("$repeat") => {
            let r = &map["$repeat"];
            let text = r["text"].as_str().unwrap_or_default();
            json!(text.repeat(r["times"].as_u64().unwrap_or(0) as usize))
        }
        Value::Object(map) if map.len() == 1 && map.contains_key("$lines") => {
            let l = &map["$lines"];
            let prefix = l.get("prefix").and_then(Value::as_str).unwrap_or("line ");
            let count = l["count"].as_u64().unwrap_or(0);
            json!((0..count).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>().join("\n"))
        }
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), expand(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(expand).collect()),
        other => other.clone(),
    }
}

/// Named gates a scenario's tools wait on (`wait_for`) and open (`opens`): a background task's
/// progress ordered by the model's calls, without timing.
#[derive(Clone, Default)]
struct Gates(Arc<Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>>);

impl Gates {
    fn gate(&self, name: &str) -> Arc<tokio::sync::Semaphore> {
        let mut gates = self.0.lock().unwrap_or_else(|e| e.into_inner());
        gates.entry(name.to_string()).or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(0))).clone()
    }
}

fn make_tool(entry: &Value, gates: &Gates) -> Tool<()> {
    let name = entry["name"].as_str().unwrap_or_default().to_string();
    let description = entry.get("description").and_then(Value::as_str).unwrap_or(&name).to_string();
    let returns = expand(entry.get("returns").unwrap_or(&json!("ok")));
    let fail_times = entry.get("fail_times").and_then(Value::as_u64).unwrap_or(0) as u32;
    let retry_message = entry.get("retry_message").and_then(Value::as_str).unwrap_or("not yet").to_string();
    let metadata = entry.get("return_metadata").cloned();
    let wrap = metadata.is_some() || entry.get("wrap").and_then(Value::as_bool) == Some(true);
    let schema = entry.get("schema").cloned().unwrap_or(json!({"type": "object", "properties": {}}));
    let requires_approval = entry.get("requires_approval").and_then(Value::as_bool) == Some(true);
    let tool_metadata = entry.get("metadata").cloned();
    let wait_for = entry.get("wait_for").and_then(Value::as_str).map(|g| gates.gate(g));
    let opens = entry.get("opens").and_then(Value::as_str).map(|g| gates.gate(g));
    let sequential = entry.get("sequential").and_then(Value::as_bool) == Some(true);
    let yields = entry.get("yields").and_then(Value::as_u64).unwrap_or(0);
    let tool = Tool::from_schema(name, description, schema, move |ctx: RunContext<()>, args: Value| {
        let value = if returns == json!("$args") { args } else { returns.clone() };
        let result = if ctx.retry < fail_times {
            Err(ToolError::from(ModelRetry::new(format!("{retry_message} ({})", ctx.retry + 1))))
        } else if wrap {
            let mut r = ToolReturn::new(value);
            r.metadata = metadata.clone();
            Ok(ToolOutput::Return(r))
        } else {
            Ok(ToolOutput::Value(value))
        };
        if let Some(gate) = &opens {
            gate.add_permits(tokio::sync::Semaphore::MAX_PERMITS / 2);
        }
        let wait_for = wait_for.clone();
        async move {
            if let Some(gate) = wait_for {
                let _ = gate.acquire().await;
            }
            for _ in 0..yields {
                tokio::task::yield_now().await;
            }
            result
        }
    })
    .requires_approval(requires_approval)
    .sequential(sequential);
    match tool_metadata {
        Some(m) => tool.metadata(m),
        None => tool,
    }
}

type JudgeLog = Arc<Mutex<Vec<Value>>>;

/// The scripted judging models (the Python runner defines the same).
fn judge_model(name: &str, log: JudgeLog) -> Result<AnyModel, String> {
    let name = name.to_string();
    if !["judge_yes", "judge_no", "judge_unsure", "judge_fail", "judge_danger"].contains(&name.as_str()) {
        return Err(format!("unknown judge model {name}"));
    }
    Ok(AnyModel::from_model(FunctionModel::new(move |messages, info| {
        let prompt = messages
            .last()
            .and_then(|m| match m {
                ModelMessage::Request(r) => r.parts.iter().rev().find_map(|p| match p {
                    toolsmith::messages::ModelRequestPart::UserPrompt(u) => Some(u.content.text()),
                    _ => None,
                }),
                _ => None,
            })
            .unwrap_or_default();
        let tools: Vec<Value> = info
            .output_tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": *t.parameters_json_schema}))
            .collect();
        log.lock().unwrap_or_else(|e| e.into_inner()).push(json!({
            "model": name, "instructions": info.instructions, "prompt": prompt,
            "output_tools": tools, "allow_text_output": info.allow_text_output,
        }));
        let answer = match name.as_str() {
            "judge_fail" => Err(ModelError::new(ModelErrorKind::UnexpectedResponse, "judge down")),
            "judge_yes" => Ok("yes"),
            "judge_no" => Ok("no"),
            "judge_unsure" => Ok("unsure"),
            _ => Ok(if prompt.contains("danger") { "yes" } else { "no" }),
        };
        let answer = answer.map(|a| {
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "final_result",
                json!({"response": a}),
                "judge",
            ))])
        });
        async move { answer }
    })))
}

fn summarizers() -> HashMap<String, Summarize> {
    let echo_head = FunctionModel::sync(|messages, _| {
        let prompt = messages
            .iter()
            .rev()
            .find_map(|m| match m {
                ModelMessage::Request(r) => r.parts.iter().rev().find_map(|p| match p {
                    toolsmith::messages::ModelRequestPart::UserPrompt(u) => Some(u.content.text()),
                    _ => None,
                }),
                _ => None,
            })
            .unwrap_or_default();
        let head: String = prompt.chars().take(90).collect();
        ModelResponse::text(format!("  summary: {head} [{} chars]  ", prompt.chars().count()))
    });
    let fail = FunctionModel::new(|_, _| async {
        Err(ModelError::new(ModelErrorKind::UnexpectedResponse, "summariser down"))
    });
    HashMap::from([
        ("echo_head".to_string(), Summarize::with_model(echo_head)),
        ("fail".to_string(), Summarize::with_model(fail)),
        (
            "first_line".to_string(),
            Summarize::with_fn(|tool, text| async move {
                Ok(format!("{tool}: {}", text.lines().next().unwrap_or_default()))
            }),
        ),
    ])
}

fn registry(store_dir: &str, judges: JudgeLog) -> CapabilityRegistry<()> {
    let store_dir = store_dir.to_string();
    let reviewer_log = judges.clone();
    CapabilityRegistry::new()
        .register("ToolCallJudge", move |args| {
            let log = judges.clone();
            ToolCallJudge::<()>::from_spec_with(args.value(), &move |name| judge_model(name, log.clone()))
                .map(BoxedCapability::new)
                .map_err(|e| args.error(e))
        })
        .register("ApprovalReviewer", move |args| {
            let log = reviewer_log.clone();
            ApprovalReviewer::from_spec_with(args.value(), &move |name| judge_model(name, log.clone()))
                .map(BoxedCapability::new)
                .map_err(|e| args.error(e))
        })
        .register("ToolOutputLimits", move |args| {
            let mut value = args.value().clone();
            // A file store goes to the scenario's temporary directory.
            if let Some(Value::Object(store)) = value.get_mut("store")
                && let Some(Value::Object(cfg)) = store.get_mut("LocalFileStore")
            {
                cfg.insert("base_dir".into(), json!(store_dir));
            } else if let Some(Value::Object(store)) = value.get_mut("store")
                && store.get("LocalFileStore").is_some_and(Value::is_null)
            {
                store.insert("LocalFileStore".into(), json!({"base_dir": store_dir}));
            }
            ToolOutputLimits::<()>::from_spec_with(&value, &summarizers())
                .map(BoxedCapability::new)
                .map_err(|e| args.error(e))
        })
}

/// The handle of the last spill marker the model was shown (`$last_handle` in scripted args).
fn last_handle(messages: &[ModelMessage]) -> String {
    let mut found = String::new();
    for m in messages {
        let ModelMessage::Request(r) = m else { continue };
        for p in &r.parts {
            if let toolsmith::messages::ModelRequestPart::ToolReturn(t) = p
                && let Value::String(content) = &t.content
                && let Some(start) = content.rfind("stored to handle '")
            {
                let rest = &content[start + "stored to handle '".len()..];
                if let Some(end) = rest.find('\'') {
                    found = rest[..end].to_string();
                }
            }
        }
    }
    found
}

fn script_response(k: usize, parts: &Value, handle: &str) -> ModelResponse {
    let mut out = Vec::new();
    for (i, p) in parts.as_array().into_iter().flatten().enumerate() {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            out.push(ModelResponsePart::Text(TextPart::new(t)));
        } else if let Some(c) = p.get("tool_call") {
            let id = c.get("id").and_then(Value::as_str).map(String::from).unwrap_or_else(|| format!("call_{k}_{i}"));
            let mut args = c.get("args").cloned().unwrap_or(Value::Null);
            if let Value::Object(map) = &mut args {
                for v in map.values_mut() {
                    if v == "$last_handle" {
                        *v = json!(handle);
                    }
                }
            }
            out.push(ModelResponsePart::ToolCall(ToolCallPart::new(c["name"].as_str().unwrap_or_default(), args, id)));
        }
    }
    ModelResponse::new(out)
}

/// Normalises messages as the Python runner does.
#[derive(Default)]
struct Normaliser {
    ids: Vec<(String, String)>,
    runs: Vec<(String, String)>,
    store_dir: String,
}

impl Normaliser {
    fn messages(&mut self, messages: &[ModelMessage]) -> Value {
        let raw = serde_json::to_value(messages).unwrap_or(Value::Null);
        let mut out = Vec::new();
        for m in raw.as_array().into_iter().flatten() {
            if let Some(run) = m.get("run_id").and_then(Value::as_str)
                && !self.runs.iter().any(|(r, _)| r == run)
            {
                let name = format!("run:{}", self.runs.len() + 1);
                self.runs.push((run.to_string(), name));
            }
            let parts: Vec<Value> = m["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    let mut q = Map::new();
                    q.insert("part_kind".into(), p["part_kind"].clone());
                    for key in ["tool_name", "content", "args", "tool_call_id"] {
                        if let Some(v) = p.get(key).filter(|v| !v.is_null()) {
                            q.insert(key.into(), v.clone());
                        }
                    }
                    if p["part_kind"] == "tool-return"
                        && let Some(v) = p.get("metadata").filter(|v| !v.is_null())
                    {
                        q.insert("metadata".into(), nested_parts(v));
                    }
                    Value::Object(q)
                })
                .collect();
            out.push(json!({"kind": m["kind"], "parts": parts}));
        }
        Value::Array(out)
    }

    fn id(&mut self, raw: &str) -> String {
        if let Some((_, n)) = self.ids.iter().find(|(r, _)| r == raw) {
            return n.clone();
        }
        let n = format!("id:{}", self.ids.len() + 1);
        self.ids.push((raw.to_string(), n.clone()));
        n
    }

    fn finish(&mut self, v: Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, x)| {
                        let x = match (&*k, x) {
                            ("tool_call_id", Value::String(s)) => Value::String(self.id(&s)),
                            (_, x) => self.finish(x),
                        };
                        (k, x)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(|x| self.finish(x)).collect()),
            Value::String(mut s) => {
                if !self.store_dir.is_empty() {
                    s = s.replace(&self.store_dir, "<store>");
                }
                // The time a snippet ran before its time limit stopped it.
                if s.contains("time limit exceeded: ") {
                    static ELAPSED: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
                    let re = ELAPSED.get_or_init(|| {
                        regex::Regex::new(r"(time limit exceeded: )[0-9.]+[a-zµ]+ >").expect("a valid pattern")
                    });
                    s = re.replace_all(&s, "${1}<elapsed> >").into_owned();
                }
                for (raw, name) in &self.runs {
                    s = s.replace(raw.as_str(), name);
                }
                // Tool-call ids inside spill handles (`run/call.retry`).
                for (raw, name) in &self.ids {
                    s = s.replace(&format!("/{raw}."), &format!("/{name}."));
                }
                Value::String(s)
            }
            other => other,
        }
    }
}

/// Code mode's metadata (the calls its snippet made and their returns) with each part kept as
/// the history's parts are: its kind, `tool_name`, `content`, `args` and `tool_call_id`.
fn nested_parts(metadata: &Value) -> Value {
    let mut m = metadata.clone();
    if m.get("code_mode").is_none() {
        return m;
    }
    for key in ["tool_calls", "tool_returns"] {
        if let Some(Value::Object(parts)) = m.get_mut(key) {
            for p in parts.values_mut() {
                let mut q = Map::new();
                for k in ["part_kind", "tool_name", "content", "args", "tool_call_id"] {
                    if let Some(v) = p.get(k).filter(|v| !v.is_null()) {
                        q.insert(k.into(), v.clone());
                    }
                }
                *p = Value::Object(q);
            }
        }
    }
    m
}

/// Sorts object keys (the Python runner prints with `sort_keys`).
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// A run's output as the Python runner prints it.
trait OutputJson {
    fn json(&self) -> Value;
    fn deferred(&self) -> Option<&DeferredToolRequests>;
}

impl OutputJson for String {
    fn json(&self) -> Value {
        json!(self)
    }
    fn deferred(&self) -> Option<&DeferredToolRequests> {
        None
    }
}

impl OutputJson for Deferrable<String> {
    fn json(&self) -> Value {
        match self {
            Deferrable::Output(o) => json!(o),
            Deferrable::Deferred(d) => json!({"deferred": {
                "approvals": d.approvals.iter().map(|c| c.tool_call_id.clone()).collect::<Vec<_>>(),
                "calls": d.calls.iter().map(|c| c.tool_call_id.clone()).collect::<Vec<_>>(),
            }}),
            _ => Value::Null,
        }
    }
    fn deferred(&self) -> Option<&DeferredToolRequests> {
        match self {
            Deferrable::Deferred(d) => Some(d),
            _ => None,
        }
    }
}

/// An error's advice on where to raise the retry limit names each library's own API: cut.
fn advice_cut(mut message: String) -> String {
    const ADVICE: &str = "Consider raising the retry limit";
    if let Some(at) = message.find(ADVICE) {
        message.truncate(at + ADVICE.len());
    }
    message
}

/// Every run of the scenario, each from the previous one's messages: the outputs and the last history.
async fn run_all<O: OutputJson + Send + 'static>(agent: Agent<(), O>, sc: &Value) -> (Vec<Value>, Vec<ModelMessage>) {
    let mut history: Vec<ModelMessage> = Vec::new();
    let mut requests: Option<DeferredToolRequests> = None;
    let mut runs = Vec::new();
    let default_runs = json!([{"prompt": "go"}]);
    for r in sc.get("runs").unwrap_or(&default_runs).as_array().into_iter().flatten() {
        let mut builder = match r.get("prompt").and_then(Value::as_str) {
            Some(p) => agent.run(p.to_string()),
            None => agent.resume(),
        };
        builder = builder.message_history(history.clone());
        if r.get("approve").is_some() || r.get("deny").is_some() {
            let mut results = requests.as_ref().map(DeferredToolRequests::results).unwrap_or_default();
            for id in r.get("approve").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                results = results.approve(id, ToolApproval::approved());
            }
            for (id, m) in r.get("deny").and_then(Value::as_object).into_iter().flatten() {
                results = results.approve(id.clone(), ToolApproval::denied_with(m.as_str().unwrap_or_default()));
            }
            builder = builder.deferred_tool_results(results);
        }
        match builder.await {
            Ok(result) => {
                history = result.all_messages().to_vec();
                requests = result.output().deferred().cloned();
                runs.push(json!({"output": result.output().json(), "requests": result.usage().requests}));
            }
            Err(e) => runs.push(json!({"error": {"type": e.kind(), "message": advice_cut(e.to_string())}})),
        }
    }
    (runs, history)
}

/// What a registry of capability specs is extended with (a crate of its own registers its
/// capabilities so).
pub type Extend = fn(CapabilityRegistry<()>) -> CapabilityRegistry<()>;

async fn run(sc: &Value, store_dir: &str, extend: Extend) -> Result<Value, String> {
    let script = sc["script"].as_array().cloned().unwrap_or_default();
    let seen: Arc<Mutex<Vec<Vec<ModelMessage>>>> = Arc::default();
    let recorder = seen.clone();
    let tools_seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let tools_recorder = tools_seen.clone();
    let model = FunctionModel::new(move |messages, info| {
        let mut seen = recorder.lock().unwrap_or_else(|e| e.into_inner());
        let k = seen.len();
        seen.push(messages.to_vec());
        // The function tools of each request (name, description, parameters).
        tools_recorder.lock().unwrap_or_else(|e| e.into_inner()).push(Value::Array(
            info.function_tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "parameters": *t.parameters_json_schema}))
                .collect(),
        ));
        let handle = last_handle(messages);
        let answer = match script.get(k) {
            Some(parts) => Ok(script_response(k, parts, &handle)),
            None => Err(ModelError::new(
                ModelErrorKind::UnexpectedResponse,
                format!("no scripted response for request {k}"),
            )),
        };
        async move { answer }
    });
    let mut builder = Agent::builder(model).retries(sc.get("retries").and_then(Value::as_u64).unwrap_or(1) as u32);
    let gates = Gates::default();
    for t in sc.get("tools").and_then(Value::as_array).into_iter().flatten() {
        builder = builder.tool(make_tool(t, &gates));
    }
    let spec =
        CapabilitySpec::from_value(sc.get("capabilities").cloned().unwrap_or(json!([]))).map_err(|e| e.to_string())?;
    let judges: JudgeLog = Arc::default();
    let builder = builder.capabilities_from_spec(&spec, &extend(registry(store_dir, judges.clone())));
    let (runs, history) = if sc.get("deferred").and_then(Value::as_bool) == Some(true) {
        run_all(builder.allow_deferred().build().map_err(|e| e.to_string())?, sc).await
    } else {
        run_all(builder.build().map_err(|e| e.to_string())?, sc).await
    };
    let mut norm = Normaliser { store_dir: store_dir.to_string(), ..Default::default() };
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let requests: Vec<Value> = seen.iter().map(|m| norm.messages(m)).collect();
    let history = norm.messages(&history);
    let mut out = json!({"runs": runs, "requests": requests, "history": history});
    if sc.get("record_tools").and_then(Value::as_bool) == Some(true) {
        out["tools"] = Value::Array(tools_seen.lock().unwrap_or_else(|e| e.into_inner()).clone());
    }
    let judges = judges.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if !judges.is_empty() {
        out["judge_requests"] = Value::Array(judges);
    }
    Ok(sorted(norm.finish(out)))
}

/// Runs the scenario in the file `path` and returns its normalised result (a file store goes to a
/// temporary directory named after `tag`, removed afterwards).
pub fn run_file(path: &std::path::Path, tag: &str) -> Result<Value, String> {
    run_file_with(path, tag, |registry| registry)
}

/// [`run_file`] with the capability registry extended by `extend`.
pub fn run_file_with(path: &std::path::Path, tag: &str, extend: Extend) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let sc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = std::env::temp_dir().join(format!("toolsmith-harness-{}-{tag}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let store_dir = std::fs::canonicalize(&dir).unwrap_or(dir.clone()).to_string_lossy().into_owned();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let out = rt.block_on(run(&sc, &store_dir, extend));
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[allow(dead_code)] // Also compiled into the harness_scenarios test, which has its own main.
fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: harness_runner SCENARIO.json");
        return std::process::ExitCode::from(2);
    };
    match run_file(std::path::Path::new(&path), "main") {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::from(2)
        }
    }
}
