//! A chat page whose agent asks before it sends an email: the text streams in, each tool call
//! shows its arguments and result, and a call that needs approval waits for the Approve or Deny
//! button. Served by `toolsmith_ui::axum::UiServer`: the page speaks AG-UI, or the Vercel AI data
//! stream at `/?protocol=vercel`.
//!
//!     cargo run -p toolsmith-ui --example chat_approval --features axum
//!     # then open http://127.0.0.1:3000
//!
//! Offline by default (a scripted model); with a real model:
//!
//!     TOOLSMITH_MODEL=openai:gpt-4.1-mini cargo run -p toolsmith-ui --example chat_approval --features axum,openai
//!
//! (the provider's key in its usual variable, `OPENAI_API_KEY` here). `PORT` picks the port
//! (`0`: any free one; the address is printed).

use std::time::Duration;

use axum::response::Html;
use axum::routing::get;
use futures::StreamExt;
use toolsmith::messages::{ModelMessage, ModelRequestPart, ToolOutcome};
use toolsmith::model::{FunctionModel, StreamDelta};
use toolsmith::prelude::*;
use toolsmith_ui::axum::UiServer;

/// Send an email.
#[tool(requires_approval)]
fn send_email(to: String, subject: String) -> String {
    format!("Email sent to {to} with subject \"{subject}\".")
}

const PAGE: &str = include_str!("index.html");

/// The offline model: asks to send an email for any request, then says how it went.
fn scripted() -> FunctionModel {
    FunctionModel::stream(|messages: &[ModelMessage], _| {
        let last = messages.last().and_then(ModelMessage::as_request);
        let returned = last.and_then(|r| {
            r.parts.iter().find_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.clone()),
                _ => None,
            })
        });
        let deltas = match returned {
            Some(t) if t.outcome == ToolOutcome::Denied => {
                words(&format!("Understood: I did not send the email ({}).", t.content.as_str().unwrap_or("denied")))
            }
            Some(t) => words(&format!("Done. {}", t.content.as_str().unwrap_or_default())),
            None => {
                let prompt = messages
                    .iter()
                    .rev()
                    .find_map(|m| {
                        m.as_request()?.parts.iter().find_map(|p| match p {
                            ModelRequestPart::UserPrompt(u) => Some(u.content.text()),
                            _ => None,
                        })
                    })
                    .unwrap_or_default();
                let to = prompt.split_whitespace().find(|w| w.contains('@')).unwrap_or("ada@example.com");
                let args = serde_json::json!({"to": to, "subject": "Meeting notes"}).to_string();
                let mut d = words("I will send that email.");
                d.push(StreamDelta::ToolCall { index: 0, name: Some("send_email".into()), args: Some(args), id: None });
                d
            }
        };
        futures::stream::iter(deltas).then(|d| async move {
            tokio::time::sleep(Duration::from_millis(40)).await;
            d
        })
    })
}

fn words(text: &str) -> Vec<StreamDelta> {
    text.split_inclusive(' ').map(StreamDelta::text).collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let builder = match std::env::var("TOOLSMITH_MODEL") {
        Ok(name) => Agent::builder_streaming(toolsmith::providers::infer_model(&name)?),
        Err(_) => Agent::builder_streaming(toolsmith::model::AnyModel::new(scripted())),
    };
    let agent = builder
        .instructions("You help with email. Use send_email to send one; the user approves each.")
        .tool(send_email)
        .allow_deferred()
        .build()?;
    let app = UiServer::builder(agent).build().router().route("/", get(|| async { Html(PAGE) }));
    let port = std::env::var("PORT").unwrap_or_else(|_| "3000".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
