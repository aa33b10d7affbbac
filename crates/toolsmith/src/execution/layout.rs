//! Where a step's tools come from, worked out once per catalogue change.
//!
//! Each toolset hands the step a shared list of its tools. When every list is the one of the
//! previous step (the same `Arc`, as [`FunctionToolset`](crate::toolset::FunctionToolset)
//! returns without `prepare` functions), the step reuses what it knew: the lists were checked
//! for duplicate names, the ordinary and deferred tools were told apart and the deferred
//! catalogue was indexed. A step then costs the tools it shows, not the deferred catalogue.
//! When a list is new but holds the same tools (same names, same deferred definitions), the
//! catalogue and its search indexes are kept, at the price of one comparison per tool. When the
//! tools did change, the new catalogue's BM25 index is the old one's, changed by the difference
//! (see `search::lineage`).

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use super::{ToolIndex, duplicate_error};
use crate::context::RunContext;
use crate::error::{AgentRunError, UserError};
use crate::execution::StepConfig;
use crate::model::{NativeSearchStrategy, ToolSearchSupport};
use crate::search::{self, Catalogue, SEARCH_TOOL_NAME, SearchStrategy};
use crate::tool::{ToolDefinition, ToolKind};
use crate::toolset::ToolsetTool;
use crate::validation::Validator;

/// The tools of every toolset for one step, one shared list per toolset.
pub(crate) type Lists<D> = Vec<Arc<[ToolsetTool<D>]>>;

/// The step's deferred catalogue made again, with the toolsets that waited for the first search
/// listed (`None`: still no deferred tool).
pub(crate) type Reload<D> = Arc<
    dyn Fn(RunContext<D>) -> futures::future::BoxFuture<'static, Result<Option<Arc<Catalogue>>, AgentRunError>>
        + Send
        + Sync,
>;

/// Toolsets that wait for the step's first search, and how to list them then.
pub(super) struct Lazy<D> {
    pub(super) unlisted: crate::toolset::Unlisted,
    pub(super) reload: Reload<D>,
}

/// Whether the step's search is the library's own `search_tools` (not a provider's, nor bridge
/// mode's).
pub(super) fn searches_locally<D>(inner: &StepConfig<D>, ctx: &RunContext<D>) -> bool {
    let strategy = inner.tool_search.as_ref().map(|c| &c.strategy);
    let native = match strategy {
        None | Some(SearchStrategy::PydanticAi) => ctx.model.tool_search != ToolSearchSupport::None,
        Some(SearchStrategy::NativeBm25 | SearchStrategy::NativeRegex) => true,
        Some(_) => false,
    };
    !native && inner.bridge.is_none()
}

/// Whether two steps got exactly the same lists.
fn same_lists<D>(a: &[Arc<[ToolsetTool<D>]>], b: &[Arc<[ToolsetTool<D>]>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
}

/// The position of a tool: its list, then its place in the list.
type Position = (u32, u32);

/// What a catalogue of tools looks like, independent of the lists' identity.
pub(super) struct Shape {
    /// The ordinary tools, in order.
    ordinary: Vec<Position>,
    /// The deferred tools, in catalogue order.
    deferred: Vec<Position>,
    /// A deferred tool's name → its place in the catalogue.
    deferred_names: FxHashMap<String, u32>,
    /// Each deferred tool's kind and own retry budget, in catalogue order.
    deferred_tools: Vec<(ToolKind, Option<u32>)>,
    /// The deferred tools' definitions and search indexes.
    catalogue: Arc<Catalogue>,
    /// The search tool's definition and validator.
    search_def: Arc<ToolDefinition>,
    search_validator: Option<Validator>,
}

/// The lists of a step and their shape.
struct Layout<D> {
    lists: Lists<D>,
    shape: Arc<Shape>,
}

/// The layout of the last step of an agent with deferred tools, and the last lists found free
/// of duplicate names.
pub(crate) struct LayoutCache<D> {
    layout: Mutex<Option<Layout<D>>>,
    checked: Mutex<Lists<D>>,
}

impl<D> Default for LayoutCache<D> {
    fn default() -> Self {
        LayoutCache { layout: Mutex::new(None), checked: Mutex::new(Vec::new()) }
    }
}

impl<D> std::fmt::Debug for LayoutCache<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayoutCache").finish_non_exhaustive()
    }
}

fn tool<D>(lists: &[Arc<[ToolsetTool<D>]>], (list, i): Position) -> &ToolsetTool<D> {
    &lists[list as usize][i as usize]
}

impl<D> LayoutCache<D> {
    /// Checks that tool names are unique across toolsets (within one they are already) and that
    /// no definition nests too deeply ([`ToolDefinition::too_deep`]). Lists checked at the
    /// previous step are not checked again.
    pub(crate) fn check_lists(&self, lists: &Lists<D>) -> Result<(), AgentRunError> {
        let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
        if same_lists(&checked, lists) {
            return Ok(());
        }
        if let Some(problem) = lists.iter().flat_map(|l| l.iter()).find_map(|t| t.def.too_deep()) {
            return Err(AgentRunError::User(UserError::new(problem)));
        }
        if lists.iter().filter(|l| !l.is_empty()).count() > 1 {
            let mut seen: FxHashMap<&str, &ToolsetTool<D>> = FxHashMap::default();
            for tool in lists.iter().flat_map(|l| l.iter()) {
                if let Some(first) = seen.insert(&tool.def.name, tool) {
                    return Err(duplicate_error(&tool.toolset_label, &first.toolset_label, &tool.def.name));
                }
            }
        }
        *checked = lists.clone();
        Ok(())
    }

    /// The shape of these lists: the previous step's when the lists are the same, or hold the
    /// same tools; `None` when no tool is deferred.
    /// With `waiting`, toolsets wait for the first search: there is a shape (and a search tool)
    /// even when no listed tool is deferred.
    fn shape(
        &self,
        inner: &StepConfig<D>,
        lists: &Lists<D>,
        waiting: bool,
    ) -> Result<Option<Arc<Shape>>, AgentRunError> {
        let mut slot = self.layout.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(layout) = slot.as_ref()
            && same_lists(&layout.lists, lists)
        {
            return Ok(Some(layout.shape.clone()));
        }
        if !waiting && !lists.iter().flat_map(|l| l.iter()).any(|t| t.def.defer_loading) {
            return Ok(None);
        }
        let shape = match slot.as_ref() {
            Some(layout) if same_shape(&layout.shape, &layout.lists, lists) => layout.shape.clone(),
            _ => Arc::new(build_shape(inner, lists, slot.as_ref().map(|l| &*l.shape.catalogue))?),
        };
        *slot = Some(Layout { lists: lists.clone(), shape: shape.clone() });
        Ok(Some(shape))
    }
}

/// Whether `new` holds the same tools as `old`, at the same places: the same names and deferral
/// everywhere, and the same definitions for the deferred tools (what search looks at).
fn same_shape<D>(shape: &Shape, old: &Lists<D>, new: &Lists<D>) -> bool {
    if old.len() != new.len() || old.iter().zip(new).any(|(a, b)| a.len() != b.len()) {
        return false;
    }
    let same = |&p: &Position| {
        let (a, b) = (&tool(old, p).def, &tool(new, p).def);
        a.name == b.name && a.defer_loading == b.defer_loading
    };
    shape.ordinary.iter().all(same)
        && shape.deferred.iter().all(|p| {
            let (a, b) = (&tool(old, *p).def, &tool(new, *p).def);
            Arc::ptr_eq(a, b)
                || (a.name == b.name
                    && a.defer_loading == b.defer_loading
                    && a.description == b.description
                    && (Arc::ptr_eq(&a.parameters_json_schema, &b.parameters_json_schema)
                        || a.parameters_json_schema == b.parameters_json_schema))
        })
}

/// The shape of new lists; `previous` is the catalogue of the lists they replace, whose search
/// index is carried over.
fn build_shape<D>(
    inner: &StepConfig<D>,
    lists: &Lists<D>,
    previous: Option<&Catalogue>,
) -> Result<Shape, AgentRunError> {
    let mut ordinary = Vec::new();
    let mut deferred = Vec::new();
    for (l, list) in lists.iter().enumerate() {
        for (i, t) in list.iter().enumerate() {
            if t.def.name == SEARCH_TOOL_NAME {
                return Err(AgentRunError::User(UserError::new(format!(
                    "'{SEARCH_TOOL_NAME}' is the name of the tool search tool: rename your tool, since deferred tools are registered"
                ))));
            }
            let p = (l as u32, i as u32);
            if t.def.defer_loading { deferred.push(p) } else { ordinary.push(p) }
        }
    }
    let defs: Vec<&ToolDefinition> = deferred.iter().map(|&p| &*tool(lists, p).def).collect();
    let deferred_names = defs.iter().enumerate().map(|(i, d)| (d.name.clone(), i as u32)).collect();
    let deferred_tools = deferred
        .iter()
        .map(|&p| {
            let t = tool(lists, p);
            (t.def.kind, t.max_retries)
        })
        .collect();
    let search_def = inner.tool_search.clone().unwrap_or_default().definition();
    let search_validator = Validator::compile(&search_def.parameters_json_schema).ok();
    Ok(Shape {
        catalogue: Arc::new(Catalogue::build_after(&defs, previous)),
        ordinary,
        deferred,
        deferred_names,
        deferred_tools,
        search_def: Arc::new(search_def),
        search_validator,
    })
}

impl<D: Clone + Send + Sync + 'static> ToolIndex<D> {
    /// The step's tools. With deferred tools: the ordinary tools, then the discovered deferred
    /// ones in catalogue order, then `search_tools`; the others stay hidden.
    pub(super) fn with_tool_search(
        lists: Lists<D>,
        inner: &StepConfig<D>,
        ctx: &RunContext<D>,
        lazy: Option<Lazy<D>>,
    ) -> Result<Self, AgentRunError> {
        let Some(shape) = inner.tool_layout.shape(inner, &lists, lazy.is_some())? else {
            return Ok(ToolIndex { tools: flatten(&lists), ..ToolIndex::default() });
        };
        let config = inner.tool_search.clone().unwrap_or_default();
        // The provider's own search, where the model has one (or where it was asked for by name:
        // the agent checked the model when it was built): every tool is sent, the deferred ones
        // with `defer_loading`, and the provider loads them as the model searches.
        let native = match config.strategy {
            SearchStrategy::PydanticAi if ctx.model.tool_search != ToolSearchSupport::None => Some(None),
            SearchStrategy::NativeBm25 => Some(Some(NativeSearchStrategy::Bm25)),
            SearchStrategy::NativeRegex => Some(Some(NativeSearchStrategy::Regex)),
            _ => None,
        };
        if native.is_some() {
            return Ok(ToolIndex { tools: flatten(&lists), native_search: native, ..ToolIndex::default() });
        }
        let discovered = Arc::new(search::discovered_in(&ctx.messages));
        let mut found: Vec<u32> = discovered.iter().filter_map(|n| shape.deferred_names.get(n).copied()).collect();
        found.sort_unstable();
        let mut tools: Vec<ToolsetTool<D>> = Vec::with_capacity(shape.ordinary.len() + found.len() + 1);
        tools.extend(shape.ordinary.iter().map(|&p| tool(&lists, p).clone()));
        tools.extend(found.iter().map(|&i| tool(&lists, shape.deferred[i as usize]).clone()));
        let catalogue = shape.catalogue.clone();
        let handler = match lazy {
            None => crate::tool::Handler::contextual(move |ctx, args: std::borrow::Cow<'_, serde_json::Value>| {
                search::search_invocation(&config, &catalogue, &discovered, ctx, &args)
            }),
            Some(lazy) => lazy_search(config, discovered, lazy),
        };
        tools.push(ToolsetTool {
            def: shape.search_def.clone(),
            max_retries: None,
            requires_approval: false,
            toolset_timeout: None,
            toolset_label: Arc::from("ToolSearch"),
            validator: shape.search_validator.clone(),
            args_validator: None,
            handler,
        });
        Ok(ToolIndex { tools: tools.into(), deferred: Some(shape), search: true, ..ToolIndex::default() })
    }
}

/// The search tool of a step with toolsets that wait for the first search: they list their
/// tools from now on, and the search runs over the catalogue made again with them.
fn lazy_search<D: Clone + Send + Sync + 'static>(
    config: search::ToolSearch,
    discovered: Arc<std::collections::HashSet<String>>,
    lazy: Lazy<D>,
) -> crate::tool::Handler<D> {
    use crate::tool::{Invocation, ToolError};
    crate::tool::Handler::contextual(move |ctx, args: std::borrow::Cow<'_, serde_json::Value>| {
        let (config, discovered, args) = (config.clone(), discovered.clone(), args.into_owned());
        lazy.unlisted.list_from_now();
        let reload = lazy.reload.clone();
        Invocation::Async(Box::pin(async move {
            let catalogue = match reload(ctx.clone()).await {
                Ok(catalogue) => catalogue.unwrap_or_else(|| Arc::new(Catalogue::build_after(&[], None))),
                Err(e) => return Err(ToolError::caused_by(e)),
            };
            match search::search_invocation(&config, &catalogue, &discovered, ctx, &args) {
                Invocation::Ready(result) => result,
                Invocation::Async(search) => search.await,
                Invocation::Blocking(search) => search(),
            }
        }))
    })
}

impl Shape {
    pub(super) fn catalogue(&self) -> Arc<Catalogue> {
        self.catalogue.clone()
    }
}

/// The tools of `lists` in order: a single list is shared as it is, not copied.
fn flatten<D>(lists: &Lists<D>) -> Arc<[ToolsetTool<D>]> {
    match lists.as_slice() {
        [only] => only.clone(),
        _ => lists.iter().flat_map(|l| l.iter().cloned()).collect(),
    }
}

impl<D> ToolIndex<D> {
    /// A deferred tool the model has not discovered yet: its kind and its own retry budget.
    /// The tools offered this step (not those hidden behind tool search) whose calls always
    /// defer: they require approval or run outside the agent.
    pub(crate) fn deferring_tools(&self) -> impl Iterator<Item = &str> {
        self.tools
            .iter()
            .filter(|t| matches!(t.def.kind, ToolKind::Unapproved | ToolKind::External))
            .map(|t| t.def.name.as_str())
    }

    pub(super) fn hidden(&self, name: &str) -> Option<(ToolKind, Option<u32>)> {
        let shape = self.deferred.as_ref()?;
        let &at = shape.deferred_names.get(name)?;
        if self.position(name).is_some() {
            return None;
        }
        shape.deferred_tools.get(at as usize).copied()
    }

    /// The hidden tools, as the model's request parameters tell them.
    pub(crate) fn withheld(&self) -> crate::model::WithheldTools {
        let Some(shape) = self.deferred.clone() else { return Default::default() };
        let shown: rustc_hash::FxHashSet<String> = self
            .tools
            .iter()
            .filter(|t| shape.deferred_names.contains_key(&t.def.name))
            .map(|t| t.def.name.clone())
            .collect();
        let any = shape.deferred_names.len() > shown.len();
        let shown = Arc::new(shown);
        let (listed, listed_shown) = (shape.clone(), shown.clone());
        crate::model::WithheldTools::new(any, move |name| {
            shape.deferred_names.contains_key(name) && !shown.contains(name)
        })
        .with_names(move || listed.deferred_names.keys().filter(|n| !listed_shown.contains(*n)).cloned().collect())
    }
}

/// The catalogue a step hides.
pub(super) type Hidden = Arc<Shape>;
