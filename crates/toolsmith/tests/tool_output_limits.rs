//! ToolOutputLimits through the public API: truncation, spilling with `read_tool_result`, stores
//! that outlive a run, specs. The harness comparison is tests/harness (compare.py).

use std::collections::HashMap;

use serde_json::{Value, json};
use toolsmith::capability::tool_output_limits::{
    Band, FileStore, MemoryStore, Spill, Summarize, ToolOutputLimits, Truncate, TruncationStrategy,
};
use toolsmith::capability::{CapabilityRegistry, CapabilitySpec};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;

fn lines(n: usize) -> String {
    (0..n).map(|i| format!("row {i}")).collect::<Vec<_>>().join("\n")
}

fn big_tool(n: usize) -> Tool<()> {
    Tool::from_schema(
        "big",
        "A big answer.",
        json!({"type": "object", "properties": {}}),
        move |_ctx, _args| async move { Ok(ToolOutput::Value(Value::String(lines(n)))) },
    )
}

/// The tool returns of the last request the model saw.
fn returns(messages: &[ModelMessage]) -> Vec<(String, Value)> {
    messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => Some(r),
            _ => None,
        })
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some((t.tool_name.clone(), t.content.clone())),
            _ => None,
        })
        .collect()
}

fn handle_in(text: &str) -> String {
    let start = text.find("stored to handle '").expect("a spill marker") + "stored to handle '".len();
    text[start..].split('\'').next().unwrap_or_default().to_string()
}

/// Calls `big`, then reads the spill back with `args`, then answers.
fn reader(read_args: Value) -> FunctionModel {
    FunctionModel::sync(move |messages, _| {
        let got = returns(messages);
        match got.len() {
            0 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("big", json!({}), "c1"))]),
            1 => {
                let mut args = read_args.clone();
                args["handle"] = json!(handle_in(got[0].1.as_str().unwrap_or_default()));
                ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("read_tool_result", args, "r1"))])
            }
            _ => ModelResponse::text(got[1].1.as_str().unwrap_or_default()),
        }
    })
}

#[tokio::test]
async fn truncation_keeps_head_and_tail_with_the_harness_marker() {
    let model = FunctionModel::sync(|messages, _| match returns(messages).pop() {
        None => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("big", json!({}), "c1"))]),
        Some((_, content)) => ModelResponse::text(content.as_str().unwrap_or_default()),
    });
    let agent = Agent::builder(model)
        .tool(big_tool(100))
        .capability(ToolOutputLimits::new().bands([Band::new(200, Truncate::new().max_chars(150))]))
        .build()
        .unwrap();
    let out = agent.run("go").await.unwrap().output().clone();
    assert_eq!(
        out,
        "row 0\nrow 1\nrow 2\nrow 3\n\n[truncated: 630 chars omitted from the middle; showing first 23 + last 36 of 689 chars]\n\n4\nrow 95\nrow 96\nrow 97\nrow 98\nrow 99"
    );
    assert!(out.chars().count() <= 150);
}

#[tokio::test]
async fn a_tail_truncation_and_a_small_return_pass_as_the_harness_says() {
    let model = FunctionModel::sync(|messages, _| match returns(messages).pop() {
        None => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("big", json!({}), "c1"))]),
        Some((_, content)) => ModelResponse::text(content.as_str().unwrap_or_default()),
    });
    let limits = ToolOutputLimits::new()
        .bands([])
        .per_tool("big", [Band::new(200, Truncate::new().strategy(TruncationStrategy::Tail).max_chars(60))]);
    let agent = Agent::builder(model).tool(big_tool(100)).capability(limits).build().unwrap();
    let out = agent.run("go").await.unwrap().output().clone();
    assert_eq!(out, "[... output truncated, showing last 14 chars]\n\nrow 98\nrow 99");
}

#[tokio::test]
async fn a_spill_is_paged_back_with_read_tool_result() {
    let store = MemoryStore::new();
    let limits = ToolOutputLimits::new().store(store.clone());
    let agent = Agent::builder(reader(json!({"offset": 10, "limit": 3})))
        .tool(big_tool(3000))
        .capability(limits)
        .build()
        .unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(store.len(), 1);
    let handle = handle_in(returns(result.all_messages())[0].1.as_str().unwrap());
    assert_eq!(
        result.output(),
        &format!("[handle '{handle}': 3,000 matching line(s); showing 3]\nrow 10\nrow 11\nrow 12")
    );
    // The spill's keys are on the return's metadata.
    let metadata = result
        .all_messages()
        .iter()
        .find_map(|m| match m {
            ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
                ModelRequestPart::ToolReturn(t) if t.tool_name == "big" => t.metadata.clone(),
                _ => None,
            }),
            _ => None,
        })
        .unwrap();
    assert_eq!(metadata["overflow_handle"], json!(handle));
    assert_eq!(metadata["overflow_bytes"], json!(lines(3000).len()));
}

#[tokio::test]
async fn a_file_store_outlives_the_capability_that_wrote_it() {
    let dir = std::env::temp_dir().join(format!("toolsmith-tol-test-{}", std::process::id()));
    let first = Agent::builder(reader(json!({"limit": 1})))
        .tool(big_tool(3000))
        .capability(ToolOutputLimits::new().store(FileStore::new(&dir)))
        .build()
        .unwrap();
    let run = first.run("go").await.unwrap();
    let handle = handle_in(returns(run.all_messages())[0].1.as_str().unwrap());
    // A new capability on the same directory reads the spill of the earlier run.
    let later = Agent::builder(FunctionModel::sync({
        let handle = handle.clone();
        // The history holds the earlier run's two returns; the third is this run's page.
        move |messages, _| match returns(messages).get(2) {
            Some((_, content)) => ModelResponse::text(content.as_str().unwrap_or_default()),
            None => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "read_tool_result",
                json!({"handle": handle, "from_end": true, "limit": 1}),
                "r9",
            ))]),
        }
    }))
    .capability(ToolOutputLimits::new().store(FileStore::new(&dir)))
    .build()
    .unwrap();
    let out = later.run("again").message_history(run.all_messages().to_vec()).await.unwrap();
    assert_eq!(out.output(), &format!("[handle '{handle}': 3,000 matching line(s); showing 1]\nrow 2999"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_failed_summary_falls_back_to_its_then() {
    let model = FunctionModel::sync(|messages, _| match returns(messages).pop() {
        None => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("big", json!({}), "c1"))]),
        Some((_, content)) => ModelResponse::text(content.as_str().unwrap_or_default()),
    });
    let summarize = Summarize::with_fn(|_tool, _text| async { Err("down".to_string()) })
        .then(Spill::new().preview_chars(10).then(Truncate::new()));
    let agent = Agent::builder(model)
        .tool(big_tool(100))
        .capability(ToolOutputLimits::new().bands([Band::new(100, summarize)]))
        .build()
        .unwrap();
    let out = agent.run("go").await.unwrap().output().clone();
    assert!(out.starts_with("[Tool output too large (689 chars); stored to handle '"), "{out}");
    assert!(out.ends_with("row 0\n...[679 chars omitted]...\now 99"), "{out}");
}

#[test]
fn specs_use_the_harness_names() {
    let spec = CapabilitySpec::from_json(
        r#"[{"ToolOutputLimits": {"bands": [{"over": 100000, "action": {"Spill": {"then": "Truncate"}}},
                                          {"over": 5000, "action": {"Truncate": {"strategy": "tail", "max_chars": 2000}}}],
                                "per_tool": {"read_file": [{"over": 8000, "action": {"Truncate": {"strategy": "head"}}}]},
                                "tool_filter": ["read_file", "run_shell"], "over_tokens": false, "strip_ansi": true,
                                "serializer": "json_lines", "store": "memory"}}]"#,
    )
    .unwrap();
    let registry = CapabilityRegistry::<()>::new();
    assert_eq!(registry.load(&spec).unwrap().capabilities.len(), 1);

    for (bad, message) in [
        (r#"[{"ToolOutputLimits": {"bands": [{"over": 1, "action": "Squash"}]}}]"#, "unknown action 'Squash'"),
        (r#"[{"ToolOutputLimits": {"bandz": []}}]"#, "unknown field `bandz`"),
        (
            r#"[{"ToolOutputLimits": {"bands": [{"over": 1, "action": {"Summarize": {"function": "mine"}}}]}}]"#,
            "unknown summariser 'mine'",
        ),
        (r#"[{"ToolOutputLimits": {"summary_prompt": "no placeholders"}}]"#, "must contain both"),
    ] {
        let err = registry.load(&CapabilitySpec::from_json(bad).unwrap()).unwrap_err();
        assert!(err.message.contains("capabilities[0]"), "{}", err.message);
        assert!(err.message.contains(message), "{}", err.message);
    }

    // A summariser is named by registering the capability with the functions it may use.
    let summarizers = HashMap::from([(
        "first_line".to_string(),
        Summarize::with_fn(|_, text: String| async move { Ok(text.lines().next().unwrap_or_default().to_string()) }),
    )]);
    let registry = CapabilityRegistry::<()>::new().register("ToolOutputLimits", move |args| {
        ToolOutputLimits::from_spec_with(args.value(), &summarizers)
            .map(toolsmith::capability::BoxedCapability::new)
            .map_err(|e| args.error(e))
    });
    let spec = CapabilitySpec::from_json(
        r#"[{"ToolOutputLimits": {"bands": [{"over": 10, "action": {"Summarize": {"function": "first_line"}}}]}}]"#,
    )
    .unwrap();
    assert!(registry.load(&spec).is_ok());
}

/// The harness capabilities in one YAML spec, with the harness's names and options.
#[cfg(feature = "yaml")]
#[test]
fn a_yaml_spec_with_the_harness_capabilities() {
    let spec = CapabilitySpec::from_yaml(
        r#"
capabilities:
  - ToolOutputLimits:
      bands:
        - {over: 100000, action: {Spill: {then: Truncate}}}
        - {over: 5000, action: {Truncate: {strategy: tail, max_chars: 2000, keep_tail_lines: 2}}}
      per_tool: {read_file: [{over: 8000, action: {Truncate: {strategy: head}}}]}
      store: {LocalFileStore: {cleanup_after: 21600}}
  - RepairToolArguments
  - CompactRetryHistory: {keep_last: 1}
  - ToolCallJudge: {model: test, question: Would this destroy data?, tools: [rm], on_uncertain: ask}
  - ApprovalReviewer: {model: test, question: Could this leak secrets?}
"#,
    )
    .unwrap();
    assert_eq!(CapabilityRegistry::<()>::new().load(&spec).unwrap().capabilities.len(), 5);
}
