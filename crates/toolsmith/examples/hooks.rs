//! Capabilities from application code and from a spec, offline.
//!
//! 1. A `Hooks` logger: closures around the run, each model request and each tool call, no
//!    trait impl.
//! 2. An agent whose capabilities come from a YAML spec: the logger registered under a name,
//!    a toolset under a prefix, thinking, system-prompt reinjection and tool search settings.
//!
//! A scripted `FunctionModel` plays the model, so it runs without network or keys:
//!
//! ```text
//! cargo run -p toolsmith --example hooks --features yaml
//! ```

use std::time::Instant;

use serde_json::json;
use toolsmith::capability::{CapabilityRegistry, CapabilitySpec, Hooks};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;

/// Get the current weather in a city.
#[tool]
fn get_weather(city: String) -> String {
    format!("Sunny, 22°C in {city}")
}

/// A model that asks for the weather once, then answers with what the tool said.
fn scripted_model() -> FunctionModel {
    FunctionModel::sync(|messages, info| {
        let returned = messages.iter().rev().find_map(|m| match m {
            ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.content_text()),
                _ => None,
            }),
            _ => None,
        });
        match returned {
            Some(weather) => ModelResponse::text(format!("Here you go: {weather}.")),
            None => {
                // Call whichever weather tool is offered (its name depends on the prefix).
                let tool = info
                    .function_tools
                    .iter()
                    .find(|t| t.name.ends_with("get_weather"))
                    .map(|t| t.name.clone())
                    .unwrap_or_else(|| "get_weather".into());
                ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                    tool,
                    json!({"city": "Lisbon"}),
                    "call_1",
                ))])
            }
        }
    })
    .with_name("scripted")
}

/// The last group of a run id (a UUIDv7 starts with the time, so the end tells runs apart).
fn short(id: &str) -> &str {
    id.rsplit('-').next().unwrap_or(id)
}

/// A logger made of closures: one line per run, model request and tool call.
fn logger() -> Hooks<()> {
    Hooks::new()
        .named("Logger")
        .before_run(|ctx| async move {
            println!("[run {}] started with model {}", short(&ctx.run_id), ctx.model.name);
            Ok(())
        })
        .wrap_model_request(|ctx, request, next| {
            Box::pin(async move {
                let started = Instant::now();
                let tools: Vec<&str> = request.params.function_tools.iter().map(|t| t.name.as_str()).collect();
                println!("  request {} with {} message(s), tools {tools:?}", ctx.run_step, request.messages.len());
                let response = next.run(request).await;
                if let Ok(r) = &response {
                    println!("  response: {} part(s) in {:?}", r.parts.len(), started.elapsed());
                }
                response
            })
        })
        .before_tool_execute(|_ctx, call, args| async move {
            println!("  tool {} <- {args}", call.def.name);
            Ok(args)
        })
        .after_tool_execute(|_ctx, call, _args, result| async move {
            println!("  tool {} -> {result:?}", call.def.name);
            Ok(result)
        })
        .on_run_error(|_ctx, error| async move {
            println!("  run failed: {error}");
            Err(error)
        })
        .after_run(|ctx, output| async move {
            println!(
                "[run {}] done: {} request(s), {} tool call(s)",
                short(&ctx.run_id),
                ctx.usage.requests,
                ctx.usage.tool_calls
            );
            Ok(output)
        })
}

const SPEC: &str = r#"
capabilities:
  - Logger
  - PrefixTools:
      prefix: wx
      capability: {Toolset: weather}
  - Thinking: low
  - ReinjectSystemPrompt: {replace_existing: true}
  - SetToolMetadata: {team: travel}
  - ToolSearch: {max_results: 5}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("== 1. A Hooks logger on an agent built in code");
    let agent = Agent::builder(scripted_model()).tool(get_weather).capability(logger()).build()?;
    let result = agent.run("What's the weather in Lisbon?").run_sync()?;
    println!("output: {}\n", result.output());

    println!("== 2. The same logger, and more, from a YAML spec");
    let registry = CapabilityRegistry::new()
        .register_capability("Logger", logger())
        .register_toolset("weather", FunctionToolset::new().with_tool(get_weather));
    let spec = CapabilitySpec::from_yaml(SPEC)?;
    let agent = Agent::builder(scripted_model())
        .system_prompt("You are a travel assistant.")
        .capabilities_from_spec(&spec, &registry)
        .build()?;
    let result = agent.run("What's the weather in Lisbon?").run_sync()?;
    println!("output: {}\n", result.output());

    println!("== 3. A mistake in a spec is reported with its place");
    let bad =
        CapabilitySpec::from_yaml("capabilities:\n  - PrefixTools: {prefix: wx, capability: {Toolset: wether}}\n")?;
    match Agent::builder(scripted_model()).capabilities_from_spec(&bad, &registry).build() {
        Ok(_) => println!("unexpectedly fine"),
        Err(e) => println!("error: {}", e.message),
    }
    Ok(())
}
