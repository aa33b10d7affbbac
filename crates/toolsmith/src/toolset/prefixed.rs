//! [`PrefixedToolset`]: every tool's name prefixed, to avoid name conflicts.

use std::sync::Arc;

use crate::context::RunContext;
use crate::error::UserError;
use crate::toolset::renamed::call_as_original;
use crate::toolset::{Toolset, ToolsetTool};

/// A toolset whose tools are shown as `{prefix}_{name}`.
///
/// A call of `{prefix}_{name}` reaches the tool `name`, which sees its own name in
/// `ctx.tool_name`. The label is `PrefixedToolset(<wrapped label>)`, and prefixed tools report it
/// as their toolset in name conflicts (as in Pydantic AI).
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::ToolsetExt;
///
/// /// Look up the weather.
/// #[tool]
/// fn get_weather(city: String) -> String { format!("sunny in {city}") }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = FunctionToolset::new().with_tool(get_weather).prefixed("uk");
/// assert_eq!(toolset.label(), "PrefixedToolset(FunctionToolset)");
/// let agent = Agent::builder(TestModel::default()).toolset(toolset).build()?;
/// let result = agent.run("go").run_sync()?;
/// assert_eq!(result.output(), r#"{"uk_get_weather":"sunny in a"}"#);
/// # Ok(())
/// # }
/// ```
pub struct PrefixedToolset<T> {
    inner: T,
    prefix: String,
    label: Arc<str>,
    derived: super::derived::Derived,
}

impl<T> PrefixedToolset<T> {
    /// Wraps `inner`, prefixing its tools' names with `{prefix}_`.
    pub fn new<D>(inner: T, prefix: impl Into<String>) -> Self
    where
        T: Toolset<D>,
    {
        let label = Arc::from(format!("PrefixedToolset({})", inner.label()));
        PrefixedToolset { inner, prefix: prefix.into(), label, derived: Default::default() }
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The prefix (without the `_` separator).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for PrefixedToolset<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrefixedToolset").field("inner", &self.inner).field("prefix", &self.prefix).finish()
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for PrefixedToolset<T> {
    fn label(&self) -> String {
        self.label.to_string()
    }

    fn check(&self) -> Result<(), UserError> {
        self.inner.check()
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.inner.enter().await
    }

    async fn exit(&self) {
        self.inner.exit().await
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        Ok(self.apply(self.inner.get_tools(ctx).await?))
    }

    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        let inner = self.inner.get_tools_shared(ctx).await?;
        self.derived.get(std::slice::from_ref(&inner), || Ok(self.apply(inner.to_vec())))
    }
}

impl<T> PrefixedToolset<T> {
    fn apply<D: Send + Sync + 'static>(&self, mut tools: Vec<ToolsetTool<D>>) -> Vec<ToolsetTool<D>> {
        for tool in &mut tools {
            let mut name = String::with_capacity(self.prefix.len() + 1 + tool.def.name.len());
            name.push_str(&self.prefix);
            name.push('_');
            name.push_str(&tool.def.name);
            let original = std::mem::replace(&mut Arc::make_mut(&mut tool.def).name, name);
            tool.toolset_label = self.label.clone();
            tool.handler = call_as_original(tool.handler.clone(), original);
        }
        tools
    }
}
