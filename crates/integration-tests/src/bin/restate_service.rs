//! The durable agent the Restate tests drive (feature `restate`): a scripted model and tools
//! that write every execution to files in `$LOG_DIR`, so that the tests can count executions
//! across the process's deaths.
//!
//! Environment: `PORT` (the service's port), `LOG_DIR`, `HANG_BEFORE_MODEL_REQUEST=N` (the
//! process stops before its N-th model request of a run, after writing `LOG_DIR/hanging`: the
//! test then kills it), and `CRASH_POINT` (the process aborts at that point of a `pay` call:
//! `after-effect:N`, right after order N's payment was written and before the tool returns;
//! `before-journal:N`, after the tool returned and before its result reached the journal), and
//! `SPILL_STORE=memory` (long tool outputs spilled to the process's memory only, not journaled).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use restate_sdk::prelude::*;
use serde_json::{Value, json};
use toolsmith::capability::ToolOutputLimits;
use toolsmith::capability::{Capability, HookStage, ModelRequestContext, ToolCallInfo, ToolExecuteNext};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::ModelError;
use toolsmith::prelude::*;
use toolsmith::tool::{CallDeferred, ToolError, ToolOutput};
use toolsmith_restate::{AgentSession, DurableAgent, JournaledStore};

fn log_dir() -> PathBuf {
    PathBuf::from(std::env::var("LOG_DIR").expect("LOG_DIR is set"))
}

/// Appends one line to `LOG_DIR/<file>`.
fn record(file: &str, line: &str) {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(log_dir().join(file)).expect("log file");
    writeln!(f, "{line}").expect("log write");
}

/// Charge an amount.
#[tool]
async fn charge(ctx: RunContext, amount: u32) -> String {
    record("charge-trace.log", &format!("start {amount}"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    record("charge-trace.log", &format!("end {amount}"));
    record("charge.log", &amount.to_string());
    // What the run had made before this call, to compare with the history after a replay.
    let seen = serde_json::to_string(&*ctx.messages).expect("history serialises");
    std::fs::write(log_dir().join("charge-saw.json"), seen).expect("write");
    format!("charged {amount}")
}

/// Pay an order: the payment is written (and synced) to `pay.log`, the side effect counted.
#[tool]
async fn pay(order: u32, ms: u64) -> String {
    record("pay-trace.log", &format!("start {order}"));
    tokio::time::sleep(Duration::from_millis(ms)).await;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(log_dir().join("pay.log")).expect("log");
    writeln!(f, "{order}").expect("log write");
    f.sync_all().expect("sync");
    record("pay-trace.log", &format!("paid {order}"));
    if crash_point() == Some(format!("after-effect:{order}")) {
        std::process::abort();
    }
    format!("paid {order}")
}

fn crash_point() -> Option<String> {
    std::env::var("CRASH_POINT").ok()
}

/// Aborts the process after `pay` of the order returned, before the journal has its result
/// (this capability sits inside the journaling one, as every capability of the agent does).
struct CrashBeforeJournal(u64);

impl Capability<()> for CrashBeforeJournal {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ToolExecute
    }
    async fn wrap_tool_execute(
        &self,
        _ctx: &RunContext<()>,
        call: ToolCallInfo<'_>,
        args: Value,
        next: ToolExecuteNext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        let order = args["order"].as_u64();
        let output = next.run(args).await;
        if call.call.tool_name == "pay" && order == Some(self.0) {
            std::process::abort();
        }
        output
    }
}

/// Transfer money.
#[tool(requires_approval)]
fn transfer(to: String, amount: u32) -> String {
    record("transfer.log", &format!("{amount} to {to}"));
    format!("transferred {amount} to {to}")
}

/// The exchange rate of a currency: looked up by another system, which answers later.
#[tool]
fn fx_rate(currency: String) -> Result<String, CallDeferred> {
    record("fx.log", &currency);
    Err(CallDeferred::with_metadata(json!({"queue": "fx"})))
}

/// A long report: spilled by `ToolOutputLimits` (over its 10,000 characters).
#[tool]
fn report(n: u32) -> String {
    record("report.log", &n.to_string());
    (0..1000).map(|i| format!("line {i} of report {n}\n")).collect()
}

/// The handle a spill preview names (`... stored to handle <handle>. Read it with ...`).
fn spill_handle(part: &Value) -> Option<String> {
    let text = part["content"].as_str()?;
    let (_, rest) = text.split_once("stored to handle ")?;
    Some(rest.split_once(". Read it with")?.0.trim_matches('\'').to_string())
}

/// Explodes.
#[tool]
fn explode() -> String {
    record("explode.log", "boom");
    panic!("the detonator went off")
}

/// The latest user prompt and the tool returns made since, as JSON.
fn latest(messages: &[ModelMessage]) -> (String, Vec<Value>) {
    let json = serde_json::to_value(messages).expect("messages serialise");
    let mut prompt = String::new();
    let mut returns = Vec::new();
    for message in json.as_array().into_iter().flatten() {
        for part in message["parts"].as_array().into_iter().flatten() {
            match part["part_kind"].as_str() {
                Some("user-prompt") => {
                    prompt = part["content"].as_str().unwrap_or_default().to_string();
                    returns.clear();
                }
                Some("tool-return") | Some("retry-prompt") => returns.push(part.clone()),
                _ => {}
            }
        }
    }
    (prompt, returns)
}

fn all_prompts(messages: &[ModelMessage]) -> Vec<String> {
    let json = serde_json::to_value(messages).expect("messages serialise");
    json.as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["part_kind"] == "user-prompt")
        .filter_map(|p| p["content"].as_str().map(str::to_string))
        .collect()
}

fn call(tool: &str, args: Value, id: &str) -> ModelResponse {
    ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(tool, args, id))])
}

async fn scripted(messages: Vec<ModelMessage>) -> Result<ModelResponse, ModelError> {
    let (prompt, returns) = latest(&messages);
    let words: Vec<&str> = prompt.split_whitespace().collect();
    record("model.log", &format!("{prompt} | {}", returns.len()));
    let done = |r: &[Value]| {
        let said: Vec<String> = r
            .iter()
            .map(|p| p["content"].as_str().map(str::to_string).unwrap_or_else(|| p["content"].to_string()))
            .collect();
        ModelResponse::text(format!("done: {}", said.join("; ")))
    };
    Ok(match (words.first().copied(), returns.is_empty()) {
        // One call per amount, run in parallel.
        (Some("charge"), true) => ModelResponse::new(
            words[1..]
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let args = json!({"amount": w.parse::<u32>().unwrap_or(1)});
                    ModelResponsePart::ToolCall(ToolCallPart::new("charge", args, format!("charge-{}", i + 1)))
                })
                .collect(),
        ),
        // `pay 1:900 2:200`: one call per order, run in parallel, each taking its milliseconds.
        (Some("pay"), true) => ModelResponse::new(
            words[1..]
                .iter()
                .map(|w| {
                    let (order, ms) = w.split_once(':').unwrap_or((w, "100"));
                    let args =
                        json!({"order": order.parse::<u32>().unwrap_or(0), "ms": ms.parse::<u64>().unwrap_or(100)});
                    ModelResponsePart::ToolCall(ToolCallPart::new("pay", args, format!("pay-{order}")))
                })
                .collect(),
        ),
        (Some("transfer"), true) => call(
            "transfer",
            json!({"amount": words[1].parse::<u32>().unwrap_or(1), "to": words.get(3).copied().unwrap_or("bob")}),
            "transfer-1",
        ),
        (Some("explode"), true) => call("explode", json!({}), "explode-1"),
        // `report N`: a spilled report, then its first two lines read back from the store.
        (Some("report"), true) => {
            call("report", json!({"n": words.get(1).and_then(|w| w.parse::<u32>().ok())}), "report-1")
        }
        (Some("report"), false) if returns.len() == 1 => match spill_handle(&returns[0]) {
            Some(handle) => call("read_tool_result", json!({"handle": handle, "offset": 0, "limit": 2}), "read-1"),
            None => done(&returns),
        },
        // `reread`: line 3 of the report an earlier turn spilled.
        (Some("reread"), true) => {
            let json = serde_json::to_value(&messages).expect("messages serialise");
            let handle = json
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
                .find_map(|p| spill_handle(&p));
            match handle {
                Some(handle) => {
                    call("read_tool_result", json!({"handle": handle, "offset": 3, "limit": 1}), "reread-1")
                }
                None => ModelResponse::text("no spill in the history"),
            }
        }
        (Some("rate"), true) => call("fx_rate", json!({"currency": words.get(1).copied().unwrap_or("EUR")}), "fx-1"),
        (Some("remember"), _) => {
            let word = words.get(1).copied().unwrap_or_default();
            record("session.log", &format!("start {word}"));
            tokio::time::sleep(Duration::from_millis(1000)).await;
            record("session.log", &format!("end {word}"));
            ModelResponse::text(format!("so far: {}", all_prompts(&messages).join(", ")))
        }
        (_, false) => done(&returns),
        _ => ModelResponse::text(format!("you said: {prompt}")),
    })
}

/// Stops the process's progress before the N-th model request of a run.
struct HangBefore(u32);

impl Capability<()> for HangBefore {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ModelRequest
    }
    async fn before_model_request(
        &self,
        ctx: &RunContext<()>,
        request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        if ctx.run_step == self.0 {
            std::fs::write(log_dir().join("hanging"), ctx.run_step.to_string()).expect("write");
            std::future::pending::<()>().await;
        }
        Ok(request)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::var("PORT")?.parse()?;
    let model = FunctionModel::new(|messages, _| scripted(messages.to_vec()));
    let mut builder =
        Agent::builder(model).tool(charge).tool(pay).tool(transfer).tool(explode).tool(fx_rate).tool(report);
    // Spills journaled with their calls, or (SPILL_STORE=memory) kept only in the process.
    builder = match std::env::var("SPILL_STORE").as_deref() {
        Ok("memory") => builder.capability(ToolOutputLimits::new()),
        _ => builder.capability(ToolOutputLimits::new().store(JournaledStore::new())),
    };
    if let Some(n) = std::env::var("HANG_BEFORE_MODEL_REQUEST").ok().and_then(|v| v.parse().ok()) {
        builder = builder.capability(HangBefore(n));
    }
    if let Some(order) = crash_point().and_then(|p| p.strip_prefix("before-journal:").and_then(|n| n.parse().ok())) {
        builder = builder.capability(CrashBeforeJournal(order));
    }
    let agent = builder.allow_deferred().build()?;
    let session = AgentSession::new(DurableAgent::new(agent));
    HttpServer::new(Endpoint::builder().bind(session).build())
        .listen_and_serve(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
        .await;
    Ok(())
}
