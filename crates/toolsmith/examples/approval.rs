//! Human in the loop: a tool that needs approval, decided on the command line.
//!
//! The agent (a scripted model, offline) wants to delete two files and update a protected one.
//! The run stops with the calls that need a decision; you answer each with y or n (no answer
//! means no), and the run resumes from what was saved, as it would in another process: the
//! history and the pending calls (`DeferredToolRequests`), so that each decision is bound to the
//! call you were shown. A decision is used once: resuming the same saved state again is refused.
//!
//! ```sh
//! cargo run --example approval
//! printf 'y\nn\ny\n' | cargo run --example approval
//! ```

use std::io::{BufRead, Write};

use serde_json::json;
use toolsmith::deferred::{DeferredToolRequests, ResumeRefusal, ToolApproval};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolOutcome, parse_history,
};
use toolsmith::prelude::*;

/// Delete a file.
#[tool(requires_approval)]
fn delete_file(path: String) -> String {
    format!("File '{path}' deleted")
}

/// Update a file. Files ending in `.env` need approval.
#[tool]
fn update_file(ctx: RunContext, path: String, content: String) -> Result<String, ApprovalRequired> {
    if path.ends_with(".env") && !ctx.tool_call_approved {
        return Err(ApprovalRequired::with_metadata(json!({"reason": "protected", "path": path})));
    }
    Ok(format!("File '{path}' updated: '{content}'"))
}

fn scripted_model() -> FunctionModel {
    FunctionModel::sync(|messages, _| {
        if messages.len() == 1 {
            let call = |args, id| ModelResponsePart::ToolCall(ToolCallPart::new("delete_file", args, id));
            return ModelResponse::new(vec![
                call(json!({"path": "__init__.py"}), "del_init"),
                call(json!({"path": "notes.txt"}), "del_notes"),
                ModelResponsePart::ToolCall(ToolCallPart::new(
                    "update_file",
                    json!({"path": ".env", "content": "DEBUG=1"}),
                    "update_env",
                )),
            ]);
        }
        let mut summary = Vec::new();
        for m in messages {
            if let ModelMessage::Request(r) = m {
                for p in &r.parts {
                    if let ModelRequestPart::ToolReturn(t) = p {
                        let verb = if t.outcome == ToolOutcome::Denied { "denied" } else { "done" };
                        summary.push(format!("{} ({verb}): {}", t.tool_name, t.content_text()));
                    }
                }
            }
        }
        ModelResponse::text(summary.join("\n"))
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder(scripted_model()).tools([delete_file, update_file]).allow_deferred().build()?;

    let first = agent.run("Delete __init__.py and notes.txt, and turn on debug in .env").run_sync()?;
    let Some(requests) = first.output().deferred() else {
        println!("{}", first.output().output().map(String::as_str).unwrap_or_default());
        return Ok(());
    };
    // What a server stores between the two requests of a person's session: the history and
    // the pending calls it ends with.
    let saved_history = serde_json::to_string(first.all_messages())?;
    let saved_requests = serde_json::to_string(requests)?;

    // The next request: the decisions are built from the stored requests, bound to their calls.
    let requests: DeferredToolRequests = serde_json::from_str(&saved_requests)?;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut results = requests.results();
    for call in &requests.approvals {
        let why = requests.metadata.get(&call.tool_call_id).map(|m| format!(" {m}")).unwrap_or_default();
        // Arguments as an object: a provider may send them as a JSON string.
        let args = call.args_as_object().map(serde_json::Value::Object).unwrap_or_else(|_| call.args.clone());
        print!("Allow {}({args}){why}? [y/N] ", call.tool_name);
        std::io::stdout().flush()?;
        let answer = lines.next().transpose()?.unwrap_or_default();
        let approved = answer.trim().eq_ignore_ascii_case("y");
        println!("{}", if approved { "approved" } else { "denied" });
        let decision = if approved { ToolApproval::approved() } else { ToolApproval::denied_with("The user said no.") };
        results = results.approve(call.tool_call_id.clone(), decision);
    }

    let history = parse_history(&saved_history)?;
    let second = agent.resume().message_history(history.clone()).deferred_tool_results(results.clone()).run_sync()?;
    println!();
    println!("{}", second.output().output().map(String::as_str).unwrap_or("(more decisions needed)"));

    // The same saved state resumed again (a replayed request, a double click): refused, nothing
    // runs twice. To go on, continue from `second.all_messages()`.
    match agent.resume().message_history(history).deferred_tool_results(results).run_sync() {
        Err(AgentRunError::User(e)) if matches!(e.refusal.as_deref(), Some(ResumeRefusal::AlreadyResumed { .. })) => {
            println!("\n(resuming the same decisions again was refused: {e})");
        }
        other => {
            return Err(format!("a second resume was not refused: {:?}", other.map(|r| r.all_messages().len())).into());
        }
    }
    Ok(())
}
