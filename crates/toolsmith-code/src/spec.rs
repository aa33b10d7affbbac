//! `CodeMode` in capability specs: the harness's arguments (`tools`, `max_retries`,
//! `max_tool_calls`, `resource_limits`), registered under its name.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use toolsmith::capability::{BoxedCapability, CapabilityRegistry};
use toolsmith::toolset::ToolSelector;

use crate::{CodeMode, CodeModeLimits};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    max_retries: Option<u32>,
    #[serde(default)]
    max_tool_calls: Option<u32>,
    #[serde(default)]
    resource_limits: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Limits {
    #[serde(default)]
    max_duration_secs: Option<f64>,
    #[serde(default)]
    max_memory: Option<usize>,
    #[serde(default)]
    max_suspensions: Option<usize>,
}

impl<D: Clone + Send + Sync + 'static> CodeMode<D> {
    /// From a spec's arguments, as the harness's `CodeMode` takes them: `tools` (`"all"` or a
    /// list of names), `max_retries`, `max_tool_calls` and `resource_limits` (`"unlimited"` or
    /// `max_duration_secs`, `max_memory`, `max_suspensions`).
    ///
    /// ```
    /// use toolsmith_code::CodeMode;
    ///
    /// let args = serde_json::json!({"tools": ["get_order"], "resource_limits": {"max_duration_secs": 5}});
    /// assert!(CodeMode::<()>::from_spec(&args).is_ok());
    /// assert!(CodeMode::<()>::from_spec(&serde_json::json!({"tool": "all"})).is_err());
    /// ```
    pub fn from_spec(args: &Value) -> Result<Self, String> {
        let args = if args.is_null() { Value::Object(Default::default()) } else { args.clone() };
        let a: Args = serde_json::from_value(args).map_err(|e| format!("invalid arguments for CodeMode: {e}"))?;
        let mut mode = CodeMode::new();
        match a.tools {
            None => {}
            Some(Value::String(s)) if s == "all" => {}
            Some(Value::Array(names)) => {
                let names: Option<Vec<String>> = names.iter().map(|n| n.as_str().map(str::to_string)).collect();
                let names = names.ok_or("CodeMode: `tools` lists tool names")?;
                mode = mode.tools(ToolSelector::names(names));
            }
            Some(other) => return Err(format!("CodeMode: `tools` is \"all\" or a list of names, got {other}")),
        }
        if let Some(r) = a.max_retries {
            mode = mode.max_retries(r);
        }
        let mut limits = match &a.resource_limits {
            Some(Value::String(s)) if s == "unlimited" => CodeModeLimits::unlimited(),
            Some(Value::Object(_)) | None => CodeModeLimits::default(),
            Some(other) => return Err(format!("CodeMode: `resource_limits` is \"unlimited\" or a table, got {other}")),
        };
        if let Some(v @ Value::Object(_)) = a.resource_limits {
            let l: Limits = serde_json::from_value(v).map_err(|e| format!("CodeMode: `resource_limits`: {e}"))?;
            if let Some(secs) = l.max_duration_secs {
                let d = Duration::try_from_secs_f64(secs)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or("CodeMode: `max_duration_secs` must be a positive number of seconds")?;
                limits = limits.max_duration(d);
            }
            if let Some(m) = l.max_memory {
                limits = limits.max_memory(m);
            }
            if let Some(s) = l.max_suspensions {
                limits = limits.max_suspensions(s);
            }
        }
        if let Some(n) = a.max_tool_calls {
            limits = limits.max_tool_calls(n);
        }
        limits.check().map_err(|e| e.to_string())?;
        Ok(mode.limits(limits))
    }
}

/// Adds `CodeMode` to a registry of capability specs (the core's registry does not know this
/// crate).
///
/// ```
/// use toolsmith::capability::{CapabilityRegistry, CapabilitySpec};
///
/// let registry = toolsmith_code::register(CapabilityRegistry::<()>::new());
/// let spec = CapabilitySpec::from_value(serde_json::json!([{"CodeMode": {"tools": "all"}}])).unwrap();
/// let agent = toolsmith::Agent::builder(toolsmith::prelude::TestModel::default())
///     .capabilities_from_spec(&spec, &registry)
///     .build();
/// assert!(agent.is_ok());
/// ```
pub fn register<D: Clone + Send + Sync + 'static>(registry: CapabilityRegistry<D>) -> CapabilityRegistry<D> {
    registry.register("CodeMode", |args| {
        CodeMode::<D>::from_spec(args.value()).map(BoxedCapability::new).map_err(|e| args.error(e))
    })
}
