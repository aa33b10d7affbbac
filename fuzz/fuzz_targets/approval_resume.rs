//! Resuming deferred calls from a history an attacker edited: a run ends with calls waiting for
//! approval or an external result; the input edits the stored history (arguments, tool names,
//! ids, duplicated or removed calls) and gives decisions for any ids, bound to the requests or
//! built by hand. Whatever it does, no tool may run with a tool or arguments other than those of a
//! call that was pending and approved, no approved call may run twice, and the same history
//! resumed again with the same results runs nothing.

#![no_main]

use std::sync::{Arc, Mutex};

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolsmith::agent::Deferrable;
use toolsmith::deferred::{DeferredToolResults, ToolApproval};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;

type Log = Arc<Mutex<Vec<(String, String)>>>;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PathArgs {
    path: String,
}

const TOOLS: [&str; 4] = ["delete_file", "wipe_disk", "lookup", "missing"];
const IDS: [&str; 5] = ["d1", "d2", "e1", "x9", ""];

#[derive(Arbitrary, Debug)]
enum Edit {
    SetPath { call: u8, path: String },
    SetArgs { call: u8, raw: String },
    Rename { call: u8, tool: u8 },
    SetId { call: u8, id: u8 },
    Duplicate { call: u8 },
    Remove { call: u8 },
}

#[derive(Arbitrary, Debug)]
enum Decision {
    Approve { id: u8 },
    ApproveWith { id: u8, path: String },
    Deny { id: u8 },
    External { id: u8, value: String },
}

#[derive(Arbitrary, Debug)]
struct Input {
    edits: Vec<Edit>,
    decisions: Vec<Decision>,
    bound: bool,
}

fn tools(log: &Log) -> Vec<Tool<()>> {
    let mut out = Vec::new();
    for name in ["delete_file", "wipe_disk"] {
        let l = log.clone();
        out.push(
            Tool::new(name, move |_ctx: RunContext<()>, a: PathArgs| {
                let l = l.clone();
                async move {
                    l.lock().unwrap().push((name.to_string(), a.path.clone()));
                    Ok::<_, ToolError>(format!("{name} {}", a.path))
                }
            })
            .requires_approval(true),
        );
    }
    out
}

fn first_response() -> ModelResponse {
    ModelResponse::new(vec![
        ModelResponsePart::ToolCall(ToolCallPart::new("delete_file", json!({"path": "a.txt"}), "d1")),
        ModelResponsePart::ToolCall(ToolCallPart::new("wipe_disk", json!({"path": "/tmp/x"}), "d2")),
        ModelResponsePart::ToolCall(ToolCallPart::new("lookup", json!({"path": "q"}), "e1")),
    ])
}

fn last_calls(history: &mut [ModelMessage]) -> Option<&mut Vec<ModelResponsePart>> {
    history.iter_mut().rev().find_map(|m| match m {
        ModelMessage::Response(r) => Some(&mut r.parts),
        _ => None,
    })
}

fn apply(parts: &mut Vec<ModelResponsePart>, edit: &Edit) {
    let n = parts.len();
    if n == 0 {
        return;
    }
    let at = |c: &u8| *c as usize % n;
    match edit {
        Edit::SetPath { call, path } => {
            if let ModelResponsePart::ToolCall(c) = &mut parts[at(call)] {
                c.args = json!({ "path": path });
            }
        }
        Edit::SetArgs { call, raw } => {
            if let ModelResponsePart::ToolCall(c) = &mut parts[at(call)] {
                c.args = Value::String(raw.clone());
            }
        }
        Edit::Rename { call, tool } => {
            if let ModelResponsePart::ToolCall(c) = &mut parts[at(call)] {
                c.tool_name = TOOLS[*tool as usize % TOOLS.len()].to_string();
            }
        }
        Edit::SetId { call, id } => {
            if let ModelResponsePart::ToolCall(c) = &mut parts[at(call)] {
                c.tool_call_id = IDS[*id as usize % IDS.len()].to_string();
            }
        }
        Edit::Duplicate { call } => {
            let copy = parts[at(call)].clone();
            parts.push(copy);
        }
        Edit::Remove { call } => {
            parts.remove(at(call));
        }
    }
}

fuzz_target!(|input: Input| {
    if input.edits.len() > 8 || input.decisions.len() > 8 {
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let log: Log = Arc::default();
        let model =
            FunctionModel::sync(
                |messages, _| {
                    if messages.len() == 1 { first_response() } else { ModelResponse::text("done") }
                },
            );
        let external = toolsmith::toolset::ExternalToolset::new(vec![toolsmith::ToolDefinition::new(
            "lookup",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        )]);
        let agent: Agent<(), Deferrable<String>> =
            Agent::builder(model).tools(tools(&log)).toolset(external).allow_deferred().build().unwrap();
        let first = agent.run("go").await.unwrap();
        let requests = first.output().deferred().unwrap().clone();
        // What the user saw: the pending approvals, by id.
        let pending: Vec<(String, String, Value)> =
            requests.approvals.iter().map(|c| (c.tool_call_id.clone(), c.tool_name.clone(), c.args.clone())).collect();

        let mut history = first.all_messages().to_vec();
        if let Some(parts) = last_calls(&mut history) {
            for edit in &input.edits {
                apply(parts, edit);
            }
        }
        let mut results = if input.bound { requests.results() } else { DeferredToolResults::new() };
        let mut approved: Vec<(String, String)> = Vec::new();
        for d in &input.decisions {
            match d {
                Decision::Approve { id } => {
                    let id = IDS[*id as usize % IDS.len()];
                    if let Some((_, tool, args)) = pending.iter().find(|(p, ..)| p == id) {
                        approved.push((tool.clone(), args["path"].as_str().unwrap_or_default().to_string()));
                    }
                    results = results.approve(id, true);
                }
                Decision::ApproveWith { id, path } => {
                    let id = IDS[*id as usize % IDS.len()];
                    if let Some((_, tool, _)) = pending.iter().find(|(p, ..)| p == id) {
                        // Overriding arguments is the approver's own decision.
                        approved.push((tool.clone(), path.clone()));
                    }
                    results = results.approve(id, ToolApproval::approved_with(json!({ "path": path })));
                }
                Decision::Deny { id } => results = results.approve(IDS[*id as usize % IDS.len()], false),
                Decision::External { id, value } => {
                    results = results.call_result(IDS[*id as usize % IDS.len()], Value::String(value.clone()))
                }
            }
        }
        let _ = agent.resume().message_history(history.clone()).deferred_tool_results(results.clone()).await;
        // An approval is used once: the same history resumed again runs nothing.
        let once = log.lock().unwrap().len();
        let _ = agent.resume().message_history(history).deferred_tool_results(results).await;
        assert_eq!(log.lock().unwrap().len(), once, "a second resume ran calls; input {input:?}");
        let ran = log.lock().unwrap().clone();
        let mut allowed = approved;
        for call in &ran {
            match allowed.iter().position(|a| a == call) {
                Some(i) => {
                    allowed.remove(i);
                }
                None => panic!("{call:?} ran without an approval of that call; pending {pending:?}; input {input:?}"),
            }
        }
    });
});
