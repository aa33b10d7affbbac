//! The dice game: an agent rolls a die and tells the player whether they guessed right.
//!
//! Runs offline: the model is a scripted `FunctionModel` that calls the tools the way a real
//! model would, one step at a time, and then answers from what the tools returned.
//!
//! ```sh
//! cargo run --release --example dice_game
//! ```

use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;

/// Roll a six-sided die and return the result.
#[tool]
async fn roll_dice() -> String {
    // A fixed roll keeps the demo reproducible; a real game would use a random number.
    "4".into()
}

/// Get the player's name.
#[tool]
async fn get_player_name(ctx: RunContext<String>) -> String {
    ctx.deps.clone()
}

/// The last tool return of the conversation with this tool name.
fn last_return(messages: &[ModelMessage], tool: &str) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
            ModelRequestPart::ToolReturn(t) if t.tool_name == tool => Some(t.content_text()),
            _ => None,
        }),
        ModelMessage::Response(_) => None,
    })
}

/// A scripted model: roll the die, ask for the player's name, then announce the result.
fn scripted_model() -> FunctionModel {
    FunctionModel::sync(|messages, _info| {
        let call = |name: &str, id: &str| {
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, serde_json::json!({}), id))])
        };
        let guess = messages
            .iter()
            .find_map(|m| match m {
                ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
                    ModelRequestPart::UserPrompt(u) => u.content.text().chars().rev().find(char::is_ascii_digit),
                    _ => None,
                }),
                ModelMessage::Response(_) => None,
            })
            .unwrap_or('?');
        match (last_return(messages, "roll_dice"), last_return(messages, "get_player_name")) {
            (None, _) => call("roll_dice", "call_roll"),
            (Some(_), None) => call("get_player_name", "call_name"),
            (Some(roll), Some(name)) if roll.starts_with(guess) => {
                ModelResponse::text(format!("Congratulations {name}, you guessed correctly! You're a winner!"))
            }
            (Some(roll), Some(name)) => ModelResponse::text(format!("Sorry {name}, the die shows {roll}. Try again!")),
        }
    })
    .with_name("scripted-dice")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::builder(scripted_model())
        .deps::<String>()
        .system_prompt(
            "You're a dice game, you should roll the die and see if the number you get back matches the user's guess. \
             If so, tell them they're a winner. Use the player's name in the response.",
        )
        .tools([roll_dice, get_player_name])
        .build()?;

    let result = agent.run("My guess is 4").deps("Anne".to_string()).run_sync()?;
    println!("{}", result.output());
    println!();
    println!("Messages of the run ({}):", result.new_messages().len());
    for message in result.new_messages() {
        println!("{}", serde_json::to_string(message)?);
    }
    println!();
    println!("Usage: {} requests, {} tool calls", result.usage().requests, result.usage().tool_calls);
    Ok(())
}
