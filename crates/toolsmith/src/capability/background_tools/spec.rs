//! [`BackgroundTools`] from a spec's arguments, with the harness's names.

use serde::Deserialize;
use serde_json::Value;

use super::BackgroundTools;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    max_concurrent: Option<usize>,
}

impl<D: Clone + Send + Sync + 'static> BackgroundTools<D> {
    /// From a spec's arguments (the harness's `from_spec`): `tools` (`all`, a list of names or a
    /// metadata mapping; by default `{"background": true}`), `id`; and toolsmith's
    /// `max_concurrent`.
    pub fn from_spec(args: &Value) -> Result<Self, String> {
        let args = if args.is_null() { Value::Object(Default::default()) } else { args.clone() };
        let a: Args =
            serde_json::from_value(args).map_err(|e| format!("invalid arguments for BackgroundTools: {e}"))?;
        let _ = a.id;
        let mut capability = BackgroundTools::new();
        if let Some(tools) = a.tools {
            capability = capability.tools(crate::capability::tool_output_limits::spec_selector(&tools)?);
        }
        if let Some(n) = a.max_concurrent {
            capability = capability.max_concurrent(n).map_err(|e| e.to_string())?;
        }
        Ok(capability)
    }
}
