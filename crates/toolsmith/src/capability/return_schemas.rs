//! [`IncludeToolReturnSchemas`]: tell the model what the selected tools return.

use super::{Capability, HookStage};
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::tool::ToolDefinition;
use crate::toolset::ToolSelector;

/// A capability that shows the model the JSON schema of what the selected tools return: it sets
/// [`include_return_schema`](ToolDefinition::include_return_schema) to `Some(true)` on the
/// selected tools that have not set it themselves (a tool's own `Some(false)` wins). The agent
/// then sends the schema in a field of its own where the model's API has one (Gemini's
/// `responseJsonSchema`), and elsewhere appends it to the description as `"Return schema:"`
/// followed by the indented JSON, after a blank line when the tool has a description.
///
/// ```
/// use toolsmith::capability::IncludeToolReturnSchemas;
/// use toolsmith::toolset::ToolSelector;
///
/// let all = IncludeToolReturnSchemas::<()>::all();
/// let some = IncludeToolReturnSchemas::<()>::for_tools(["get_user"]);
/// let tagged = IncludeToolReturnSchemas::<()>::for_tools(ToolSelector::metadata([("returns", "records")]));
/// # let _ = (all, some, tagged);
/// ```
#[derive(Debug, Clone, Default)]
pub struct IncludeToolReturnSchemas<D = ()> {
    tools: ToolSelector<D>,
}

impl<D> IncludeToolReturnSchemas<D> {
    /// For every tool.
    pub fn all() -> Self {
        IncludeToolReturnSchemas { tools: ToolSelector::All }
    }

    /// For the selected tools only (names, metadata pairs or a predicate).
    pub fn for_tools(tools: impl Into<ToolSelector<D>>) -> Self {
        IncludeToolReturnSchemas { tools: tools.into() }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for IncludeToolReturnSchemas<D> {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Ok(tools
            .into_iter()
            .map(|mut d| {
                if d.include_return_schema.is_none() && self.tools.matches(ctx, &d) {
                    d.include_return_schema = Some(true);
                }
                d
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn selected_tools_ask_for_their_schema_unless_they_opted_out() {
        let tool = |name: &str, include: Option<bool>| {
            let mut d = ToolDefinition::new(name, serde_json::json!({"type": "object"}))
                .with_metadata(serde_json::json!({"team": if name == "b" { "core" } else { "web" }}));
            d.include_return_schema = include;
            d
        };
        let ctx = RunContext::with_deps(());
        let tools = || vec![tool("a", None), tool("b", None), tool("c", Some(false))];
        let flags = |defs: Vec<ToolDefinition>| defs.iter().map(|d| d.include_return_schema).collect::<Vec<_>>();
        let all = IncludeToolReturnSchemas::all().prepare_tools(&ctx, tools()).await.unwrap();
        assert_eq!(flags(all), [Some(true), Some(true), Some(false)]);
        let named = IncludeToolReturnSchemas::for_tools(["a", "c"]).prepare_tools(&ctx, tools()).await.unwrap();
        assert_eq!(flags(named), [Some(true), None, Some(false)]);
        let tagged = IncludeToolReturnSchemas::for_tools(ToolSelector::metadata([("team", "core")]));
        assert_eq!(flags(tagged.prepare_tools(&ctx, tools()).await.unwrap()), [None, Some(true), Some(false)]);
    }
}
