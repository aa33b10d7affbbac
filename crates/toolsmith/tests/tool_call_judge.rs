//! ToolCallJudge and ApprovalReviewer through the public API. The harness comparison is
//! tests/harness.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::agent::Deferrable;
use toolsmith::capability::tool_call_judge::{ApprovalReviewer, Decision, JudgeAnswer, ToolCallJudge};
use toolsmith::capability::{CapabilityRegistry, CapabilitySpec};
use toolsmith::deferred::ToolApproval;
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::AgentInfo;
use toolsmith::prelude::*;
use toolsmith::toolset::ToolSelector;

/// Delete a file.
#[tool]
fn rm(path: String) -> String {
    format!("removed {path}")
}

/// Calls `rm` on each path, then answers with what came back.
fn caller(paths: &'static [&'static str]) -> FunctionModel {
    FunctionModel::sync(move |messages, _| {
        let returns: Vec<String> = messages
            .iter()
            .filter_map(|m| match m {
                ModelMessage::Request(r) => Some(r),
                _ => None,
            })
            .flat_map(|r| r.parts.iter())
            .filter_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.content_text()),
                _ => None,
            })
            .collect();
        if returns.is_empty() && messages.len() == 1 {
            let calls = paths
                .iter()
                .enumerate()
                .map(|(i, p)| ModelResponsePart::ToolCall(ToolCallPart::new("rm", json!({"path": p}), format!("c{i}"))))
                .collect();
            return ModelResponse::new(calls);
        }
        ModelResponse::text(returns.join(" | "))
    })
}

/// A judging model answering `yes` for prompts that mention "danger"; it records the prompts.
fn judging(prompts: Arc<Mutex<Vec<String>>>) -> FunctionModel {
    FunctionModel::sync(move |messages: &[ModelMessage], info: &AgentInfo| judge_response(&prompts, messages, info))
}

/// The answer of [`judging`]'s model.
fn judge_response(prompts: &Mutex<Vec<String>>, messages: &[ModelMessage], info: &AgentInfo) -> ModelResponse {
    {
        let prompt = match messages.last() {
            Some(ModelMessage::Request(r)) => r
                .parts
                .iter()
                .find_map(|p| match p {
                    ModelRequestPart::UserPrompt(u) => Some(u.content.text()),
                    _ => None,
                })
                .unwrap_or_default(),
            _ => String::new(),
        };
        assert!(
            info.instructions.as_deref().unwrap_or_default().starts_with("Is it dangerous?\n\nAnswer this question")
        );
        let answer = if prompt.contains("danger") { "yes" } else { "no" };
        prompts.lock().unwrap().push(prompt);
        ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
            &info.output_tools[0].name,
            json!({"response": answer}),
            "j",
        ))])
    }
}

#[tokio::test]
async fn a_model_judge_blocks_and_allows() {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let verdicts = Arc::new(Mutex::new(Vec::new()));
    let log = verdicts.clone();
    let judge = ToolCallJudge::new(judging(prompts.clone()), "Is it dangerous?")
        .unwrap()
        .on_verdict(move |v| log.lock().unwrap().push((v.tool_call_id.clone(), v.verdict, v.answer)));
    let agent = Agent::builder(caller(&["/tmp/a", "/danger"])).tool(rm).capability(judge).build().unwrap();
    let out = agent.run("go").await.unwrap().output().clone();
    assert_eq!(
        out,
        "removed /tmp/a | The call to `rm` was blocked by a tool-call judge. Do not retry it; continue without it and tell the user the call was blocked."
    );
    assert_eq!(
        prompts.lock().unwrap()[0],
        "<tool_call>\n{\"tool_name\": \"rm\", \"arguments\": {\"path\": \"/tmp/a\"}}\n</tool_call>"
    );
    let mut verdicts = verdicts.lock().unwrap().clone();
    verdicts.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        verdicts,
        [
            ("c0".to_string(), Decision::Allow, Some(JudgeAnswer::No)),
            ("c1".to_string(), Decision::Block, Some(JudgeAnswer::Yes))
        ]
    );
}

#[tokio::test]
async fn a_function_judge_blocks_with_its_reason() {
    let judge = ToolCallJudge::<()>::from_fn(|_ctx, _tool, args: &Value| {
        let root = args["path"].as_str().unwrap_or_default().starts_with("/etc");
        async move {
            if root {
                (Decision::Block, Some("Files under /etc are off limits.".to_string()))
            } else {
                (Decision::Allow, None)
            }
        }
    })
    .tools(ToolSelector::names(["rm"]));
    let agent = Agent::builder(caller(&["/etc/passwd", "/tmp/x"])).tool(rm).capability(judge).build().unwrap();
    assert_eq!(agent.run("go").await.unwrap().output(), "Files under /etc are off limits. | removed /tmp/x");
}

#[tokio::test]
async fn ask_escalates_to_a_person_and_an_approved_call_runs() {
    let judge = ToolCallJudge::<()>::from_fn(|_, _, _| async { (Decision::Ask, None) });
    let agent = Agent::builder(caller(&["/x"])).tool(rm).capability(judge).allow_deferred().build().unwrap();
    let first = agent.run("go").await.unwrap();
    let Deferrable::Deferred(requests) = first.output() else { panic!("expected a deferred call") };
    assert_eq!(requests.approvals[0].tool_call_id, "c0");
    let results = requests.results().approve("c0", ToolApproval::approved());
    let second =
        agent.resume().message_history(first.all_messages().to_vec()).deferred_tool_results(results).await.unwrap();
    assert!(matches!(second.output(), Deferrable::Output(o) if o == "removed /x"));
}

#[tokio::test]
async fn the_reviewer_approves_low_risk_calls() {
    let reviewer = ApprovalReviewer::new(
        FunctionModel::sync(|messages, info| {
            // The call's arguments are in the prompt (the instructions mention "dangerous" too).
            let text = format!("{:?}", messages.last());
            let answer = if text.contains("/danger") { "yes" } else { "no" };
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                &info.output_tools[0].name,
                json!({"response": answer}),
                "r",
            ))])
        }),
        "Is it dangerous?",
    )
    .unwrap();
    let agent = Agent::builder(caller(&["/tmp/a", "/danger"]))
        .tool(Tool::from(rm).requires_approval(true))
        .capability(reviewer)
        .allow_deferred()
        .build()
        .unwrap();
    let run = agent.run("go").await.unwrap();
    let Deferrable::Deferred(requests) = run.output() else { panic!("expected a deferred call") };
    // The low-risk call was approved and ran; the other waits for a person.
    assert_eq!(requests.approvals.len(), 1);
    assert_eq!(requests.approvals[0].tool_call_id, "c1");
    assert!(format!("{:?}", run.all_messages()).contains("removed /tmp/a"));
}

#[test]
fn configuration_errors_are_typed() {
    let model = TestModel::default();
    assert!(ToolCallJudge::<()>::new(model.clone(), "  ").is_err());
    let judge = ToolCallJudge::<()>::new(model.clone(), "Risky?").unwrap();
    assert!(judge.clone().denial_message("Blocked {tool}").is_err());
    assert!(judge.clone().denial_message("Blocked {tool_name} {{ok}}").is_ok());
    assert!(judge.conversation_window(0).is_err());

    let registry = CapabilityRegistry::<()>::new();
    let spec = CapabilitySpec::from_json(
        r#"[{"ToolCallJudge": {"model": "test", "question": "Risky?", "tools": ["rm"], "on_uncertain": "ask", "include_conversation": true, "conversation_window": 100}},
            {"ApprovalReviewer": {"model": "test", "question": "Risky?", "tools": ["rm"]}}]"#,
    )
    .unwrap();
    assert_eq!(registry.load(&spec).unwrap().capabilities.len(), 2);
    let bad = CapabilitySpec::from_json(
        r#"[{"ToolCallJudge": {"model": "test", "question": "Risky?", "on_uncertain": "maybe"}}]"#,
    )
    .unwrap();
    let err = registry.load(&bad).unwrap_err();
    assert!(err.message.contains("unknown variant `maybe`"), "{}", err.message);
}

#[tokio::test]
async fn the_judges_requests_count_in_the_runs_usage() {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    // The judging model reports what each judgement cost.
    let costly = FunctionModel::sync(move |messages: &[ModelMessage], info: &AgentInfo| {
        let mut response = judge_response(&prompts, messages, info);
        response.usage = toolsmith::usage::RequestUsage::new(100, 7);
        response
    });
    let judge = ToolCallJudge::new(costly, "Is it dangerous?").unwrap();
    let agent = Agent::builder(caller(&["/tmp/a", "/danger"])).tool(rm).capability(judge).build().unwrap();
    let result = agent.run("go").await.unwrap();
    // The run's two requests (the caller reports no tokens) and the two judgements.
    assert_eq!(result.usage().requests, 4);
    assert_eq!((result.usage().input_tokens, result.usage().output_tokens), (200, 14));
}
