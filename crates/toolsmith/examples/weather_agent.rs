//! One tool, any provider: the model named by `TOOLSMITH_MODEL` answers "What's the weather in
//! Paris?" with the help of `get_weather`.
//!
//! ```sh
//! TOOLSMITH_MODEL=test cargo run -p toolsmith --example weather_agent        # offline
//! # with OPENAI_API_KEY exported; the provider's feature only:
//! TOOLSMITH_MODEL=openai:gpt-4o-mini cargo run -p toolsmith --example weather_agent --features openai
//! TOOLSMITH_MODEL=anthropic:claude-sonnet-4-5   # --features anthropic, ANTHROPIC_API_KEY
//! TOOLSMITH_MODEL=google:gemini-2.5-flash       # --features gemini, GEMINI_API_KEY
//! TOOLSMITH_MODEL=bedrock:amazon.nova-lite-v1:0 # --features bedrock, AWS_REGION and AWS credentials
//! TOOLSMITH_MODEL=openai:smollm2 OPENAI_BASE_URL=http://127.0.0.1:8000/v1   # a local server
//! ```
//!
//! The answer goes to stdout; the tool calls of the exchange go to stderr. The exit code is 1
//! when the run fails (the error says what to fix).

use std::process::ExitCode;

use toolsmith::messages::{ModelMessage, ModelRequestPart};
use toolsmith::prelude::*;
use toolsmith::providers::infer_model;

/// Get the current weather in a city.
///
/// # Arguments
/// * `city` - The city, e.g. Paris.
#[tool]
async fn get_weather(city: String) -> String {
    format!("Sunny in {city}")
}

#[tokio::main]
async fn main() -> ExitCode {
    let name = std::env::var("TOOLSMITH_MODEL").unwrap_or_else(|_| "openai:gpt-4o-mini".to_string());
    let model = match infer_model(&name) {
        Ok(model) => model,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let agent = match Agent::builder(model)
        .system_prompt("You are a helpful assistant. Use the get_weather tool to answer questions about the weather.")
        .tool(get_weather)
        .build()
    {
        Ok(agent) => agent,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let settings = ModelSettings::new().max_tokens(512);
    match agent.run("What's the weather in Paris?").model_settings(settings).await {
        Ok(result) => {
            for message in result.all_messages() {
                match message {
                    ModelMessage::Response(r) => {
                        for call in r.tool_calls() {
                            let args = match &call.args {
                                serde_json::Value::String(raw) => raw.clone(),
                                other => other.to_string(),
                            };
                            eprintln!("tool call: {}({args})", call.tool_name);
                        }
                    }
                    ModelMessage::Request(r) => {
                        for part in &r.parts {
                            if let ModelRequestPart::ToolReturn(ret) = part {
                                eprintln!("tool return: {} -> {}", ret.tool_name, ret.content_text());
                            }
                        }
                    }
                }
            }
            println!("{}", result.output());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
