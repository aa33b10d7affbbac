//! A run whose output retries run out says what was wrong with the model's last answer, after
//! Pydantic AI's "Exceeded maximum output retries (N)".

use serde_json::{Value, json};
use toolsmith::messages::{ModelResponse, ModelResponsePart, ThinkingPart, ToolCallPart};
use toolsmith::prelude::*;

fn calls(list: &[(&str, Value, &str)]) -> ModelResponse {
    ModelResponse::new(
        list.iter().map(|(n, a, id)| ModelResponsePart::ToolCall(ToolCallPart::new(*n, a.clone(), *id))).collect(),
    )
}

fn structured(model: FunctionModel) -> Agent<(), Value> {
    Agent::builder(model)
        .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_exhausted_output_budget_says_what_was_wrong_with_the_last_answer() {
    // Empty answers.
    let agent = Agent::builder(FunctionModel::sync(|_, _| ModelResponse::new(vec![]))).build().unwrap();
    let err = agent.run("hi").await.unwrap_err().to_string();
    assert!(err.starts_with("Exceeded maximum output retries (1)"), "{err}");
    assert!(err.contains("the model's last answer was empty"), "{err}");

    // Only thinking.
    let thinking = || ModelResponse::new(vec![ModelResponsePart::Thinking(ThinkingPart::new("hmm"))]);
    let agent = Agent::builder(FunctionModel::sync(move |_, _| thinking())).build().unwrap();
    let err = agent.run("hi").await.unwrap_err().to_string();
    assert!(err.contains("no text and no tool call, only: thinking"), "{err}");

    // Text that is not the output's JSON.
    let err = structured(FunctionModel::sync(|_, _| ModelResponse::text("{\"n\": \"many\"}")))
        .run("hi")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("Exceeded maximum output retries (1)"), "{err}");
    assert!(err.contains("text that is not valid output"), "{err}");
    assert!(err.contains("`n`: Input should be a valid integer"), "{err}");
    assert!(err.contains("\"many\""), "{err}");

    // An output tool call with invalid arguments.
    let err = structured(FunctionModel::sync(|_, _| calls(&[("final_result", json!({"m": 1}), "o1")])))
        .run("hi")
        .await
        .unwrap_err();
    assert!(matches!(err, AgentRunError::UnexpectedModelBehavior { .. }));
    let err = err.to_string();
    assert!(err.starts_with("Exceeded maximum output retries (1)"), "{err}");
    assert!(err.contains("`final_result` call was refused: 1 validation error: `n`: Field required"), "{err}");

    // Under the exhaustive strategy too.
    let agent = Agent::builder(FunctionModel::sync(|_, _| {
        calls(&[("final_result", json!({"n": "x"}), "o1"), ("final_result", json!({"n": "y"}), "o2")])
    }))
    .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
    .end_strategy(EndStrategy::Exhaustive)
    .build()
    .unwrap();
    let err = agent.run("hi").await.unwrap_err().to_string();
    assert!(err.starts_with("Exceeded maximum output retries (1)"), "{err}");
    assert!(err.contains("valid integer"), "{err}");

    // An output validator's retry.
    let hooks = Hooks::new().after_output_validate(|_ctx, _out, _v: Value| async move {
        Err::<Value, _>(ModelRetry::new("n must be prime").into())
    });
    let agent = Agent::builder(FunctionModel::sync(|_, _| calls(&[("final_result", json!({"n": 4}), "o1")])))
        .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
        .capability(hooks)
        .build()
        .unwrap();
    let err = agent.run("hi").await.unwrap_err().to_string();
    assert!(err.contains("n must be prime"), "{err}");
}

#[tokio::test]
async fn an_output_that_is_not_an_object_is_the_response_field_of_the_output_tool() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let s = seen.clone();
    let model = FunctionModel::sync(move |_, info| {
        *s.lock().unwrap() = Some(info.output_tools[0].parameters_json_schema.as_ref().clone());
        ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
            "final_result",
            json!({"response": [3, "4"]}),
            "o1",
        ))])
    });
    let agent = Agent::builder(model).output_type::<Vec<i64>>().build().unwrap();
    let result = agent.run("numbers").await.unwrap();
    // A tool takes an object: the list is its `response` (validated laxly, as any output).
    assert_eq!(result.output(), &vec![3, 4]);
    let schema = seen.lock().unwrap().clone().unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["response"]));
    assert_eq!(schema["properties"]["response"]["type"], "array");
}
