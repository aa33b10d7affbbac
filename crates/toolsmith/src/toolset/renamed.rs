//! [`RenamedToolset`]: tools shown to the model under other names.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::Handler;
use crate::toolset::{Toolset, ToolsetTool};

/// Wraps a handler so that the tool sees its own (original) name in `ctx.tool_name`, as Pydantic
/// AI does for prefixed and renamed tools.
pub(crate) fn call_as_original<D: 'static>(handler: Handler<D>, original: String) -> Handler<D> {
    match handler {
        // A handler that reads no context has no name to see.
        Handler::Plain(h) => Handler::Plain(h),
        contextual => {
            Handler::contextual(move |mut ctx: RunContext<D>, args: std::borrow::Cow<'_, serde_json::Value>| {
                ctx.tool_name = Some(original.clone());
                contextual.call(|| ctx, args)
            })
        }
    }
}

/// A toolset whose tools are shown under other names, from a map of *new name → original name*.
/// Tools not in the map keep their names.
///
/// A call of a renamed tool reaches the original tool, which sees its original name in
/// `ctx.tool_name`. A renamed tool whose new name is taken by another tool of the toolset is a
/// [`UserError`] (`Renaming tool 'a' to 'b' conflicts with existing tool.`). The label is
/// `RenamedToolset(<wrapped label>)`, and renamed tools report it as their toolset in name
/// conflicts.
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
/// let toolset = FunctionToolset::new().with_tool(get_weather).renamed([("weather", "get_weather")]);
/// let agent = Agent::builder(TestModel::default()).toolset(toolset).build()?;
/// let result = agent.run("go").run_sync()?;
/// assert_eq!(result.output(), r#"{"weather":"sunny in a"}"#);
/// # Ok(())
/// # }
/// ```
pub struct RenamedToolset<T> {
    inner: T,
    /// new name -> original name.
    name_map: HashMap<String, String>,
    /// original name -> new name.
    reverse: HashMap<String, String>,
    label: Arc<str>,
    derived: super::derived::Derived,
}

impl<T> RenamedToolset<T> {
    /// Wraps `inner`, renaming tools with the map `(new name, original name)`.
    pub fn new<D, I, N, O>(inner: T, name_map: I) -> Self
    where
        T: Toolset<D>,
        I: IntoIterator<Item = (N, O)>,
        N: Into<String>,
        O: Into<String>,
    {
        let mut map = HashMap::new();
        let mut reverse = HashMap::new();
        for (new, old) in name_map {
            let (new, old) = (new.into(), old.into());
            reverse.insert(old.clone(), new.clone());
            map.insert(new, old);
        }
        let label = Arc::from(format!("RenamedToolset({})", inner.label()));
        RenamedToolset { inner, name_map: map, reverse, label, derived: Default::default() }
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The map of new names to original names.
    pub fn name_map(&self) -> &HashMap<String, String> {
        &self.name_map
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for RenamedToolset<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenamedToolset").field("inner", &self.inner).field("name_map", &self.name_map).finish()
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for RenamedToolset<T> {
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
        self.apply(self.inner.get_tools(ctx).await?)
    }

    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        let inner = self.inner.get_tools_shared(ctx).await?;
        if self.reverse.is_empty() {
            return Ok(inner);
        }
        self.derived.get(std::slice::from_ref(&inner), || self.apply(inner.to_vec()))
    }
}

impl<T> RenamedToolset<T> {
    fn apply<D: Send + Sync + 'static>(
        &self,
        mut tools: Vec<ToolsetTool<D>>,
    ) -> Result<Vec<ToolsetTool<D>>, UserError> {
        if self.reverse.is_empty() {
            return Ok(tools);
        }
        let mut renamed = vec![false; tools.len()];
        let mut any = false;
        for (tool, renamed) in tools.iter_mut().zip(renamed.iter_mut()) {
            if let Some(new) = self.reverse.get(&tool.def.name) {
                let original = std::mem::replace(&mut Arc::make_mut(&mut tool.def).name, new.clone());
                tool.toolset_label = self.label.clone();
                tool.handler = call_as_original(tool.handler.clone(), original);
                *renamed = true;
                any = true;
            }
        }
        if any {
            let mut seen: HashSet<&str> = HashSet::with_capacity(tools.len());
            for (tool, &was_renamed) in tools.iter().zip(&renamed) {
                let name = tool.def.name.as_str();
                if !seen.insert(name) {
                    return Err(UserError::new(if was_renamed {
                        let original = self.name_map.get(name).map(String::as_str).unwrap_or(name);
                        format!("Renaming tool '{original}' to '{name}' conflicts with existing tool.")
                    } else {
                        format!("Tool name conflicts with previously renamed tool: '{name}'.")
                    }));
                }
            }
        }
        Ok(tools)
    }
}
