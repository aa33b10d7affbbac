//! Output modes: structured output through the output tool (default), the provider's response
//! format (native) or the instructions (prompted), validated and retried alike.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::agent::{DEFAULT_PROMPTED_OUTPUT_TEMPLATE, OutputObject};
use toolsmith::capability::Hooks;
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse};
use toolsmith::model::{ModelError, ModelHttpError};
use toolsmith::prelude::*;

/// A city.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema, PartialEq)]
struct City {
    city: String,
    country: String,
}

/// What Pydantic AI's `PromptedOutput(City)` puts in the instructions (printed by the reference).
const CITY_INSTRUCTIONS: &str = "Always respond with a JSON object that's compatible with this schema:\n\n{\"properties\": {\"city\": {\"type\": \"string\"}, \"country\": {\"type\": \"string\"}}, \"required\": [\"city\", \"country\"], \"title\": \"City\", \"type\": \"object\", \"description\": \"A city.\"}\n\nDon't include any text or Markdown fencing before or after.";

/// A model answering with `answers` in turn (the last one again), recording what it was told.
fn scripted(answers: &[&str], seen: Arc<Mutex<Vec<AgentInfo>>>) -> FunctionModel {
    let answers: Vec<String> = answers.iter().map(|s| s.to_string()).collect();
    FunctionModel::sync(move |_, info| {
        let mut seen = seen.lock().unwrap();
        seen.push(info.clone());
        let i = (seen.len() - 1).min(answers.len() - 1);
        ModelResponse::text(answers[i].clone())
    })
}

fn feedback(messages: &[ModelMessage]) -> Vec<Value> {
    messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => Some(r.parts.iter()),
            _ => None,
        })
        .flatten()
        .filter_map(|p| match p {
            ModelRequestPart::RetryFeedback(f) => Some(f.content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn prompted_output_puts_the_reference_instructions_after_the_agent_s() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(scripted(&[r#"{"city": "Paris", "country": "France"}"#], seen.clone()))
        .output_type::<City>()
        .output_mode(OutputMode::Prompted)
        .build()
        .unwrap();
    let out = agent.run("Where is the Eiffel tower?").await.unwrap().into_output();
    assert_eq!(out, City { city: "Paris".into(), country: "France".into() });
    let info = seen.lock().unwrap()[0].clone();
    assert_eq!(info.instructions.as_deref(), Some(CITY_INSTRUCTIONS));
    assert_eq!(info.output_mode, OutputMode::Prompted);
    assert!(info.output_tools.is_empty() && info.allow_text_output);

    // After the agent's instructions; a name and a description of the builder's; an output that is
    // not an object is the `response` field of one (Pydantic AI's `PromptedOutput(int, name=...)`).
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(scripted(&[r#"{"response": 3}"#], seen.clone()))
        .instructions("Be brief.")
        .output_type::<u8>()
        .output_mode(OutputMode::Prompted)
        .output_name("Num")
        .output_description("A number")
        .build()
        .unwrap();
    assert_eq!(agent.run("hi").await.unwrap().into_output(), 3);
    let instructions = seen.lock().unwrap()[0].instructions.clone().unwrap();
    assert!(instructions.starts_with("Be brief.\n\n\nAlways respond with a JSON object"), "{instructions}");
    assert!(
        instructions.contains(r#"{"properties": {"response": "#)
            && instructions
                .contains(r#""required": ["response"], "type": "object", "title": "Num", "description": "A number"}"#),
        "{instructions}"
    );
}

#[tokio::test]
async fn a_template_takes_the_schema_in_its_place_or_after_it() {
    let object = OutputObject::new("City", json!({"type": "object"}));
    assert_eq!(
        object.instructions("Answer as {schema} please"),
        r#"Answer as {"type": "object", "title": "City"} please"#
    );
    assert_eq!(
        object.instructions("Answer in JSON."),
        "Answer in JSON.\n\n{\"type\": \"object\", \"title\": \"City\"}"
    );
    assert!(object.instructions(DEFAULT_PROMPTED_OUTPUT_TEMPLATE).starts_with("\nAlways respond"));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(scripted(&[r#"{"city": "Paris", "country": "France"}"#], seen.clone()))
        .output_type::<City>()
        .output_mode(OutputMode::Prompted)
        .prompted_output_template("Answer as {schema} please")
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    let instructions = seen.lock().unwrap()[0].instructions.clone().unwrap();
    assert!(instructions.starts_with(r#"Answer as {"properties""#) && instructions.ends_with("} please"));
}

#[tokio::test]
async fn json_in_a_markdown_fence_is_the_output() {
    let answer = "Here it is:\n```json\n{\"city\": \"Paris\", \"country\": \"France\"}\n```";
    for mode in [OutputMode::Prompted, OutputMode::Native] {
        let agent = Agent::builder(scripted(&[answer], Arc::default()))
            .output_type::<City>()
            .output_mode(mode)
            .build()
            .unwrap();
        assert_eq!(agent.run("hi").await.unwrap().into_output().city, "Paris");
    }
}

#[tokio::test]
async fn invalid_json_and_schema_errors_are_retried_then_exhaust_the_budget() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(scripted(
        &["not json", r#"{"city": 1}"#, r#"{"city": "Paris", "country": "France"}"#],
        seen.clone(),
    ))
    .output_type::<City>()
    .output_mode(OutputMode::Prompted)
    .output_retries(2)
    .build()
    .unwrap();
    let result = agent.run("hi").await.unwrap();
    assert_eq!(result.output().country, "France");
    let fed = feedback(result.all_messages());
    assert_eq!(fed.len(), 2);
    assert_eq!(fed[0][0]["type"], "json_invalid");
    assert_eq!(fed[0][0]["input"], "not json");
    assert_eq!(fed[0][0]["loc"], json!([]));
    assert!(fed[0][0]["msg"].as_str().unwrap().starts_with("Invalid JSON: "), "{}", fed[0]);
    let types: Vec<&str> = fed[1].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["string_type", "missing"]);
    // The instructions are sent with every request.
    assert!(seen.lock().unwrap().iter().all(|i| i.instructions.as_deref() == Some(CITY_INSTRUCTIONS)));

    // Pydantic AI's default budget of one retry, then its error.
    let agent = Agent::builder(scripted(&["not json"], Arc::default()))
        .output_type::<City>()
        .output_mode(OutputMode::Prompted)
        .build()
        .unwrap();
    let err = agent.run("hi").await.unwrap_err();
    assert!(matches!(err, AgentRunError::UnexpectedModelBehavior { .. }));
    let err = err.to_string();
    assert!(err.starts_with("Exceeded maximum output retries (1)"), "{err}");
    assert!(err.contains("Invalid JSON"), "{err}");
}

#[tokio::test]
async fn output_hooks_retry_prompted_output() {
    let hooks = Hooks::new().after_output_validate(|_ctx, _out, v: Value| async move {
        if v["city"] == "Atlantis" {
            return Err(ModelRetry::new("Atlantis is not a city: try again.").into());
        }
        Ok(v)
    });
    let agent = Agent::builder(scripted(
        &[r#"{"city": "Atlantis", "country": "Sea"}"#, r#"{"city": "Paris", "country": "France"}"#],
        Arc::default(),
    ))
    .output_type::<City>()
    .output_mode(OutputMode::Prompted)
    .capability(hooks)
    .build()
    .unwrap();
    let result = agent.run("hi").await.unwrap();
    assert_eq!(result.output().city, "Paris");
    assert_eq!(feedback(result.all_messages()), [json!("Atlantis is not a city: try again.")]);
}

#[tokio::test]
async fn native_output_sends_the_output_object_and_no_output_tool() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(scripted(&[r#"{"city": "Paris", "country": "France"}"#], seen.clone()))
        .instructions("Be brief.")
        .output_type::<City>()
        .output_mode(OutputMode::Native)
        .output_strict(true)
        .build()
        .unwrap();
    assert_eq!(agent.run("hi").await.unwrap().into_output().city, "Paris");
    let info = seen.lock().unwrap()[0].clone();
    assert_eq!(info.output_mode, OutputMode::Native);
    assert!(info.output_tools.is_empty() && info.allow_text_output);
    // Native output leaves the instructions alone.
    assert_eq!(info.instructions.as_deref(), Some("Be brief."));
    let object = info.output_object.unwrap();
    assert_eq!(
        (object.name.as_str(), object.description.as_deref(), object.strict),
        ("City", Some("A city."), Some(true))
    );
    assert_eq!(object.json_schema["required"], json!(["city", "country"]));
    assert!(object.json_schema.get("description").is_none());
}

#[tokio::test]
async fn test_model_answers_every_mode_with_generated_json() {
    for mode in [OutputMode::Tool, OutputMode::Native, OutputMode::Prompted] {
        let agent = Agent::builder(TestModel::default()).output_type::<City>().output_mode(mode).build().unwrap();
        let result = agent.run("hi").await.unwrap();
        assert_eq!(result.output().city, "a", "{mode:?}");
    }
}

#[tokio::test]
async fn tool_mode_stays_the_default() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(scripted(&[r#"{"city": "Paris", "country": "France"}"#], seen.clone()))
        .output_type::<City>()
        .build()
        .unwrap();
    assert_eq!(agent.output_spec().mode(), OutputMode::Tool);
    agent.run("hi").await.unwrap();
    let info = seen.lock().unwrap()[0].clone();
    assert_eq!(info.output_mode, OutputMode::Tool);
    assert_eq!(info.output_tools[0].name, "final_result");
    assert!(!info.allow_text_output && info.instructions.is_none());
}

/// A model of a provider without a JSON-schema response format.
struct Plain;

impl Model for Plain {
    fn name(&self) -> &str {
        "plain-1"
    }
    fn system(&self) -> &str {
        "plain"
    }
    async fn request(
        &self,
        _: &[ModelMessage],
        _: Option<&ModelSettings>,
        _: &toolsmith::model::ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        Ok(ModelResponse::text(r#"{"city": "Paris", "country": "France"}"#))
    }
}

#[tokio::test]
async fn native_output_on_a_model_without_it_is_refused_at_build() {
    let err = Agent::builder(Plain).output_type::<City>().output_mode(OutputMode::Native).build().err().unwrap();
    let msg = err.to_string();
    assert!(msg.contains("native output is not supported by the model `plain-1` (plain)"), "{msg}");
    assert!(msg.contains("OutputMode::Prompted"), "{msg}");
    // Prompted output works with any model.
    let agent = Agent::builder(Plain).output_type::<City>().output_mode(OutputMode::Prompted).build().unwrap();
    assert_eq!(agent.run("hi").await.unwrap().into_output().country, "France");
    // The mode configures structured output.
    let err = Agent::builder(Plain).output_mode(OutputMode::Prompted).build().err().unwrap();
    assert!(err.to_string().contains("give the agent an output type first"), "{err}");
}

#[tokio::test]
async fn a_refused_forced_output_call_names_the_server_answer_and_the_other_modes() {
    let model = FunctionModel::new(|_, _| async {
        Err(ModelError::from(ModelHttpError::new(
            500,
            "openai",
            "llama",
            r#"{"error": {"code": 500, "message": "tool_choice: required is not supported", "type": "server_error"}}"#,
        )))
    });
    let err = Agent::builder(model).output_type::<City>().build().unwrap().run("hi").await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("HTTP 500") && msg.contains("tool_choice: required is not supported"), "{msg}");
    assert!(msg.contains("forced a call to the output tool `final_result`"), "{msg}");
    assert!(msg.contains(".output_mode(OutputMode::Prompted)"), "{msg}");
    assert!(matches!(err, AgentRunError::Model(e) if e.status() == Some(500)));

    // Without a forced call (text output), the error is the provider's alone.
    let model =
        FunctionModel::new(|_, _| async { Err(ModelError::from(ModelHttpError::new(500, "openai", "m", "boom"))) });
    let msg = Agent::builder(model).build().unwrap().run("hi").await.unwrap_err().to_string();
    assert!(!msg.contains("OutputMode"), "{msg}");
}

#[tokio::test]
async fn prompted_output_streams_from_the_text() {
    use futures::{StreamExt, stream};
    use toolsmith::model::StreamDelta;
    let model = FunctionModel::stream(|_, _| {
        stream::iter([StreamDelta::text(r#"{"city": "Rome", "#), StreamDelta::text(r#""country": "Italy"}"#)])
    });
    let agent =
        Agent::builder_streaming(model).output_type::<City>().output_mode(OutputMode::Prompted).build().unwrap();
    let outputs: Vec<City> = agent.run("where").stream_output().map(|o| o.unwrap()).collect().await;
    assert_eq!(outputs.last(), Some(&City { city: "Rome".into(), country: "Italy".into() }));
}
