//! `harness_runner SCENARIO.json`: runs a harness scenario (tests/harness/README.md) on toolsmith
//! and prints the normalised result, to be compared with the real pydantic-ai-harness's
//! (`tests/harness/run_harness.py`) by `tests/harness/compare.py`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use toolsmith::capability::tool_output_limits::{Summarize, ToolOutputLimits};
use toolsmith::capability::{BoxedCapability, CapabilityRegistry, CapabilitySpec};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart};
use toolsmith::model::{ModelError, ModelErrorKind};
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

fn make_tool(entry: &Value) -> Tool<()> {
    let name = entry["name"].as_str().unwrap_or_default().to_string();
    let description = entry.get("description").and_then(Value::as_str).unwrap_or(&name).to_string();
    let returns = expand(entry.get("returns").unwrap_or(&json!("ok")));
    let fail_times = entry.get("fail_times").and_then(Value::as_u64).unwrap_or(0) as u32;
    let retry_message = entry.get("retry_message").and_then(Value::as_str).unwrap_or("not yet").to_string();
    let metadata = entry.get("return_metadata").cloned();
    let wrap = metadata.is_some() || entry.get("wrap").and_then(Value::as_bool) == Some(true);
    let schema = entry.get("schema").cloned().unwrap_or(json!({"type": "object", "properties": {}}));
    Tool::from_schema(name, description, schema, move |ctx: RunContext<()>, args: Value| {
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
        async move { result }
    })
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

fn registry(store_dir: &str) -> CapabilityRegistry<()> {
    let store_dir = store_dir.to_string();
    CapabilityRegistry::new().register("ToolOutputLimits", move |args| {
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
                        q.insert("metadata".into(), v.clone());
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

async fn run(sc: &Value, store_dir: &str) -> Result<Value, String> {
    let script = sc["script"].as_array().cloned().unwrap_or_default();
    let seen: Arc<Mutex<Vec<Vec<ModelMessage>>>> = Arc::default();
    let recorder = seen.clone();
    let model = FunctionModel::new(move |messages, _| {
        let mut seen = recorder.lock().unwrap_or_else(|e| e.into_inner());
        let k = seen.len();
        seen.push(messages.to_vec());
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
    for t in sc.get("tools").and_then(Value::as_array).into_iter().flatten() {
        builder = builder.tool(make_tool(t));
    }
    let spec =
        CapabilitySpec::from_value(sc.get("capabilities").cloned().unwrap_or(json!([]))).map_err(|e| e.to_string())?;
    let agent = builder.capabilities_from_spec(&spec, &registry(store_dir)).build().map_err(|e| e.to_string())?;
    let mut history: Vec<ModelMessage> = Vec::new();
    let mut runs = Vec::new();
    let default_runs = json!([{"prompt": "go"}]);
    for r in sc.get("runs").unwrap_or(&default_runs).as_array().into_iter().flatten() {
        let prompt = r.get("prompt").and_then(Value::as_str).unwrap_or("go").to_string();
        match agent.run(prompt).message_history(history.clone()).await {
            Ok(result) => {
                history = result.all_messages().to_vec();
                runs.push(json!({"output": result.output()}));
            }
            Err(e) => runs.push(json!({"error": {"type": e.kind(), "message": e.to_string()}})),
        }
    }
    let mut norm = Normaliser { store_dir: store_dir.to_string(), ..Default::default() };
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let requests: Vec<Value> = seen.iter().map(|m| norm.messages(m)).collect();
    let history = norm.messages(&history);
    Ok(sorted(norm.finish(json!({"runs": runs, "requests": requests, "history": history}))))
}

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: harness_runner SCENARIO.json");
        return std::process::ExitCode::from(2);
    };
    let sc: Value = match std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{path}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let dir = std::env::temp_dir().join(format!("toolsmith-harness-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let store_dir = std::fs::canonicalize(&dir).unwrap_or(dir.clone()).to_string_lossy().into_owned();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let out = rt.block_on(run(&sc, &store_dir));
    let _ = std::fs::remove_dir_all(&dir);
    match out {
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
