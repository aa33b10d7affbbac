//! What a browser sends to a UI endpoint, from anyone: the bytes of an AG-UI `RunAgentInput` or a
//! Vercel AI chat request (the first byte picks which). Reading it must never panic; what it
//! gives must be sound: the history serialises and reads back as it is, and the decisions and
//! results, bound to the calls a conversation waits on, answer exactly those calls, each in its
//! own way (an approval only by a decision with the call's own arguments, an outside call only by
//! a result).

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolsmith::deferred::DeferredToolRequests;
use toolsmith::messages::{ModelMessage, ToolCallPart};
use toolsmith_ui::UiRunInput;
use toolsmith_ui::ag_ui::RunAgentInput;
use toolsmith_ui::vercel_ai::VercelRequest;

fn pending() -> DeferredToolRequests {
    let mut d = DeferredToolRequests::default();
    d.approvals.push(ToolCallPart::new("delete", json!({"path": "a.txt"}), "c1"));
    d.approvals.push(ToolCallPart::new("wipe", json!({}), "c3"));
    d.calls.push(ToolCallPart::new("external", json!({"q": 1}), "c2"));
    d
}

/// Arguments as a value (a JSON string of them parsed).
fn as_value(args: &Value) -> Value {
    match args {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| args.clone()),
        other => other.clone(),
    }
}

fn check(input: UiRunInput) {
    let text = serde_json::to_string(&input.history).expect("a history read from a request serialises");
    let back: Vec<ModelMessage> = serde_json::from_str(&text).expect("and reads back");
    assert_eq!(back, input.history, "the history reads back as it was");
    let pending = pending();
    if let Ok(results) = input.deferred_results(&pending) {
        let mut approvals: Vec<&String> = results.approvals.keys().collect();
        approvals.sort();
        assert_eq!(approvals, ["c1", "c3"], "every waiting approval decided, nothing else");
        let calls: Vec<&String> = results.calls.keys().collect();
        assert_eq!(calls, ["c2"], "the outside call answered, nothing else");
        for d in &input.decisions {
            let call = pending.approvals.iter().find(|c| c.tool_call_id == d.tool_call_id);
            let call = call.expect("a decision accepted names a waiting approval");
            if let Some(shown) = &d.shown_args {
                assert_eq!(as_value(shown), call.args, "a decision accepted was made on the call's own arguments");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((which, body)) = data.split_first() else { return };
    let input = if which % 2 == 0 {
        RunAgentInput::from_json(body).and_then(|r| r.to_run_input())
    } else {
        VercelRequest::from_json(body).and_then(|r| r.to_run_input())
    };
    if let Ok(input) = input {
        check(input);
    }
});
