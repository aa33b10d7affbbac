//! Human in the loop: a tool that needs approval, decided on the command line.
//!
//! The agent (a scripted model, offline) wants to delete two files and update a protected one.
//! The run stops with the calls that need a decision; you answer each with y or n (no answer
//! means no), and the run resumes from the saved history, as it would in another process.
//!
//! ```sh
//! cargo run --example approval
//! printf 'y\nn\ny\n' | cargo run --example approval
//! ```

use std::io::{BufRead, Write};

use serde_json::json;
use toolsmith::deferred::{DeferredToolResults, ToolApproval};
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
    // What a server would store between the two requests of a person's session.
    let saved = serde_json::to_string(first.all_messages())?;

    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut results = DeferredToolResults::new();
    for call in &requests.approvals {
        let why = requests.metadata.get(&call.tool_call_id).map(|m| format!(" {m}")).unwrap_or_default();
        print!("Allow {}({}){why}? [y/N] ", call.tool_name, call.args);
        std::io::stdout().flush()?;
        let answer = lines.next().transpose()?.unwrap_or_default();
        let approved = answer.trim().eq_ignore_ascii_case("y");
        println!("{}", if approved { "approved" } else { "denied" });
        let decision = if approved { ToolApproval::approved() } else { ToolApproval::denied_with("The user said no.") };
        results = results.approve(call.tool_call_id.clone(), decision);
    }

    let history = parse_history(&saved)?;
    let second = agent.resume().message_history(history).deferred_tool_results(results).run_sync()?;
    println!();
    println!("{}", second.output().output().map(String::as_str).unwrap_or("(more decisions needed)"));
    Ok(())
}
