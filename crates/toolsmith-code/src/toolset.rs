//! The run's toolset as code mode shows it: the chosen tools become functions inside one
//! `run_code` tool, the others stay as they are.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith::tool::{ApprovalRequired, Invocation, ModelRetry, ToolDefinition, ToolError, ToolKind, ToolOutput};
use toolsmith::toolset::{BoxedToolset, ToolSelector, Toolset, ToolsetTool};
use toolsmith::validation::Validator;
use toolsmith::{RunContext, UserError};

use crate::description;
use crate::limits::CodeModeLimits;
use crate::sandbox::{self, Function, Outcome, Session};

/// The name of the tool that runs code.
pub const RUN_CODE_TOOL_NAME: &str = "run_code";

/// What a run's code mode toolset is configured with.
pub(crate) struct Config<D> {
    pub(crate) tools: ToolSelector<D>,
    pub(crate) max_retries: u32,
    pub(crate) limits: CodeModeLimits,
    pub(crate) pause_for_approval: bool,
    pub(crate) paused: sandbox::PausedStore,
}

/// The toolset of one run: the wrapped toolset's tools, the chosen ones behind `run_code`, and
/// the run's REPL session.
pub(crate) struct CodeModeToolset<D> {
    pub(crate) inner: BoxedToolset<D>,
    pub(crate) config: Arc<Config<D>>,
    pub(crate) session: Arc<tokio::sync::Mutex<Session>>,
}

/// A tool name as a Python identifier: other characters as `_`, a `_` before a leading digit,
/// a `_` after a keyword.
pub(crate) fn sanitize(name: &str) -> String {
    const KEYWORDS: [&str; 35] = [
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
        "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
    ];
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    if s.is_empty() { "_".into() } else { s }
}

/// Whether a tool may go inside `run_code` at all: not the tool search, not a tool still hidden
/// in the deferred catalogue, not a local fallback of a native tool, not another code tool.
fn can_be_sandboxed(def: &ToolDefinition) -> bool {
    def.kind != ToolKind::Output
        && def.name != toolsmith::search::SEARCH_TOOL_NAME
        && !def.defer_loading
        && def.unless_native.is_none()
        && def.metadata.as_ref().is_none_or(|m| m.get("code_arg_name").is_none())
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for CodeModeToolset<D> {
    fn label(&self) -> String {
        "CodeMode".into()
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        let tools = self.inner.get_tools(ctx).await?;
        let mut native = Vec::new();
        let mut functions: HashMap<String, Function<D>> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        for tool in tools {
            if !can_be_sandboxed(&tool.def) || !self.config.tools.matches(ctx, &tool.def) {
                if tool.def.name == RUN_CODE_TOOL_NAME {
                    return Err(UserError::new(format!(
                        "Tool name '{RUN_CODE_TOOL_NAME}' is reserved for code mode. Rename your tool to avoid conflicts."
                    )));
                }
                native.push(tool);
                continue;
            }
            let name = sanitize(&tool.def.name);
            if name == RUN_CODE_TOOL_NAME {
                return Err(UserError::new(format!(
                    "Tool name '{}' (sanitized to '{name}') conflicts with the code mode meta-tool. Rename your tool to avoid conflicts.",
                    tool.def.name
                )));
            }
            if functions.contains_key(&name) {
                // The first tool of a Python name keeps it; the later one is not offered.
                continue;
            }
            let sequential = tool.def.sequential;
            order.push(name.clone());
            functions.insert(name, Function { tool, sequential });
        }
        let listed: Vec<(String, &ToolDefinition)> =
            order.iter().map(|name| (name.clone(), &*functions[name].tool.def)).collect();
        let description = description::description(&listed);
        native.push(self.run_code_tool(description, Arc::new(functions))?);
        Ok(native)
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.config.limits.check()?;
        self.inner.enter().await
    }

    async fn exit(&self) {
        self.inner.exit().await
    }
}

impl<D: Clone + Send + Sync + 'static> CodeModeToolset<D> {
    fn run_code_tool(
        &self,
        description: String,
        functions: Arc<HashMap<String, Function<D>>>,
    ) -> Result<ToolsetTool<D>, UserError> {
        let schema = description::parameters_schema();
        let validator = Validator::compile(&schema)
            .map_err(|e| UserError::new(format!("CodeMode: the run_code schema does not compile: {e}")))?;
        let mut def = ToolDefinition::new(RUN_CODE_TOOL_NAME, schema)
            .with_description(description)
            .with_metadata(json!({"code_arg_name": "code", "code_arg_language": "python"}));
        def.sequential = true;
        let session = self.session.clone();
        let config = self.config.clone();
        let handler = Arc::new(move |ctx: RunContext<D>, args: Value| -> Invocation {
            let session = session.clone();
            let config = config.clone();
            let functions = functions.clone();
            Invocation::Async(Box::pin(async move {
                let code = args.get("code").and_then(Value::as_str).unwrap_or_default().to_string();
                let restart = args.get("restart").and_then(Value::as_bool).unwrap_or(false);
                let mut session = session.lock().await;
                if restart {
                    *session = Session::default();
                }
                let snippet =
                    sandbox::Snippet { ctx: &ctx, functions, limits: &config.limits, pause: config.pause_for_approval };
                match sandbox::run(&mut session, code, &snippet, &config.paused).await {
                    Outcome::Return(ret) => Ok(ToolOutput::Return(ret)),
                    Outcome::Retry(message) => Err(ToolError::Retry(ModelRetry::new(message))),
                    Outcome::Approval(metadata) => {
                        Err(ToolError::ApprovalRequired(ApprovalRequired::with_metadata(metadata)))
                    }
                }
            }))
        });
        let mut tool = ToolsetTool::new(def, handler, Some(validator), Arc::from("CodeMode"));
        tool.max_retries = Some(self.config.max_retries);
        Ok(tool)
    }
}
