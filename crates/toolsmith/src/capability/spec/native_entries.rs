//! The spec entries of the native tools: `NativeTool` (flat or `tool:` form) and the
//! capabilities with a local fallback, `WebSearch`, `WebFetch`, `ImageGeneration` and `MCP`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{CapabilityRegistry, SpecArgs, SpecError, field_hint};
use crate::capability::{BoxedCapability, ImageGeneration, Mcp, WebFetch, WebSearch};
use crate::native::{self, NativeTool};

/// `local`: `true` / absent (the default local tool), `false` (none), or a named strategy.
#[derive(Deserialize)]
#[serde(untagged)]
enum LocalArg {
    On(bool),
    Named(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebSearchArgs {
    #[serde(default)]
    search_context_size: Option<native::SearchContextSize>,
    #[serde(default)]
    user_location: Option<native::UserLocation>,
    #[serde(default)]
    blocked_domains: Option<Vec<String>>,
    #[serde(default)]
    allowed_domains: Option<Vec<String>>,
    #[serde(default)]
    max_uses: Option<u32>,
    #[serde(default = "yes")]
    native: bool,
    #[serde(default)]
    local: Option<LocalArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebFetchArgs {
    #[serde(default)]
    allowed_domains: Option<Vec<String>>,
    #[serde(default)]
    blocked_domains: Option<Vec<String>>,
    #[serde(default)]
    max_uses: Option<u32>,
    #[serde(default)]
    enable_citations: Option<bool>,
    #[serde(default)]
    max_content_tokens: Option<u32>,
    #[serde(default = "yes")]
    native: bool,
    #[serde(default)]
    local: Option<LocalArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpArgs {
    url: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    authorization_token: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    allowed_tools: Option<Vec<String>>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default = "yes")]
    native: bool,
    #[serde(default)]
    local: Option<LocalArg>,
}

fn yes() -> bool {
    true
}

/// Whether `local` keeps the default local tool; a named strategy must be one of `names`.
fn local_on<D: Clone + Send + Sync + 'static>(
    entry: &str,
    local: Option<LocalArg>,
    names: &[&str],
    args: &SpecArgs<'_, D>,
) -> Result<bool, SpecError> {
    match local {
        None | Some(LocalArg::On(true)) => Ok(true),
        Some(LocalArg::On(false)) => Ok(false),
        Some(LocalArg::Named(n)) if names.contains(&n.as_str()) => Ok(true),
        Some(LocalArg::Named(n)) => Err(args.error(format!(
            "{entry}: local `{n}` is not a known strategy ({}); a tool of your own is given in code with {entry}::local",
            if names.is_empty() { "this entry has none".to_string() } else { format!("known: {}", names.join(", ")) }
        ))),
    }
}

fn built<D: Clone + Send + Sync + 'static>(
    entry: &str,
    args: &SpecArgs<'_, D>,
    cap: Result<crate::capability::NativeOrLocalTool<D>, crate::UserError>,
) -> Result<BoxedCapability<D>, SpecError> {
    cap.map(BoxedCapability::new).map_err(|e| args.error(format!("{entry}: {}", e.message)))
}

pub(super) fn register<D: Clone + Send + Sync + 'static>(registry: CapabilityRegistry<D>) -> CapabilityRegistry<D> {
    registry
        .register("NativeTool", |args| {
            // Flat, `{NativeTool: {kind: web_search, max_uses: 3}}`, as Pydantic AI's JSON writes
            // one; or explicit, `{NativeTool: {tool: {kind: web_search}}}`.
            let value = match args.value() {
                Value::Object(m) if m.len() == 1 && m.contains_key("tool") => &m["tool"],
                v => v,
            };
            let tool: NativeTool = serde_json::from_value(value.clone())
                .map_err(|e| args.error(format!("invalid arguments for NativeTool: {e}{}", field_hint(&e))))?;
            Ok(BoxedCapability::new(tool))
        })
        .register("WebSearch", |args| {
            let a: WebSearchArgs = args.parse()?;
            let mut cap = WebSearch::<D>::new().native(a.native);
            if let Some(s) = a.search_context_size {
                cap = cap.search_context_size(s);
            }
            if let Some(l) = a.user_location {
                cap = cap.user_location(l);
            }
            if let Some(d) = a.allowed_domains {
                cap = cap.allowed_domains(d);
            }
            if let Some(d) = a.blocked_domains {
                cap = cap.blocked_domains(d);
            }
            if let Some(n) = a.max_uses {
                cap = cap.max_uses(n);
            }
            if !local_on("WebSearch", a.local, &["duckduckgo"], args)? {
                cap = cap.no_local();
            }
            built("WebSearch", args, cap.build())
        })
        .register("WebFetch", |args| {
            let a: WebFetchArgs = args.parse()?;
            let mut cap = WebFetch::<D>::new().native(a.native);
            if let Some(d) = a.allowed_domains {
                cap = cap.allowed_domains(d);
            }
            if let Some(d) = a.blocked_domains {
                cap = cap.blocked_domains(d);
            }
            if let Some(n) = a.max_uses {
                cap = cap.max_uses(n);
            }
            if let Some(c) = a.enable_citations {
                cap = cap.enable_citations(c);
            }
            if let Some(n) = a.max_content_tokens {
                cap = cap.max_content_tokens(n);
            }
            if !local_on("WebFetch", a.local, &[], args)? {
                cap = cap.no_local();
            }
            built("WebFetch", args, cap.build())
        })
        .register("ImageGeneration", |args| {
            // `native`/`local` beside the image settings; a fallback model or tool is given in code.
            let mut value = match args.value() {
                Value::Null => Value::Object(Default::default()),
                v => v.clone(),
            };
            let mut native = true;
            if let Value::Object(m) = &mut value {
                if let Some(n) = m.remove("native") {
                    native = n.as_bool().ok_or_else(|| args.error("ImageGeneration: `native` is true or false"))?;
                }
                if let Some(l) = m.remove("local").filter(|l| *l != Value::Bool(false)) {
                    return Err(args.error(format!(
                        "ImageGeneration: local {l} cannot be written in a spec: give a tool with ImageGeneration::local or a model with ImageGeneration::fallback_model in code"
                    )));
                }
            }
            let settings: native::ImageGeneration = serde_json::from_value(value)
                .map_err(|e| args.error(format!("invalid arguments for ImageGeneration: {e}{}", field_hint(&e))))?;
            built("ImageGeneration", args, ImageGeneration::<D>::new().native_tool(settings).native(native).build())
        })
        .register("MCP", |args| {
            let a: McpArgs = args.parse_with_main("url")?;
            let mut cap = Mcp::<D>::new(a.url).native(a.native);
            if let Some(id) = a.id {
                cap = cap.id(id);
            }
            if let Some(t) = a.authorization_token {
                cap = cap.authorization_token(t);
            }
            for (k, v) in a.headers.into_iter().flatten() {
                cap = cap.header(k, v);
            }
            if let Some(t) = a.allowed_tools {
                cap = cap.allowed_tools(t);
            }
            if let Some(d) = a.description {
                cap = cap.description(d);
            }
            if !local_on("MCP", a.local, &[], args)? {
                cap = cap.no_local();
            }
            built("MCP", args, cap.build())
        })
}
