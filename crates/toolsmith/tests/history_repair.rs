//! `repair_messages` on generated histories: every call answered, no result without its call, no two requests in a row, nothing else lost, and repairing twice changes nothing.

use proptest::prelude::*;
use serde_json::json;
use toolsmith::messages::{
    INTERRUPTED_TOOL_RETURN_CONTENT, ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart,
    ToolCallPart, ToolOutcome, ToolReturnPart, UserPromptPart, repair_messages,
};

/// A message of a generated history: ids come from a small pool so that results, calls and
/// repeated ids meet.
#[derive(Debug, Clone)]
enum Gen {
    Prompt(u8),
    Calls(Vec<u8>),
    Results(Vec<u8>),
    Text(u8),
}

fn message(g: &Gen) -> ModelMessage {
    match g {
        Gen::Prompt(n) => ModelMessage::Request(ModelRequest::new(vec![ModelRequestPart::UserPrompt(
            UserPromptPart::new(format!("p{n}")),
        )])),
        Gen::Calls(ids) => ModelMessage::Response(ModelResponse::new(
            ids.iter()
                .map(|i| ModelResponsePart::ToolCall(ToolCallPart::new("t", json!({}), format!("c{i}"))))
                .collect(),
        )),
        Gen::Results(ids) => ModelMessage::Request(ModelRequest::new(
            ids.iter()
                .map(|i| ModelRequestPart::ToolReturn(ToolReturnPart::success("t", json!("ok"), format!("c{i}"))))
                .collect(),
        )),
        Gen::Text(n) => ModelMessage::Response(ModelResponse::text(format!("r{n}"))),
    }
}

fn history() -> impl Strategy<Value = Vec<ModelMessage>> {
    let ids = || prop::collection::vec(0u8..6, 0..4);
    let one = prop_oneof![
        any::<u8>().prop_map(Gen::Prompt),
        ids().prop_map(Gen::Calls),
        ids().prop_map(Gen::Results),
        any::<u8>().prop_map(Gen::Text),
    ];
    prop::collection::vec(one, 0..12).prop_map(|g| g.iter().map(message).collect())
}

fn prompts(history: &[ModelMessage]) -> Vec<String> {
    history
        .iter()
        .flat_map(|m| match m {
            ModelMessage::Request(r) => r
                .parts
                .iter()
                .filter_map(|p| match p {
                    ModelRequestPart::UserPrompt(u) => Some(format!("{:?}", u.content)),
                    _ => None,
                })
                .collect(),
            ModelMessage::Response(_) => Vec::new(),
        })
        .collect()
}

proptest! {
    #[test]
    fn repaired_histories_are_sendable(history in history()) {
        let repaired = repair_messages(history.clone(), true);
        // Nothing a person wrote is lost, and the responses stay as they were.
        prop_assert_eq!(prompts(&history), prompts(&repaired));
        let responses = |h: &[ModelMessage]| h.iter().filter(|m| matches!(m, ModelMessage::Response(_))).cloned().collect::<Vec<_>>();
        prop_assert_eq!(responses(&history), responses(&repaired));
        // No two requests in a row.
        for w in repaired.windows(2) {
            prop_assert!(!matches!((&w[0], &w[1]), (ModelMessage::Request(_), ModelMessage::Request(_))));
        }
        // Every call has a result after it, and every result a call before it.
        let returns_after = |at: usize| -> Vec<String> {
            repaired[at..].iter().flat_map(|m| match m {
                ModelMessage::Request(r) => r.parts.iter().filter_map(|p| match p {
                    ModelRequestPart::ToolReturn(t) => Some(t.tool_call_id.clone()),
                    _ => None,
                }).collect(),
                ModelMessage::Response(_) => Vec::new(),
            }).collect()
        };
        let mut called: Vec<String> = Vec::new();
        for (at, m) in repaired.iter().enumerate() {
            match m {
                ModelMessage::Response(r) => {
                    let later = returns_after(at);
                    for c in r.tool_calls() {
                        prop_assert!(later.contains(&c.tool_call_id), "call {} never answered", c.tool_call_id);
                        called.push(c.tool_call_id.clone());
                    }
                }
                ModelMessage::Request(r) => {
                    for p in &r.parts {
                        if let ModelRequestPart::ToolReturn(t) = p {
                            prop_assert!(called.contains(&t.tool_call_id), "result {} without a call", t.tool_call_id);
                            if t.outcome == ToolOutcome::Interrupted {
                                prop_assert_eq!(&t.content, &json!(INTERRUPTED_TOOL_RETURN_CONTENT));
                            }
                        }
                    }
                }
            }
        }
        // Repairing is idempotent.
        prop_assert_eq!(repair_messages(repaired.clone(), true), repaired);
    }

    #[test]
    fn the_last_responses_calls_stay_open_unless_asked(history in history()) {
        let kept = repair_messages(history.clone(), false);
        if let Some(ModelMessage::Response(last)) = history.last() {
            prop_assert_eq!(kept.last(), Some(&ModelMessage::Response(last.clone())));
        }
    }
}

#[test]
fn orphaned_results_go_and_consecutive_requests_merge_results_first() {
    let history = vec![
        message(&Gen::Prompt(1)),
        message(&Gen::Results(vec![9])),
        message(&Gen::Calls(vec![1])),
        message(&Gen::Prompt(2)),
        message(&Gen::Results(vec![1])),
    ];
    let repaired = repair_messages(history, true);
    assert_eq!(repaired.len(), 3, "{repaired:#?}");
    let ModelMessage::Request(last) = &repaired[2] else { panic!("{repaired:#?}") };
    assert!(matches!(&last.parts[0], ModelRequestPart::ToolReturn(t) if t.tool_call_id == "c1"));
    assert!(matches!(&last.parts[1], ModelRequestPart::UserPrompt(_)));
    let ModelMessage::Request(first) = &repaired[0] else { panic!("{repaired:#?}") };
    assert_eq!(first.parts.len(), 1);
}
