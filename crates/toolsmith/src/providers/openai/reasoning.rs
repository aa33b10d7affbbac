//! Which OpenAI models reason, and the sampling parameters they refuse while they do.
//!
//! A reasoning model answers a request that carries `temperature`, `top_p` or another sampling
//! parameter with a 400 ("Unsupported parameter"), so those are left out of a request that
//! reasons, with a warning naming them (Pydantic AI does the same). Whether a request reasons:
//! its effort when one is set (`reasoning_effort`, or `reasoning.effort` in the Responses API;
//! `none` turns reasoning off where the model allows it), else the model's default.

use serde_json::Value;

/// How a model family reasons: (`on by default`, `can be turned off`).
type Support = (bool, bool);

/// Reasoning support by model-name prefix, the first match winning (so a more specific prefix
/// comes before the broader one it would also match). Models matching none do not reason.
const BY_PREFIX: &[(&str, Support)] = &[
    ("gpt-6-astra", (true, false)),
    ("gpt-6.1-sol", (true, false)),
    ("gpt-6.1-terra", (true, true)),
    ("gpt-6-sol", (true, true)),
    ("gpt-6-luna", (true, true)),
    ("gpt-5.6", (true, true)),
    ("gpt-5.5-pro", (true, false)),
    ("gpt-5.5", (true, true)),
    ("gpt-5.4-pro", (true, false)),
    ("gpt-5.4", (false, true)),
    ("gpt-5.3-chat", (true, false)),
    ("gpt-5.3", (false, true)),
    ("gpt-5.2-pro", (true, false)),
    ("gpt-5.2-chat", (true, false)),
    ("gpt-5.2", (false, true)),
    ("gpt-5.1-codex", (true, false)),
    ("gpt-5.1-chat", (true, false)),
    ("gpt-5.1", (false, true)),
    ("gpt-5-chat", (false, false)),
    ("gpt-5-pro", (true, false)),
    ("gpt-5-codex", (true, false)),
    ("gpt-5", (true, false)),
    ("o1", (true, false)),
    ("o3", (true, false)),
    ("o4", (true, false)),
];

/// The parameters a reasoning request may not carry.
const SAMPLING: &[&str] =
    &["temperature", "top_p", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs"];

fn support(model: &str) -> Support {
    BY_PREFIX.iter().find(|(prefix, _)| model.starts_with(prefix)).map_or((false, false), |(_, s)| *s)
}

/// Whether a request to `model` with this effort reasons.
pub(super) fn reasons(model: &str, effort: Option<&str>) -> bool {
    let (by_default, can_be_off) = support(model);
    if !by_default && !can_be_off {
        return false;
    }
    match effort {
        Some("none") => !can_be_off,
        Some(_) => true,
        None => by_default,
    }
}

/// Takes the sampling parameters out of a request body that reasons (its effort read at
/// `effort_pointer`), with a warning naming them; returns what was taken out.
pub(super) fn drop_sampling(model: &str, body: &mut Value, effort_pointer: &str) -> Vec<&'static str> {
    let effort = body.pointer(effort_pointer).and_then(Value::as_str).map(str::to_string);
    if !reasons(model, effort.as_deref()) {
        return Vec::new();
    }
    let Some(map) = body.as_object_mut() else { return Vec::new() };
    let dropped: Vec<&'static str> = SAMPLING.iter().copied().filter(|k| map.remove(*k).is_some()).collect();
    if !dropped.is_empty() {
        tracing::warn!(
            model,
            ?dropped,
            "OpenAI reasoning models refuse sampling parameters while they reason: these settings are not sent"
        );
    }
    dropped
}

/// Whether the model refuses system messages, so that system prompts and instructions go as
/// user messages (o1-mini, as Pydantic AI's OpenAI profile says).
pub(super) fn system_prompts_as_user(model: &str) -> bool {
    model.rsplit('/').next().unwrap_or(model).starts_with("o1-mini")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn who_reasons_follows_the_model_family_and_the_effort() {
        for (model, effort, expected) in [
            ("gpt-4o", None, false),
            ("gpt-4.1-mini", Some("high"), false),
            ("gpt-5", None, true),
            ("gpt-5-mini", Some("minimal"), true),
            ("gpt-5-chat-latest", None, false),
            ("gpt-5.1", None, false),
            ("gpt-5.1", Some("low"), true),
            ("gpt-5.1-chat-latest", None, true),
            ("gpt-5.2", Some("none"), false),
            ("gpt-5.5", None, true),
            ("gpt-5.5", Some("none"), false),
            ("gpt-5.5-pro", Some("none"), true),
            ("o3-mini", None, true),
            ("o4-mini", Some("none"), true),
        ] {
            assert_eq!(reasons(model, effort), expected, "{model} {effort:?}");
        }
    }

    #[test]
    fn sampling_parameters_leave_a_reasoning_request_only() {
        let mut body = json!({"model": "gpt-5", "temperature": 0.2, "top_p": 0.9, "seed": 1});
        assert_eq!(drop_sampling("gpt-5", &mut body, "/reasoning_effort"), ["temperature", "top_p"]);
        assert_eq!(body, json!({"model": "gpt-5", "seed": 1}));
        let mut body = json!({"temperature": 0.2, "reasoning": {"effort": "none"}});
        assert!(drop_sampling("gpt-5.2", &mut body, "/reasoning/effort").is_empty());
        assert_eq!(body["temperature"], 0.2);
    }
}
