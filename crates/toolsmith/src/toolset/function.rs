//! [`FunctionToolset`]: tools defined in Rust.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::Tool;
use crate::toolset::{Toolset, ToolsetTool};

/// A toolset of Rust tools, in registration order.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Echo the message back.
/// #[tool]
/// fn echo(message: String) -> String { message }
///
/// let toolset: FunctionToolset<()> = FunctionToolset::new().with_tool(echo).max_retries(2);
/// assert_eq!(toolset.tool_names(), vec!["echo"]);
/// ```
pub struct FunctionToolset<D> {
    tools: Vec<Tool<D>>,
    index: rustc_hash::FxHashMap<String, usize>,
    max_retries: Option<u32>,
    pub(crate) timeout: Option<Duration>,
    problems: Vec<String>,
    label: Arc<str>,
    /// Whether a tool has a `prepare` function (its definition may then change per step).
    has_prepare: bool,
    /// The tools as offered to every step, built once when no tool has a `prepare` function.
    shared: OnceLock<Arc<[ToolsetTool<D>]>>,
}

impl<D> Default for FunctionToolset<D> {
    fn default() -> Self {
        FunctionToolset {
            tools: Vec::new(),
            index: Default::default(),
            max_retries: None,
            timeout: None,
            problems: Vec::new(),
            label: Arc::from("FunctionToolset"),
            has_prepare: false,
            shared: OnceLock::new(),
        }
    }
}

impl<D: Clone + Send + Sync + 'static> FunctionToolset<D> {
    /// An empty toolset.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a name already taken is reported by [`FunctionToolset::check`] (and so by
    /// the agent builder).
    pub fn add(&mut self, tool: impl Into<Tool<D>>) {
        let mut tool = tool.into();
        if tool.requires_approval && tool.def.kind == crate::tool::ToolKind::Function {
            Arc::make_mut(&mut tool.def).kind = crate::tool::ToolKind::Unapproved;
        }
        if let Err(e) = tool.check() {
            self.problems.push(e.message);
        }
        if self.index.contains_key(tool.name()) {
            self.problems.push(format!(
                "Tool name conflicts with existing tool: '{}'. Rename one of them (e.g. with `#[tool(name = \"...\")]` or `Tool::name_as`).",
                tool.name()
            ));
            return;
        }
        self.index.insert(tool.name().to_string(), self.tools.len());
        self.has_prepare |= tool.prepare.is_some();
        self.shared.take();
        self.tools.push(tool);
    }

    /// Adds a tool, builder style.
    pub fn with_tool(mut self, tool: impl Into<Tool<D>>) -> Self {
        self.add(tool);
        self
    }

    /// Adds several tools, builder style.
    pub fn with_tools<I, T>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<Tool<D>>,
    {
        for t in tools {
            self.add(t);
        }
        self
    }

    /// Sets the retry budget of tools that do not set their own.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = Some(retries);
        self.shared.take();
        self
    }

    /// Sets the timeout of tools that do not set their own.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        if timeout.is_zero() {
            self.problems.push("the toolset timeout must be greater than 0".to_string());
        }
        self.timeout = Some(timeout);
        self.shared.take();
        self
    }
}

impl<D> FunctionToolset<D> {
    /// A tool as offered to a step, with this definition.
    fn offered(&self, tool: &Tool<D>, def: Arc<crate::tool::ToolDefinition>) -> ToolsetTool<D> {
        ToolsetTool {
            def,
            max_retries: tool.max_retries.or(self.max_retries),
            requires_approval: tool.requires_approval,
            toolset_timeout: self.timeout,
            toolset_label: self.label.clone(),
            validator: tool.validator.clone(),
            args_validator: tool.args_validator.clone(),
            handler: tool.handler.clone(),
        }
    }

    /// The names of the tools, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The tools whose calls always defer (they require approval, or run outside the agent).
    pub(crate) fn deferring_tools(&self) -> impl Iterator<Item = &str> {
        use crate::tool::ToolKind;
        self.tools.iter().filter(|t| matches!(t.def.kind, ToolKind::Unapproved | ToolKind::External)).map(|t| t.name())
    }

    /// Whether the toolset has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Configuration problems found while adding tools.
    pub fn check(&self) -> Result<(), UserError> {
        match self.problems.first() {
            Some(p) => Err(UserError::new(p.clone())),
            None => Ok(()),
        }
    }
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for FunctionToolset<D> {
    fn label(&self) -> String {
        self.label.to_string()
    }

    fn check(&self) -> Result<(), UserError> {
        FunctionToolset::check(self)
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        let mut out = Vec::with_capacity(self.tools.len());
        for tool in &self.tools {
            let def = match &tool.prepare {
                None => tool.def.clone(),
                Some(prepare) => {
                    let mut c = ctx.clone();
                    c.tool_name = Some(tool.def.name.clone());
                    c.retry = ctx.retries.get(&tool.def.name).copied().unwrap_or(0);
                    match prepare(c, (*tool.def).clone()).await {
                        Some(mut d) => {
                            if tool.requires_approval && d.kind == crate::tool::ToolKind::Function {
                                d.kind = crate::tool::ToolKind::Unapproved;
                            }
                            Arc::new(d)
                        }
                        None => continue,
                    }
                }
            };
            out.push(self.offered(tool, def));
        }
        Ok(out)
    }

    /// Without `prepare` functions, the same list every step.
    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        if self.has_prepare {
            return Ok(self.get_tools(ctx).await?.into());
        }
        Ok(self.shared.get_or_init(|| self.tools.iter().map(|t| self.offered(t, t.def.clone())).collect()).clone())
    }
}
