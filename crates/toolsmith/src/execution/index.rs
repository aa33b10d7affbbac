//! The tools of one step: what the model is shown, and the lookups by name.

use super::*;

/// What a tool of the step is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    /// Offered to the model.
    Visible,
    /// Behind the bridge (bridge mode): reached through `tool_call`.
    Bridged,
}

/// Lookups by name are a scan for a few calls over a few tools, a map built once otherwise:
/// the map costs one hash per tool, a scan one comparison per tool and call.
pub(super) const SCAN_LIMIT: usize = 4096;

/// The tools of one step: the ones shown to the model and the ones behind the bridge, with the
/// deferred catalogue whose tools are not discovered yet. Those stay in the catalogue, shared
/// between steps, so a step costs the tools it shows, however large the deferred catalogue.
pub(crate) struct ToolIndex<D> {
    /// The tools (a toolset's own list, shared, when the step shows exactly that list).
    pub(super) tools: Arc<[ToolsetTool<D>]>,
    /// What each tool is to the model; empty when every tool is visible (the common case: no
    /// list to allocate per step).
    pub(super) shown: Vec<Shown>,
    pub(super) by_name: OnceLock<FxHashMap<String, usize>>,
    /// The deferred catalogue, when there is one: its tools not in `tools` are hidden.
    pub(super) deferred: Option<layout::Hidden>,
    /// Whether `search_tools` is the search tool this index injected.
    pub(super) search: bool,
    /// Whether the bridge is open this step.
    pub(super) bridge: bool,
    /// Whether the capabilities' `prepare_output_tools` withdrew the output tool this step (a
    /// call to it is then a call to an unknown tool).
    pub(crate) output_withdrawn: bool,
    /// The provider searches the deferred tools (sent with `defer_loading`) this step: `Some`,
    /// with the strategy asked for by name if any.
    pub(crate) native_search: Option<Option<crate::model::NativeSearchStrategy>>,
}

impl<D> Default for ToolIndex<D> {
    fn default() -> Self {
        ToolIndex {
            tools: Arc::new([]),
            shown: Vec::new(),
            by_name: OnceLock::new(),
            deferred: None,
            search: false,
            bridge: false,
            output_withdrawn: false,
            native_search: None,
        }
    }
}

pub(super) fn duplicate_error(new_label: &str, old_label: &str, name: &str) -> AgentRunError {
    AgentRunError::User(UserError::new(format!(
        "{new_label} defines a tool whose name conflicts with existing tool from {old_label}: '{name}'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts."
    )))
}

impl<D: Clone + Send + Sync + 'static> ToolIndex<D> {
    /// The tools of every toolset (agent tools first), after each tool's `prepare` and the
    /// capabilities' `prepare_tools`, with tool search and bridge mode applied.
    ///
    /// `prepared` is set when the toolsets apply `prepare_tools` themselves (a capability's
    /// `wrapper_toolset` wraps the prepared toolset): the capability's error, if it failed.
    ///
    /// `reload` makes, when a toolset waits for the first search
    /// ([`connect_on_search`](crate::toolset::DeferredLoadingToolset::connect_on_search)), what
    /// the step's search tool lists them with: the step's catalogue made again.
    pub(crate) async fn collect(
        inner: &StepConfig<D>,
        toolsets: &[Arc<dyn DynToolset<D>>],
        caps: &Capabilities<D>,
        ctx: &RunContext<D>,
        prepared: Option<&PrepareFailure>,
        reload: Option<&(dyn Fn() -> Reload<D> + Send + Sync)>,
    ) -> Result<Self, AgentRunError> {
        let (mut lists, unlisted) = Self::list(inner, toolsets, ctx, prepared).await?;
        let lazy = match reload {
            _ if unlisted.is_empty() => None,
            Some(reload) if layout::searches_locally(inner, ctx) => Some(layout::Lazy { unlisted, reload: reload() }),
            // A provider's search or the bridge needs every tool now.
            _ => {
                unlisted.list_from_now();
                lists = Self::list(inner, toolsets, ctx, prepared).await?.0;
                None
            }
        };
        if prepared.is_none() && caps.has_prepare_tools()? {
            let tools = lists.iter().flat_map(|l| l.iter().cloned()).collect();
            lists = vec![Self::prepared(tools, caps, ctx).await?.into()];
        }
        let index = Self::with_tool_search(lists, inner, ctx, lazy)?;
        index.with_bridge(inner, ctx)
    }

    /// The toolsets' lists, and the toolsets that wait for the first search.
    async fn list(
        inner: &StepConfig<D>,
        toolsets: &[Arc<dyn DynToolset<D>>],
        ctx: &RunContext<D>,
        prepared: Option<&PrepareFailure>,
    ) -> Result<(layout::Lists<D>, Unlisted), AgentRunError> {
        let (listed, unlisted) = crate::toolset::listing(Self::collect_toolsets(inner, toolsets, ctx)).await;
        match (listed, prepared) {
            (Ok(lists), _) => Ok((lists, unlisted)),
            (Err(e), Some(failure)) => Err(failure.explain(e)),
            (Err(e), None) => Err(e),
        }
    }

    /// The step's deferred catalogue, if it has one.
    pub(crate) fn catalogue(&self) -> Option<Arc<search::Catalogue>> {
        self.deferred.as_ref().map(|shape| shape.catalogue())
    }

    /// The capabilities' `prepare_tools` over the toolsets' tools (the search and bridge tools,
    /// added after, wrap everything else and are not shown to it).
    pub(crate) async fn prepared(
        tools: Vec<ToolsetTool<D>>,
        caps: &Capabilities<D>,
        ctx: &RunContext<D>,
    ) -> Result<Vec<ToolsetTool<D>>, AgentRunError> {
        let defs = caps.prepare_tools(ctx, tools.iter().map(|t| (*t.def).clone()).collect()).await?;
        let mut slots: Vec<Option<ToolsetTool<D>>> = tools.into_iter().map(Some).collect();
        let positions: FxHashMap<String, usize> =
            slots.iter().enumerate().filter_map(|(i, t)| t.as_ref().map(|t| (t.def.name.clone(), i))).collect();
        let mut prepared = Vec::new();
        for def in defs {
            let Some(&i) = positions.get(&def.name) else {
                return Err(AgentRunError::User(UserError::new(format!(
                    "prepare_tools returned a tool named '{}' that no toolset defines: it may edit, drop or reorder definitions, not add or rename them",
                    def.name
                ))));
            };
            let Some(mut tool) = slots[i].take() else { continue };
            if let Some(problem) = def.too_deep() {
                return Err(AgentRunError::User(UserError::new(problem)));
            }
            tool.def = Arc::new(def);
            prepared.push(tool);
        }
        Ok(prepared)
    }

    /// Bridge mode: hides the deferrable tools behind `tool_search` / `tool_describe` /
    /// `tool_call` when the configuration says so.
    pub(super) fn with_bridge(mut self, inner: &StepConfig<D>, ctx: &RunContext<D>) -> Result<Self, AgentRunError> {
        let Some(config) = inner.bridge.clone() else { return Ok(self) };
        let deferrable: Vec<&ToolDefinition> = self
            .with_shown()
            .filter(|(t, s)| *s == Shown::Visible && config.is_deferrable(&t.def))
            .map(|(t, _)| &*t.def)
            .collect();
        let Some(catalogue) = inner.bridge_cache.open(&config, &deferrable, &ctx.model) else { return Ok(self) };
        for name in [bridge::TOOL_SEARCH, bridge::TOOL_DESCRIBE, bridge::TOOL_CALL] {
            if self.tools.iter().any(|t| t.def.name == name) {
                return Err(AgentRunError::User(UserError::new(format!(
                    "'{name}' is the name of a bridge-mode tool: rename your tool, or turn bridge mode off"
                ))));
            }
        }
        if self.shown.is_empty() {
            self.shown = vec![Shown::Visible; self.tools.len()];
        }
        for (tool, shown) in self.tools.iter().zip(self.shown.iter_mut()) {
            if *shown == Shown::Visible && config.is_deferrable(&tool.def) {
                *shown = Shown::Bridged;
            }
        }
        let mut tools = self.tools.to_vec();
        let config = Arc::new(config);
        for def in bridge::bridge_definitions(&config) {
            let validator = crate::validation::Validator::compile(&def.parameters_json_schema).ok();
            let (config, catalogue, name) = (config.clone(), catalogue.clone(), def.name.clone());
            let handler = crate::tool::Handler::Plain(Arc::new(move |args: std::borrow::Cow<'_, Value>| {
                bridge::bridge_invocation(&config, &catalogue, &name, &args)
            }));
            tools.push(ToolsetTool::with_handler(def, handler, validator, Arc::from("ToolSearchBridge")));
            self.shown.push(Shown::Visible);
        }
        self.tools = tools.into();
        self.bridge = true;
        Ok(self)
    }

    pub(super) async fn collect_toolsets(
        inner: &StepConfig<D>,
        toolsets: &[Arc<dyn DynToolset<D>>],
        ctx: &RunContext<D>,
    ) -> Result<layout::Lists<D>, AgentRunError> {
        let mut lists = Vec::with_capacity(toolsets.len());
        for toolset in toolsets {
            lists.push(toolset.get_tools_shared_boxed(ctx).await?);
        }
        inner.tool_layout.check_lists(&lists)?;
        Ok(lists)
    }
}

impl<D> ToolIndex<D> {
    /// The definitions shown to the model.
    /// Whether the step has no tools at all (shown or not).
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub(crate) fn definitions(&self) -> Vec<Arc<ToolDefinition>> {
        self.with_shown().filter(|(_, s)| *s == Shown::Visible).map(|(t, _)| t.def.clone()).collect()
    }

    /// Each tool with what it is to the model.
    fn with_shown(&self) -> impl Iterator<Item = (&ToolsetTool<D>, Shown)> {
        self.tools.iter().enumerate().map(|(i, t)| (t, self.shown.get(i).copied().unwrap_or(Shown::Visible)))
    }

    /// Where the tool with this name is, whatever it is to the model.
    pub(super) fn position(&self, name: &str) -> Option<usize> {
        if let Some(map) = self.by_name.get() {
            return map.get(name).copied();
        }
        self.tools.iter().position(|t| t.def.name == name)
    }

    /// Prepares lookups for `calls` calls: past a few comparisons, a map is built once.
    pub(super) fn prepare_lookups(&self, calls: usize) {
        if calls.saturating_mul(self.tools.len()) > SCAN_LIMIT {
            self.by_name
                .get_or_init(|| self.tools.iter().enumerate().rev().map(|(i, t)| (t.def.name.clone(), i)).collect());
        }
    }

    /// A visible or bridged tool (hidden deferred tools are not callable).
    pub(super) fn get(&self, name: &str) -> Option<&ToolsetTool<D>> {
        self.position(name).map(|i| &self.tools[i])
    }

    /// Rewrites `tool_call(tool_name, tool_args)` calls to a bridged or visible tool into calls
    /// of that tool (same id); returns the ids rewritten. Other `tool_call`s are left for its
    /// own validation and answer.
    pub(super) fn unwrap_bridge_calls(&self, calls: &mut [Call<'_>]) -> HashSet<String> {
        let mut rewritten = HashSet::new();
        if !self.bridge {
            return rewritten;
        }
        for call in calls.iter_mut() {
            if call.tool_name != bridge::TOOL_CALL {
                continue;
            }
            let args = match &call.args {
                Value::String(raw) => crate::validation::parse_json_args(raw).unwrap_or(Value::Null),
                other => other.clone(),
            };
            let Some(name) = args.get("tool_name").and_then(Value::as_str) else { continue };
            if name == bridge::TOOL_CALL || self.get(name).is_none() {
                continue;
            }
            let Some(tool_args) = args.get("tool_args").cloned() else { continue };
            let call = call.to_mut();
            call.tool_name = name.to_string();
            call.args = tool_args;
            rewritten.insert(call.tool_call_id.clone());
        }
        rewritten
    }

    pub(super) fn tool_kind(&self, name: &str) -> Option<&'static str> {
        (self.search && name == SEARCH_TOOL_NAME).then_some(search::SEARCH_TOOL_KIND)
    }

    /// The visible tools' names (output tool included), sorted, for the unknown-tool message.
    pub(super) fn available_names(&self, output_tool: Option<&str>) -> String {
        let mut names: Vec<&str> = self
            .with_shown()
            .filter(|(_, s)| *s == Shown::Visible)
            .map(|(t, _)| t.def.name.as_str())
            .chain(output_tool)
            .collect();
        names.sort_unstable();
        names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
    }
}
