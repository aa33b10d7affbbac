//! RepairToolArguments through the public API. The harness comparison is tests/harness.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith::capability::{CapabilityRegistry, CapabilitySpec, RepairToolArguments};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;

/// Plan a trip.
#[tool]
fn plan(city: String, days: i64) -> String {
    format!("{days} days in {city}")
}

/// Calls `plan` once with each raw argument string, then answers with the returns and retries.
fn caller(raws: Vec<&'static str>) -> (FunctionModel, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let model = FunctionModel::sync(move |messages, _| {
        if messages.len() == 1 {
            let calls = raws
                .iter()
                .enumerate()
                .map(|(i, raw)| ModelResponsePart::ToolCall(ToolCallPart::new("plan", json!(raw), format!("c{i}"))))
                .collect();
            return ModelResponse::new(calls);
        }
        if let Some(ModelMessage::Request(r)) = messages.last() {
            for p in &r.parts {
                match p {
                    ModelRequestPart::ToolReturn(t) => log.lock().unwrap().push(t.content_text()),
                    ModelRequestPart::RetryPrompt(_) => log.lock().unwrap().push("retry".into()),
                    _ => {}
                }
            }
        }
        ModelResponse::text("done")
    });
    (model, seen)
}

#[tokio::test]
async fn malformed_arguments_are_repaired_and_counted() {
    let (model, seen) = caller(vec![
        r#"{"city": "Paris", "days": 3,}"#,
        "{'city': 'Rome', 'days': 2}",
        "```json\n{\"city\": \"Oslo\", \"days\": 1}\n```",
        r#"{"city": "Lima", "days": 4"#,
        r#"{city: "Kyiv", days: 5}"#,
        r#"{"city": "Pune", "days": 6}"#,
    ]);
    let repair = RepairToolArguments::new();
    let agent = Agent::builder(model).tool(plan).capability(repair.clone()).build().unwrap();
    agent.run("go").await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        ["3 days in Paris", "2 days in Rome", "1 days in Oslo", "4 days in Lima", "5 days in Kyiv", "6 days in Pune"]
    );
    // The valid call was not counted.
    assert_eq!((repair.counts().malformed, repair.counts().repaired), (5, 5));
}

#[tokio::test]
async fn a_doubled_encoding_is_unwrapped() {
    let (model, seen) = caller(vec![r#""{\"city\": \"Paris\", \"days\": 3}""#]);
    let repair = RepairToolArguments::new();
    let agent = Agent::builder(model).tool(plan).capability(repair.clone()).build().unwrap();
    agent.run("go").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["3 days in Paris"]);
    assert_eq!(repair.counts().repaired, 1);
}

#[tokio::test]
async fn what_cannot_be_repaired_goes_back_to_the_model_as_today() {
    // A repaired call that misses a field still fails validation; the model is asked again.
    let (model, seen) = caller(vec!["{'city': 'Paris',}"]);
    let repair = RepairToolArguments::new();
    let agent = Agent::builder(model).tool(plan).retries(2).capability(repair.clone()).build().unwrap();
    agent.run("go").await.unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.len() == 1 && seen[0].contains("Field required"), "{seen:?}");
    assert_eq!((repair.counts().malformed, repair.counts().repaired), (1, 1));
}

#[tokio::test]
async fn without_the_capability_malformed_arguments_are_a_retry() {
    let (model, seen) = caller(vec![r#"{"city": "Paris", "days": 3,}"#]);
    let agent = Agent::builder(model).tool(plan).retries(2).build().unwrap();
    agent.run("go").await.unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.len() == 1 && seen[0].contains("Invalid JSON: trailing comma"), "{seen:?}");
}

#[test]
fn from_a_spec() {
    let registry = CapabilityRegistry::<()>::new();
    let spec = CapabilitySpec::from_json(r#"["RepairToolArguments", {"RepairToolArguments": {}}]"#).unwrap();
    assert_eq!(registry.load(&spec).unwrap().capabilities.len(), 2);
    let bad = CapabilitySpec::from_json(r#"[{"RepairToolArguments": {"strict": true}}]"#).unwrap();
    let err = registry.load(&bad).unwrap_err();
    assert!(err.message.contains("RepairToolArguments has no options"), "{}", err.message);
}
