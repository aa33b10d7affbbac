//! [`Thinking`]: turn model thinking (reasoning) on or off, at an effort level.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::{Capability, HookStage};
use crate::context::RunContext;
use crate::model::ModelSettings;

/// How hard the model thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ThinkingEffort {
    /// No thinking (ignored by models that always think). `false` in a spec.
    Disabled,
    /// Thinking at the provider's default effort. `true` in a spec.
    #[default]
    Enabled,
    /// The least thinking. `minimal` in a spec.
    Minimal,
    /// `low` in a spec.
    Low,
    /// `medium` in a spec.
    Medium,
    /// `high` in a spec.
    High,
    /// The most thinking. `xhigh` in a spec.
    XHigh,
}

/// The smallest `budget_tokens` Anthropic's extended thinking takes.
const ANTHROPIC_MIN_BUDGET: u32 = 1024;

impl ThinkingEffort {
    fn level(self) -> Option<&'static str> {
        match self {
            ThinkingEffort::Disabled | ThinkingEffort::Enabled => None,
            ThinkingEffort::Minimal => Some("minimal"),
            ThinkingEffort::Low => Some("low"),
            ThinkingEffort::Medium => Some("medium"),
            ThinkingEffort::High => Some("high"),
            ThinkingEffort::XHigh => Some("xhigh"),
        }
    }

    /// A token budget for providers that take one.
    fn budget(self) -> u32 {
        match self {
            ThinkingEffort::Disabled => 0,
            ThinkingEffort::Minimal => 1024,
            ThinkingEffort::Low => 2048,
            ThinkingEffort::Enabled | ThinkingEffort::Medium => 10_000,
            ThinkingEffort::High => 16384,
            ThinkingEffort::XHigh => 32768,
        }
    }
}

impl Serialize for ThinkingEffort {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self, self.level()) {
            (_, Some(level)) => s.serialize_str(level),
            (ThinkingEffort::Disabled, None) => s.serialize_bool(false),
            _ => s.serialize_bool(true),
        }
    }
}

impl<'de> Deserialize<'de> for ThinkingEffort {
    fn deserialize<De: Deserializer<'de>>(d: De) -> Result<Self, De::Error> {
        let v = Value::deserialize(d)?;
        Ok(match &v {
            Value::Bool(true) => ThinkingEffort::Enabled,
            Value::Bool(false) => ThinkingEffort::Disabled,
            Value::String(s) => match s.as_str() {
                "minimal" => ThinkingEffort::Minimal,
                "low" => ThinkingEffort::Low,
                "medium" => ThinkingEffort::Medium,
                "high" => ThinkingEffort::High,
                "xhigh" => ThinkingEffort::XHigh,
                _ => return Err(serde::de::Error::custom(bad_effort(&v))),
            },
            _ => return Err(serde::de::Error::custom(bad_effort(&v))),
        })
    }
}

fn bad_effort(v: &Value) -> String {
    format!("invalid thinking effort {v}: expected true, false, 'minimal', 'low', 'medium', 'high' or 'xhigh'")
}

/// Which provider settings a [`Thinking`] capability writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ThinkingFormat {
    /// From the model's API ([`Model::api`](crate::model::Model::api)) or system: OpenAI
    /// Responses, `anthropic`, `google`, and OpenAI Chat Completions for the rest
    /// (OpenAI-compatible servers take `reasoning_effort`).
    #[default]
    Auto,
    /// Anthropic's `thinking: {type, budget_tokens}` (and a `max_tokens` above the budget when
    /// none is set).
    Anthropic,
    /// Gemini's `generationConfig.thinkingConfig`.
    Gemini,
    /// OpenAI Chat Completions' `reasoning_effort`.
    OpenAIChat,
    /// OpenAI Responses' `reasoning: {effort}`.
    OpenAIResponses,
}

/// A capability that turns model thinking on (at an effort level) or off for every request.
///
/// [`ModelSettings`] has no provider-neutral thinking field, so the capability writes the
/// provider's own setting into [`ModelSettings::extra`] (which providers merge into the request
/// body), chosen from the model's system or set with [`Thinking::format`]:
///
/// | provider | setting |
/// |---|---|
/// | `anthropic` | `thinking: {"type": "enabled", "budget_tokens": N}` (`{"type": "disabled"}` when off); with no `max_tokens` set, one 4,096 tokens above the budget; with a smaller one, the budget is lowered below it (a `max_tokens` of 1,024 or less, under Anthropic's smallest budget, is raised to 1,025) |
/// | `google` | `generationConfig.thinkingConfig: {"thinkingBudget": N, "includeThoughts": true}` (budget `0` when off, `-1` for the default effort) |
/// | OpenAI Chat and compatible | `reasoning_effort: "low"` ... (`"medium"` for the default effort; nothing when off) |
/// | OpenAI Responses (`Model::api` `"openai-responses"`) | `reasoning: {"effort": "low"}` ... |
///
/// Budgets: minimal 1024, low 2048, medium (and the default) 10000, high 16384, xhigh 32768
/// tokens. A provider setting already present in the agent's or the run's model settings takes
/// precedence: the capability leaves it alone.
///
/// ```
/// use toolsmith::capability::{Thinking, ThinkingEffort};
///
/// let deep = Thinking::high();
/// let off = Thinking::new(ThinkingEffort::Disabled);
/// # let _ = (deep, off);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Thinking {
    effort: ThinkingEffort,
    format: ThinkingFormat,
}

impl Thinking {
    /// Thinking at `effort`.
    pub fn new(effort: ThinkingEffort) -> Self {
        Thinking { effort, format: ThinkingFormat::Auto }
    }

    /// Thinking at the provider's default effort.
    pub fn enabled() -> Self {
        Self::new(ThinkingEffort::Enabled)
    }

    /// Thinking at high effort.
    pub fn high() -> Self {
        Self::new(ThinkingEffort::High)
    }

    /// Which provider settings to write (default: from the model's system).
    pub fn format(mut self, format: ThinkingFormat) -> Self {
        self.format = format;
        self
    }

    /// The effort.
    pub fn effort(&self) -> ThinkingEffort {
        self.effort
    }

    /// The model settings for a model of `system` (and name), over `current` settings.
    pub(crate) fn settings_for(
        &self,
        api: &str,
        system: &str,
        model: &str,
        current: Option<&ModelSettings>,
    ) -> Option<ModelSettings> {
        let format = match self.format {
            ThinkingFormat::Auto => match (api, system) {
                ("openai-responses", _) => ThinkingFormat::OpenAIResponses,
                ("anthropic-messages", _) | (_, "anthropic") => ThinkingFormat::Anthropic,
                ("gemini", _) | (_, "google" | "google-gla" | "google-vertex" | "gemini") => ThinkingFormat::Gemini,
                _ => ThinkingFormat::OpenAIChat,
            },
            f => f,
        };
        let extra = current.and_then(|s| s.extra.as_deref()).and_then(Value::as_object);
        let has = |pointer: &str| current.and_then(|s| s.extra.as_ref()).and_then(|e| e.pointer(pointer)).is_some();
        let effort = self.effort;
        let mut max_tokens = None;
        let (key, value) = match format {
            ThinkingFormat::Anthropic => {
                if has("/thinking") {
                    return None;
                }
                if effort == ThinkingEffort::Disabled {
                    ("thinking", json!({"type": "disabled"}))
                } else {
                    let mut budget = effort.budget();
                    match current.and_then(|s| s.max_tokens) {
                        // The budget must stay below `max_tokens`, and Anthropic takes no budget
                        // under 1,024 tokens: a smaller `max_tokens` is raised just above it.
                        Some(max) if max <= ANTHROPIC_MIN_BUDGET => {
                            tracing::warn!(
                                max_tokens = max,
                                "extended thinking needs a max_tokens above its minimum budget of {ANTHROPIC_MIN_BUDGET} tokens; sending {}",
                                ANTHROPIC_MIN_BUDGET + 1
                            );
                            budget = ANTHROPIC_MIN_BUDGET;
                            max_tokens = Some(ANTHROPIC_MIN_BUDGET + 1);
                        }
                        Some(max) if max <= budget => budget = max - 1,
                        Some(_) => {}
                        None => max_tokens = Some(budget + 4096),
                    }
                    ("thinking", json!({"type": "enabled", "budget_tokens": budget}))
                }
            }
            ThinkingFormat::Gemini => {
                if has("/generationConfig/thinkingConfig") {
                    return None;
                }
                let config = match effort {
                    // Pro models always think: turning it off is not possible there.
                    ThinkingEffort::Disabled if model.contains("pro") => return None,
                    ThinkingEffort::Disabled => json!({"thinkingBudget": 0}),
                    ThinkingEffort::Enabled => json!({"thinkingBudget": -1, "includeThoughts": true}),
                    e => json!({"thinkingBudget": e.budget(), "includeThoughts": true}),
                };
                let mut generation = extra
                    .and_then(|e| e.get("generationConfig"))
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                generation.insert("thinkingConfig".into(), config);
                ("generationConfig", Value::Object(generation))
            }
            ThinkingFormat::OpenAIChat | ThinkingFormat::Auto => {
                if has("/reasoning_effort") || effort == ThinkingEffort::Disabled {
                    return None;
                }
                ("reasoning_effort", json!(effort.level().unwrap_or("medium")))
            }
            ThinkingFormat::OpenAIResponses => {
                if has("/reasoning/effort") || effort == ThinkingEffort::Disabled {
                    return None;
                }
                let mut reasoning =
                    extra.and_then(|e| e.get("reasoning")).and_then(Value::as_object).cloned().unwrap_or_default();
                reasoning.insert("effort".into(), json!(effort.level().unwrap_or("medium")));
                ("reasoning", Value::Object(reasoning))
            }
        };
        let mut merged: Map<String, Value> = extra.cloned().unwrap_or_default();
        merged.insert(key.into(), value);
        let mut settings = ModelSettings::new();
        settings.extra = Some(Box::new(Value::Object(merged)));
        settings.max_tokens = max_tokens;
        Some(settings)
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for Thinking {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    fn model_settings(&self, ctx: &RunContext<D>) -> Option<ModelSettings> {
        self.settings_for(&ctx.model.api, &ctx.model.system, &ctx.model.name, ctx.model_settings.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extra(t: Thinking, system: &str, current: Option<ModelSettings>) -> Option<Value> {
        t.settings_for("", system, "m", current.as_ref()).and_then(|s| s.extra).map(|e| *e)
    }

    #[test]
    fn efforts_round_trip_through_serde() {
        for (json, effort) in [
            (json!(true), ThinkingEffort::Enabled),
            (json!(false), ThinkingEffort::Disabled),
            (json!("xhigh"), ThinkingEffort::XHigh),
        ] {
            assert_eq!(serde_json::from_value::<ThinkingEffort>(json.clone()).unwrap(), effort);
            assert_eq!(serde_json::to_value(effort).unwrap(), json);
        }
        let err = serde_json::from_value::<ThinkingEffort>(json!("max")).unwrap_err().to_string();
        assert!(err.contains("expected true, false, 'minimal'"), "{err}");
    }

    #[test]
    fn provider_settings() {
        assert_eq!(extra(Thinking::high(), "openai", None), Some(json!({"reasoning_effort": "high"})));
        assert_eq!(extra(Thinking::enabled(), "groq", None), Some(json!({"reasoning_effort": "medium"})));
        assert_eq!(
            extra(Thinking::high().format(ThinkingFormat::OpenAIResponses), "openai", None),
            Some(json!({"reasoning": {"effort": "high"}}))
        );
        let anthropic = Thinking::new(ThinkingEffort::Low).settings_for("", "anthropic", "claude", None).unwrap();
        assert_eq!(anthropic.extra, Some(Box::new(json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}))));
        assert_eq!(anthropic.max_tokens, Some(2048 + 4096));
        assert_eq!(
            extra(Thinking::new(ThinkingEffort::Disabled), "google", None),
            Some(json!({"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}))
        );
        assert_eq!(extra(Thinking::new(ThinkingEffort::Disabled), "openai", None), None);
    }

    #[test]
    fn the_api_chooses_the_setting_and_later_settings_keep_it() {
        let responses = Thinking::high().settings_for("openai-responses", "openai", "gpt-5", None).unwrap();
        assert_eq!(responses.extra, Some(Box::new(json!({"reasoning": {"effort": "high"}}))));
        // A later capability's provider settings merge key by key: the reasoning effort stays.
        let mut later = ModelSettings::new();
        later.extra = Some(Box::new(json!({"reasoning": {"summary": "auto"}, "store": false})));
        assert_eq!(
            responses.merged(&later).extra,
            Some(Box::new(json!({"reasoning": {"effort": "high", "summary": "auto"}, "store": false})))
        );
        let chat = Thinking::high().settings_for("openai-chat", "openai", "gpt-4o", None).unwrap();
        assert_eq!(chat.extra, Some(Box::new(json!({"reasoning_effort": "high"}))));
    }

    #[test]
    fn existing_provider_settings_win_and_other_extras_stay() {
        let mut current = ModelSettings::new();
        current.extra = Some(Box::new(json!({"reasoning_effort": "low"})));
        assert_eq!(extra(Thinking::high(), "openai", Some(current)), None);
        let mut current = ModelSettings::new().max_tokens(1500);
        current.extra = Some(Box::new(json!({"metadata": {"user": "u1"}})));
        let s = Thinking::high().settings_for("", "anthropic", "claude", Some(&current)).unwrap();
        assert_eq!(
            s.extra,
            Some(Box::new(json!({"metadata": {"user": "u1"}, "thinking": {"type": "enabled", "budget_tokens": 1499}})))
        );
        assert_eq!(s.max_tokens, None);
    }

    #[test]
    fn the_anthropic_budget_always_fits_below_max_tokens() {
        // Every effort against every max_tokens around the limits: the request Anthropic gets has a
        // budget of at least 1,024 tokens and a max_tokens above it.
        for effort in [ThinkingEffort::Minimal, ThinkingEffort::Low, ThinkingEffort::Enabled, ThinkingEffort::XHigh] {
            for max in [None, Some(1), Some(1000), Some(1024), Some(1025), Some(2048), Some(10_000), Some(40_000)] {
                let current = max.map(|m| ModelSettings::new().max_tokens(m));
                let s = Thinking::new(effort).settings_for("", "anthropic", "claude", current.as_ref()).unwrap();
                let budget = s.extra.as_ref().and_then(|e| e.pointer("/thinking/budget_tokens")).unwrap();
                let budget = u32::try_from(budget.as_u64().unwrap()).unwrap();
                let sent = s.max_tokens.or(max).unwrap();
                assert!(budget >= 1024 && sent > budget, "{effort:?} {max:?}: budget {budget}, max_tokens {sent}");
                if let Some(m) = max.filter(|m| *m > 1024) {
                    assert!(s.max_tokens.is_none(), "an explicit max_tokens above the minimum is kept: {m}");
                }
            }
        }
    }
}
