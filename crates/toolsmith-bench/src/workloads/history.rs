//! `history_1000`: reading and writing a 1,000-message history in Pydantic AI's JSON format
//! (what `ModelMessagesTypeAdapter.dump_json` writes; toolsmith's `parse_history` reads it and
//! `history_to_json` writes the same format, leaving out null and default fields).
//!
//! The history is 500 request/response pairs: user prompts, responses with a text part and one
//! or two tool calls with small JSON arguments, the tool returns (an object or an integer), final
//! text answers; every part and response with a timestamp, usage and a run id.
//! `reference/extra_workloads.py` (`history`) builds it with Pydantic AI's classes and dumps it;
//! [`pydantic_json`] writes the same text here (its sha256 is checked against the Python
//! dump's, [`SHA256_HISTORY_1000`]), so both sides parse the same bytes. The text is 733 KB,
//! too large to keep in the repository.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponsePart, history_to_json, parse_history};

use super::{Measured, Plan, ensure, log, measure};

/// Request/response pairs.
pub const PAIRS: usize = 500;
/// sha256 of `ModelMessagesTypeAdapter.dump_json(history(500))` (`extra_workloads.py`).
pub const SHA256_HISTORY_1000: &str = "c3ad0318c65533e847544ccdfae80461995f81b563d4141e9a02c566d67623e3";

const TOOLS: [&str; 4] = ["get_weather", "search_docs", "add", "lookup_user"];

/// Timestamp `i`: 2026-01-01 12:00:00 UTC + 3i s + (7919 i mod 10^6) µs, as Pydantic AI writes
/// it (six fraction digits, none when the microseconds are 0; `i` < 1,200 keeps it in the hour
/// 12-14).
fn timestamp(i: usize) -> String {
    let micros = 3_000_000 * i as u64 + (i as u64 * 7919) % 1_000_000;
    let (secs, frac) = (micros / 1_000_000, micros % 1_000_000);
    let (h, m, s) = (12 + secs / 3600, secs / 60 % 60, secs % 60);
    let frac = if frac == 0 { String::new() } else { format!(".{frac:06}") };
    format!("2026-01-01T{h:02}:{m:02}:{s:02}{frac}Z")
}

fn request(parts: Vec<Value>, run_id: &str) -> Value {
    json!({"parts": parts, "timestamp": null, "instructions": null, "kind": "request", "run_id": run_id,
           "conversation_id": null, "metadata": null, "state": "complete"})
}

fn response(parts: Vec<Value>, k: usize, finish: &str, run_id: &str) -> Value {
    let usage = json!({"input_tokens": 100 + 7 * k, "cache_write_tokens": 0, "cache_write_1h_tokens": 0,
        "cache_read_tokens": 0, "output_tokens": 10 + k % 17, "output_reasoning_tokens": 0, "input_audio_tokens": 0,
        "cache_audio_read_tokens": 0, "output_audio_tokens": 0, "audio_seconds": 0.0, "details": {}, "cost": null});
    json!({"parts": parts, "usage": usage, "model_name": "function:model:", "model_id": null,
        "timestamp": timestamp(2 * k + 1), "kind": "response", "provider_name": null, "provider_url": null,
        "canonical_system": null, "provider_details": null, "provider_response_id": null, "finish_reason": finish,
        "run_id": run_id, "conversation_id": null, "metadata": null, "workspace_ref": null, "history_digest": null,
        "failed_attempts": null, "state": "complete"})
}

fn text(content: String) -> Value {
    json!({"content": content, "id": null, "provider_name": null, "provider_details": null, "citations": null,
           "part_kind": "text"})
}

/// The history as Pydantic AI dumps it (Python: `history(pairs)` then `dump_json`), as a value.
pub fn pydantic_value(pairs: usize) -> Value {
    let mut messages = Vec::with_capacity(2 * pairs);
    let mut pending: Vec<(&str, String)> = Vec::new();
    for k in 0..pairs {
        let run_id = format!("run-{:04}", k / 5);
        let parts = if pending.is_empty() {
            let content = format!("Question {k}: what is the status of item {}?", k * 13 % 97);
            vec![json!({"content": content, "timestamp": timestamp(2 * k), "part_kind": "user-prompt"})]
        } else {
            pending
                .iter()
                .enumerate()
                .map(|(j, (name, id))| {
                    let object = j % 2 == 0;
                    let content = if object {
                        json!({"ok": true, "value": 10 * k + j, "note": format!("result {k}.{j}")})
                    } else {
                        json!(10 * k + j)
                    };
                    let mut part = json!({"tool_name": name, "content": content, "tool_call_id": id,
                        "tool_kind": null, "metadata": null, "timestamp": timestamp(2 * k), "outcome": "success",
                        "retry": null, "part_kind": "tool-return"});
                    if object {
                        // Pydantic AI adds this key (empty: no files in it) to returns of objects.
                        part["content_file_digests"] = json!([]);
                    }
                    part
                })
                .collect()
        };
        messages.push(request(parts, &run_id));
        pending.clear();
        let (parts, finish) = if k % 5 == 4 {
            (vec![text(format!("The answer to question {k} is {}.", k * 31 % 101))], "stop")
        } else {
            let n = 1 + k % 2;
            let mut parts = if k % 3 == 0 { vec![text(format!("Calling {n} tools for step {k}."))] } else { vec![] };
            for j in 0..n {
                let (name, id) = (TOOLS[(k + j) % 4], format!("call_{k:03}_{j}"));
                let args = json!({"x": k, "y": j, "q": format!("item {k}"), "w": k as f64 / 4.0,
                                  "flags": [j % 2 == 0, k % 2 == 0]});
                parts.push(json!({"tool_name": name, "args": args, "tool_call_id": id, "tool_kind": null, "id": null,
                                  "provider_name": null, "provider_details": null, "part_kind": "tool-call"}));
                pending.push((name, id));
            }
            (parts, "tool_call")
        };
        messages.push(response(parts, k, finish, &run_id));
    }
    Value::Array(messages)
}

/// The history's JSON text, byte for byte what `ModelMessagesTypeAdapter.dump_json` writes.
pub fn pydantic_json(pairs: usize) -> String {
    pydantic_value(pairs).to_string()
}

/// A history's JSON value as compared across the two writers: keys whose value is Pydantic AI's
/// default left out (null; a message's `state` `"complete"`; a return's empty
/// `content_file_digests`; zero usage counters), which toolsmith does not write; tool arguments
/// and return values kept verbatim; timestamps to nanoseconds (Pydantic AI writes six fraction
/// digits, toolsmith as few as the value needs). Pydantic AI reads toolsmith's text back as the
/// same messages: `extra_workloads.py --check-history`.
pub fn normalised(value: &Value) -> Value {
    normalise(value, false)
}

fn normalise(value: &Value, usage: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let default = match (k.as_str(), v) {
                    (_, Value::Null) => true,
                    ("state", Value::String(s)) => s == "complete",
                    ("content_file_digests", Value::Array(a)) => a.is_empty(),
                    (_, Value::Number(n)) => usage && n.as_f64() == Some(0.0),
                    _ => false,
                };
                let kept = match (k.as_str(), v) {
                    _ if default => continue,
                    ("args" | "content", _) => v.clone(),
                    ("timestamp", Value::String(t)) => Value::String(nanos(t)),
                    _ => normalise(v, k == "usage"),
                };
                out.insert(k.clone(), kept);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| normalise(v, false)).collect()),
        other => other.clone(),
    }
}

/// `…T12:00:03.007919Z` and `…T12:00:03.007919000Z` both to the latter.
fn nanos(t: &str) -> String {
    let body = t.strip_suffix('Z').unwrap_or(t);
    let (whole, frac) = body.split_once('.').unwrap_or((body, ""));
    format!("{whole}.{frac:0<9}Z")
}

/// Counts of (user prompts, tool calls, tool returns, text parts) in a parsed history.
fn census(messages: &[ModelMessage]) -> [usize; 4] {
    let mut n = [0; 4];
    for m in messages {
        match m {
            ModelMessage::Request(r) => {
                for p in &r.parts {
                    match p {
                        ModelRequestPart::UserPrompt(_) => n[0] += 1,
                        ModelRequestPart::ToolReturn(_) => n[2] += 1,
                        _ => {}
                    }
                }
            }
            ModelMessage::Response(r) => {
                for p in &r.parts {
                    match p {
                        ModelResponsePart::ToolCall(_) => n[1] += 1,
                        ModelResponsePart::Text(_) => n[3] += 1,
                        _ => {}
                    }
                }
            }
        }
    }
    n
}

/// The history's text, checked: the same bytes as Pydantic AI's dump, parsed to 1,000 messages
/// of the expected parts, written back to a value equal to the input (see [`normalised`]).
pub fn checked_text() -> Result<String, String> {
    let text = pydantic_json(PAIRS);
    let sha: String = Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    ensure(sha == SHA256_HISTORY_1000, || {
        format!("history sha256 {sha}, expected {SHA256_HISTORY_1000} (the Python dump; compare with --dump-history)")
    })?;
    let messages = parse_history(&text).map_err(|e| e.to_string())?;
    let n = census(&messages);
    ensure(messages.len() == 2 * PAIRS && n == [100, 600, 600, 234], || {
        format!("{} messages; user prompts, tool calls, tool returns, texts: {n:?}", messages.len())
    })?;
    let written: Value = serde_json::from_str(&history_to_json(&messages)).map_err(|e| e.to_string())?;
    let input: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let (want, got) = (normalised(&input), normalised(&written));
    if want != got {
        let (w, g) = (want.as_array().cloned().unwrap_or_default(), got.as_array().cloned().unwrap_or_default());
        let first = w.iter().zip(&g).position(|(a, b)| a != b);
        return Err(format!(
            "the history written back differs from the one read ({} against {} messages); first difference at message {first:?}: {} against {}",
            g.len(),
            w.len(),
            first.map(|i| g[i].to_string()).unwrap_or_default(),
            first.map(|i| w[i].to_string()).unwrap_or_default(),
        ));
    }
    Ok(text)
}

/// `history_1000_parse` and `history_1000_serialise`.
pub async fn history_1000(p: Plan) -> Result<(Measured, Measured), String> {
    let text = checked_text()?;
    log(format!("  (the history: {} messages, {} bytes of Pydantic AI's JSON)", 2 * PAIRS, text.len()));
    let parse = measure("history_1000_parse", async || parse_history(&text).expect("history_1000 parse"), p).await;
    let messages = parse_history(&text).map_err(|e| e.to_string())?;
    let serialise = measure("history_1000_serialise", async || history_to_json(&messages), p).await;
    Ok((parse, serialise))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_written_as_pydantic_ai_writes_them() {
        assert_eq!(timestamp(0), "2026-01-01T12:00:00Z");
        assert_eq!(timestamp(1), "2026-01-01T12:00:03.007919Z");
        assert_eq!(nanos("2026-01-01T12:00:00Z"), "2026-01-01T12:00:00.000000000Z");
        assert_eq!(nanos("2026-01-01T12:00:03.5Z"), nanos("2026-01-01T12:00:03.500000Z"));
    }

    /// The text is Pydantic AI's, and toolsmith writes it back equal.
    #[test]
    fn the_history_reads_and_writes_back() {
        let text = checked_text().unwrap();
        assert_eq!(text.len(), 732_949);
    }

    /// The comparison sees a changed value, and a dropped field that is not at its default.
    #[test]
    fn the_comparison_sees_differences() {
        let base = pydantic_value(3);
        let mut changed = base.clone();
        changed[2]["parts"][0]["content"]["value"] = json!(11);
        assert_ne!(normalised(&base), normalised(&changed));
        let mut dropped = base.clone();
        dropped[1].as_object_mut().unwrap().remove("finish_reason");
        assert_ne!(normalised(&base), normalised(&dropped));
        let mut defaults = base.clone();
        defaults[1].as_object_mut().unwrap().remove("state");
        defaults[1]["usage"].as_object_mut().unwrap().remove("audio_seconds");
        assert_eq!(normalised(&base), normalised(&defaults));
    }
}
