//! Usage across runs: `RunUsage` adds up, and a run started from the usage so far
//! (`RunBuilder::usage`) is bound by its limits as a whole conversation, a pause for approval
//! included.

use serde_json::json;
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;

fn calls(parts: &[(&str, serde_json::Value, &str)]) -> ModelResponse {
    ModelResponse::new(
        parts.iter().map(|(n, a, id)| ModelResponsePart::ToolCall(ToolCallPart::new(*n, a.clone(), *id))).collect(),
    )
}

/// Delete a file.
#[tool(requires_approval)]
fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

/// Echo the text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// A model that calls `delete_file`, then `echo`, then answers with text (100 input and 10
/// output tokens a response).
fn costly_model() -> FunctionModel {
    FunctionModel::sync(|messages, _| {
        let responses = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
        let mut r = match responses {
            0 => calls(&[("delete_file", json!({"path": "a.txt"}), "del")]),
            1 => calls(&[("echo", json!({"text": "hi"}), "e1")]),
            _ => ModelResponse::text("done"),
        };
        r.usage = toolsmith::usage::RequestUsage::new(100, 10);
        r
    })
}

#[tokio::test]
async fn usage_limits_bound_a_conversation_across_a_pause() {
    let agent = Agent::builder(costly_model()).tools([delete_file, echo]).allow_deferred().build().unwrap();
    // Each attempt pauses a conversation of its own (a deferral is resumed once).
    let paused = || async {
        let first = agent.run("clean up").await.unwrap();
        assert_eq!((first.usage().requests, first.usage().total_tokens()), (1, 110));
        let requests = first.output().deferred().unwrap().clone();
        let usage = first.usage().clone();
        let resume = agent
            .resume()
            .message_history(first.all_messages().to_vec())
            .deferred_tool_results(requests.results().approve("del", true));
        (resume, usage)
    };

    // The resumed run alone makes two requests (220 tokens): within limits of 2 requests and
    // 300 tokens. Started from the usage so far, it crosses them.
    let (resume, usage) = paused().await;
    let err = resume.usage(usage).usage_limits(UsageLimits::new().request_limit(2)).await.unwrap_err();
    assert!(
        matches!(&err, AgentRunError::UsageLimitExceeded { message } if message.contains("request_limit of 2")),
        "{err:?}"
    );
    let limits = UsageLimits::unlimited().total_tokens_limit(300);
    let (resume, usage) = paused().await;
    let err = resume.usage(usage.clone()).usage_limits(limits.clone()).await.unwrap_err();
    assert!(
        matches!(&err, AgentRunError::UsageLimitExceeded { message } if message.contains("total_tokens=330")),
        "{err:?}"
    );

    // A run that starts past a token limit makes no request.
    let mut spent = usage.clone();
    spent.input_tokens += 500;
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let s = seen.clone();
    let counting = FunctionModel::sync(move |_, _| {
        s.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ModelResponse::text("more")
    });
    let err = agent.run("more").model(counting).usage(spent).usage_limits(limits.clone()).await.unwrap_err();
    assert!(matches!(err, AgentRunError::UsageLimitExceeded { .. }), "{err:?}");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 0);

    // Without the usage so far the same limits let it through, and the total is the sum.
    let (resume, usage) = paused().await;
    let done = resume.usage_limits(limits).await.unwrap();
    assert_eq!(done.usage().requests, 2);
    let total = usage + done.usage();
    assert_eq!((total.requests, total.tool_calls, total.total_tokens()), (3, 2, 330));
}
