//! One snippet in the Monty REPL: each interpreter step on the blocking pool, the functions it
//! calls dispatched through the run's path for tool calls, the limits enforced, the result or
//! the error the model sees.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use monty::{MontyRepl, ReplProgress, ReplStartError};
use monty_types::{
    ExcType, ExtFunctionResult, MontyException, MontyObject, NameLookupResult, PrintWriter, ResourceLimits,
    ResourceTracker,
};
use serde_json::{Map, Value, json};
use toolsmith::messages::{ToolCallPart, ToolReturnPart};
use toolsmith::tool::ToolOutput;
use toolsmith::toolset::ToolsetTool;
use toolsmith::{RunContext, ToolError};

use crate::convert::{to_exception, to_json, to_python};
use crate::limits::{CodeModeLimits, MemoryArm};

/// A function of the sandbox: the tool it calls and whether it is a plain `def` (a sequential
/// tool, resolved where it is called).
pub(crate) struct Function<D> {
    pub(crate) tool: ToolsetTool<D>,
    pub(crate) sequential: bool,
}

/// The run's REPL session and what it has used.
#[derive(Default)]
pub(crate) struct Session {
    pub(crate) repl: Option<MontyRepl>,
    /// Suspensions answered since the session started (bounded by `max_suspensions`).
    pub(crate) suspensions: usize,
    /// Whether a snippet has run in the session (a syntax error in the first one discards it).
    pub(crate) fed: bool,
}

/// What one snippet made: the calls it made and their returns (for the history's metadata).
#[derive(Default)]
pub(crate) struct Execution {
    parent: String,
    count: u32,
    budget_exhausted: bool,
    calls: Vec<ToolCallPart>,
    returns: HashMap<String, ToolReturnPart>,
    printed: String,
}

type Pending = BoxFuture<'static, (ToolCallPart, Result<ToolOutput, ToolError>)>;

/// The outcome of a snippet.
pub(crate) enum Outcome {
    /// It ran to its end: `run_code`'s return.
    Return(toolsmith::ToolReturn),
    /// It failed: the retry message the model sees.
    Retry(String),
    /// It waits for the approval of a call it made (the metadata of `run_code`'s deferral).
    Approval(Value),
}

/// What a snippet runs with.
pub(crate) struct Snippet<'a, D> {
    pub(crate) ctx: &'a RunContext<D>,
    pub(crate) functions: Arc<HashMap<String, Function<D>>>,
    pub(crate) limits: &'a CodeModeLimits,
    /// Whether a call that needs approval pauses the snippet (else it raises inside it).
    pub(crate) pause: bool,
}

/// A snippet paused at a call that needs approval, kept until its `run_code` call is approved.
pub(crate) struct Paused {
    state: ReplProgress,
    part: ToolCallPart,
    call_id: u32,
    sequential: bool,
    resolved: HashMap<u32, ExtFunctionResult>,
    ex: Execution,
    suspensions: usize,
}

/// The paused snippets, by their `run_code` call's id (shared by the runs of a `CodeMode`).
pub(crate) type PausedStore = Arc<std::sync::Mutex<HashMap<String, Paused>>>;

/// Runs `code` in the session (a fresh REPL when it has none), or, for an approved `run_code`
/// call whose snippet paused, resumes that snippet with the approved call.
pub(crate) async fn run<D: Clone + Send + Sync + 'static>(
    session: &mut Session,
    code: String,
    snippet: &Snippet<'_, D>,
    store: &PausedStore,
) -> Outcome {
    let ctx = snippet.ctx;
    let parent = ctx.tool_call_id.clone().unwrap_or_else(|| "pyd_ai_code_mode".into());
    let limits = snippet.limits;
    let _arm = MemoryArm::new(limits.max_memory);
    let max_output = limits.max_output_bytes;
    let saved =
        if ctx.tool_call_approved { store.lock().unwrap_or_else(|e| e.into_inner()).remove(&parent) } else { None };
    let (mut ex, mut printed, first, resolved) = match saved {
        Some(paused) => {
            let Paused { state, part, call_id, sequential, mut resolved, mut ex, suspensions } = paused;
            session.suspensions = suspensions;
            let mut approved = ctx.clone();
            approved.tool_call_approved = true;
            let (part, result) =
                dispatch(approved, snippet.functions.clone(), sanitized(&snippet.functions, &part), part).await;
            let result = ex.finish(part, result);
            let mut printed = std::mem::take(&mut ex.printed);
            let ReplProgress::FunctionCall(call) = state else {
                return Outcome::Retry("the paused snippet could not be resumed".into());
            };
            let first = if sequential {
                step(&mut printed, max_output, move |print| call.resume(result, print)).await
            } else {
                resolved.insert(call_id, result);
                step(&mut printed, max_output, move |print| call.resume_pending(print)).await
            };
            (ex, printed, first, resolved)
        }
        None => {
            let ex = Execution { parent: parent.clone(), ..Execution::default() };
            let repl =
                session.repl.take().unwrap_or_else(|| MontyRepl::new("main.py", tracker(limits), Default::default()));
            let mut printed = String::new();
            let first = step(&mut printed, max_output, move |print| repl.feed_start(&code, Vec::new(), print)).await;
            (ex, printed, first, HashMap::new())
        }
    };
    let result = drive(session, first, &mut printed, snippet, resolved, &mut ex).await;
    ex.printed = printed;
    match result {
        Ok((repl, value)) => {
            session.repl = Some(repl);
            session.fed = true;
            Outcome::Return(ex.tool_return(to_json(&value)))
        }
        Err(Failure::Paused(paused)) => {
            let Paused { state, part, call_id, sequential, resolved, .. } = *paused;
            let metadata = json!({"code_mode": {"tool_name": part.tool_name, "args": part.args, "tool_call_id": part.tool_call_id}});
            session.fed = true;
            let suspensions = session.suspensions;
            store
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(parent, Paused { state, part, call_id, sequential, resolved, ex, suspensions });
            Outcome::Approval(metadata)
        }
        Err(Failure::Python { error, repl }) => Outcome::Retry(ex.retry_message(session, error, repl)),
    }
}

/// The sandbox name of the function that calls `part`'s tool.
fn sanitized<D>(functions: &HashMap<String, Function<D>>, part: &ToolCallPart) -> String {
    functions.iter().find(|(_, f)| f.tool.def.name == part.tool_name).map(|(n, _)| n.clone()).unwrap_or_default()
}

/// Whether a call to this tool waits for a person's approval.
fn needs_approval<D>(tool: &ToolsetTool<D>) -> bool {
    tool.requires_approval || tool.def.kind == toolsmith::tool::ToolKind::Unapproved
}

fn tracker(limits: &CodeModeLimits) -> ResourceTracker {
    ResourceTracker::new(ResourceLimits {
        max_duration: limits.max_duration,
        max_memory: limits.max_memory,
        max_recursion_depth: limits.max_recursion_depth,
        max_suspensions: limits.max_suspensions,
        ..ResourceLimits::default()
    })
}

/// One interpreter step on the blocking pool, its printed output collected into `printed`.
async fn step(
    printed: &mut String,
    max_output: usize,
    f: impl FnOnce(PrintWriter<'_>) -> Result<ReplProgress, Box<ReplStartError>> + Send + 'static,
) -> Result<ReplProgress, Box<ReplStartError>> {
    let mut buf = std::mem::take(printed);
    let joined = tokio::task::spawn_blocking(move || {
        let limit = max_output.saturating_sub(buf.len());
        let mut out = String::new();
        let result = f(PrintWriter::CollectString(&mut out, Some(limit)));
        buf.push_str(&out);
        (buf, result)
    })
    .await;
    match joined {
        Ok((buf, result)) => {
            *printed = buf;
            result
        }
        Err(e) => {
            // The interpreter panicked: the session is gone with it.
            let message = if e.is_panic() { "the interpreter panicked" } else { "the interpreter was cancelled" };
            Err(Box::new(ReplStartError {
                repl: MontyRepl::new("main.py", ResourceTracker::default(), Default::default()),
                error: MontyException::new(ExcType::RuntimeError, Some(message.into())),
            }))
        }
    }
}

/// Why a snippet stopped short.
pub(crate) enum Failure {
    /// A Python exception (syntax or runtime), with the session to keep when it survives.
    Python { error: MontyException, repl: Option<MontyRepl> },
    /// A call needs approval: the snippet waits at it (its `ex`, `suspensions` filled in later).
    Paused(Box<Paused>),
}

async fn drive<D: Clone + Send + Sync + 'static>(
    session: &mut Session,
    mut progress: Result<ReplProgress, Box<ReplStartError>>,
    printed: &mut String,
    snippet: &Snippet<'_, D>,
    mut resolved: HashMap<u32, ExtFunctionResult>,
    ex: &mut Execution,
) -> Result<(MontyRepl, MontyObject), Failure> {
    let (functions, limits) = (&snippet.functions, snippet.limits);
    // The approval of an approved `run_code` call is not its calls': they ask for their own.
    let mut ctx = snippet.ctx.clone();
    ctx.tool_call_approved = false;
    let mut pending: HashMap<u32, Pending> = HashMap::new();
    let max_output = limits.max_output_bytes;
    loop {
        let state = match progress {
            Ok(state) => state,
            Err(e) => {
                let ReplStartError { repl, error } = *e;
                return Err(Failure::Python { error, repl: Some(repl) });
            }
        };
        if !matches!(state, ReplProgress::Complete { .. }) {
            session.suspensions += 1;
            if session.suspensions > limits.max_suspensions {
                let exc = MontyException::new(
                    ExcType::RuntimeError,
                    Some(format!("suspension limit {} exceeded", limits.max_suspensions)),
                );
                progress = step(printed, max_output, move |print| abort(state, exc, print)).await;
                continue;
            }
        }
        progress = match state {
            ReplProgress::Complete { repl, value } => return Ok((repl, value)),
            ReplProgress::NameLookup(lookup) => {
                let answer = match functions.get(&lookup.name) {
                    Some(_) => {
                        NameLookupResult::Value(MontyObject::Function { name: lookup.name.clone(), docstring: None })
                    }
                    None => NameLookupResult::Undefined,
                };
                step(printed, max_output, move |print| lookup.resume(answer, print)).await
            }
            ReplProgress::OsCall(call) => {
                let exc = MontyException::new(
                    ExcType::RuntimeError,
                    Some(format!(
                        "{} is not available: no filesystem mount or OS handler is configured",
                        call.function_call
                    )),
                );
                step(printed, max_output, move |print| call.resume(ExtFunctionResult::Error(exc), print)).await
            }
            ReplProgress::FunctionCall(call) => {
                let name = call.function_name.clone();
                let refused = match functions.get(&name) {
                    None => Some((ExcType::NameError, format!("Unknown function: {name}"))),
                    Some(_) if !call.args.is_empty() => Some((
                        ExcType::TypeError,
                        format!("{name}() does not accept positional arguments; use keyword arguments"),
                    )),
                    Some(_) if ex.count >= limits.max_tool_calls => {
                        ex.budget_exhausted = true;
                        Some((ExcType::RuntimeError, budget_message(limits.max_tool_calls)))
                    }
                    Some(_) => None,
                };
                if let Some((kind, message)) = refused {
                    let exc = ExtFunctionResult::Error(MontyException::new(kind, Some(message)));
                    step(printed, max_output, move |print| call.resume(exc, print)).await
                } else {
                    let sequential = functions.get(&name).is_some_and(|f| f.sequential);
                    let call_id = call.call_id;
                    let part = ex.start(&functions[&name].tool.def.name, &call.kwargs);
                    if snippet.pause && needs_approval(&functions[&name].tool) {
                        // The calls started before it settle first; the snippet then waits.
                        for (id, f) in pending.drain() {
                            let (part, result) = f.await;
                            resolved.insert(id, ex.finish(part, result));
                        }
                        return Err(Failure::Paused(Box::new(Paused {
                            state: ReplProgress::FunctionCall(call),
                            part,
                            call_id,
                            sequential,
                            resolved,
                            ex: Execution::default(),
                            suspensions: 0,
                        })));
                    }
                    let fut = dispatch(ctx.clone(), functions.clone(), name, part);
                    if sequential {
                        // A plain `def`: the calls started before it settle first.
                        let earlier: Vec<(u32, Pending)> = pending.drain().collect();
                        let settled =
                            futures::future::join_all(earlier.into_iter().map(|(id, f)| async move { (id, f.await) }))
                                .await;
                        for (id, (part, result)) in settled {
                            resolved.insert(id, ex.finish(part, result));
                        }
                        let (part, result) = fut.await;
                        let result = ex.finish(part, result);
                        step(printed, max_output, move |print| call.resume(result, print)).await
                    } else {
                        pending.insert(call_id, fut);
                        step(printed, max_output, move |print| call.resume_pending(print)).await
                    }
                }
            }
            ReplProgress::ResolveFutures(state) => {
                let ids: Vec<u32> = state.pending_call_ids().to_vec();
                let mut results: Vec<(u32, ExtFunctionResult)> = Vec::new();
                let mut waiting = Vec::new();
                for id in ids {
                    if let Some(r) = resolved.remove(&id) {
                        results.push((id, r));
                    } else if let Some(f) = pending.remove(&id) {
                        waiting.push(async move { (id, f.await) });
                    }
                }
                for (id, (part, result)) in futures::future::join_all(waiting).await {
                    results.push((id, ex.finish(part, result)));
                }
                step(printed, max_output, move |print| state.resume(results, print)).await
            }
        };
    }
}

/// A call from the snippet, through the run's path for tool calls.
fn dispatch<D: Clone + Send + Sync + 'static>(
    ctx: RunContext<D>,
    functions: Arc<HashMap<String, Function<D>>>,
    name: String,
    part: ToolCallPart,
) -> Pending {
    Box::pin(async move {
        let result = match (toolsmith::execution::NestedCalls::of(&ctx), functions.get(&name)) {
            (Some(nested), Some(function)) => nested.call(&ctx, &function.tool, &part).await,
            _ => Err(ToolError::Failed {
                kind: "UserError".into(),
                message: "code mode calls tools only inside an agent run".into(),
                source: None,
            }),
        };
        (part, result)
    })
}

/// Ends a suspended snippet with an exception it cannot catch.
fn abort(
    state: ReplProgress,
    exc: MontyException,
    print: PrintWriter<'_>,
) -> Result<ReplProgress, Box<ReplStartError>> {
    match state {
        ReplProgress::FunctionCall(c) => c.abort(exc, print),
        ReplProgress::OsCall(c) => c.abort(exc, print),
        ReplProgress::NameLookup(c) => c.abort(exc, print),
        ReplProgress::ResolveFutures(c) => c.abort(exc, print),
        complete @ ReplProgress::Complete { .. } => Ok(complete),
    }
}

fn budget_message(max: u32) -> String {
    format!(
        "Code mode allows {max} nested tool calls per `run_code` call and this snippet asked for more. Call fewer tools, for example by filtering the inputs first, or split the work across several `run_code` calls."
    )
}

/// The harness's wording of each limit, as Monty reports it.
const LIMIT_MARKERS: [&str; 3] = ["time limit exceeded", "memory limit exceeded", "suspension limit "];

impl Execution {
    /// Records a call the snippet makes: its id under the `run_code` call's and its arguments.
    fn start(&mut self, tool: &str, kwargs: &[(MontyObject, MontyObject)]) -> ToolCallPart {
        self.count += 1;
        let mut args = Map::new();
        for (k, v) in kwargs {
            let key = match k {
                MontyObject::String(s) => s.clone(),
                other => other.py_repr(),
            };
            args.insert(key, to_json(v));
        }
        let part = ToolCallPart::new(tool, Value::Object(args), format!("{}__{}", self.parent, self.count));
        self.calls.push(part.clone());
        part
    }

    /// Records how a call settled and gives the snippet its value or its exception.
    fn finish(&mut self, part: ToolCallPart, result: Result<ToolOutput, ToolError>) -> ExtFunctionResult {
        match result {
            Ok(output) => {
                let (content, metadata) = match output {
                    ToolOutput::Value(v) => (v, None),
                    ToolOutput::Return(r) => (r.return_value, r.metadata),
                    _ => (Value::Null, None),
                };
                let mut ret = ToolReturnPart::success(&part.tool_name, content.clone(), &part.tool_call_id);
                ret.metadata = metadata.map(Box::new);
                self.returns.insert(part.tool_call_id.clone(), ret);
                ExtFunctionResult::Return(to_python(&content))
            }
            Err(e) => ExtFunctionResult::Error(to_exception(&part.tool_name, &e)),
        }
    }

    fn metadata(&self) -> Value {
        let mut calls = Map::new();
        let mut returns = Map::new();
        for call in &self.calls {
            calls.insert(call.tool_call_id.clone(), with_kind(serde_json::to_value(call), "tool-call"));
            if let Some(ret) = self.returns.get(&call.tool_call_id) {
                returns.insert(call.tool_call_id.clone(), with_kind(serde_json::to_value(ret), "tool-return"));
            }
        }
        json!({"code_mode": true, "tool_calls": calls, "tool_returns": returns})
    }

    /// The `run_code` return: the last expression's value, the printed text, or both.
    fn tool_return(&self, result: Value) -> toolsmith::ToolReturn {
        let value = match (self.printed.is_empty(), result.is_null()) {
            (true, true) => json!({}),
            (true, false) => result,
            (false, true) => json!({"output": self.printed}),
            (false, false) => json!({"output": self.printed, "result": result}),
        };
        toolsmith::ToolReturn::new(value).with_metadata(self.metadata())
    }

    /// The printed text before an error, then the error.
    fn prepend(&self, message: &str) -> String {
        let printed = self.printed.trim_end_matches('\n');
        if printed.is_empty() {
            message.to_string()
        } else {
            format!("[stdout before error]\n{printed}\n[/stdout before error]\n{message}")
        }
    }

    /// The retry the model sees for a snippet that failed, with the session kept or reset.
    fn retry_message(&self, session: &mut Session, error: MontyException, repl: Option<MontyRepl>) -> String {
        let display = error.to_string();
        if error.exc_type() == ExcType::SyntaxError {
            // No code ran: a session that had run nothing starts afresh, as the harness's does.
            session.repl = if session.fed { repl } else { None };
            return format!("Syntax error in code:\n{}", self.prepend(&display));
        }
        session.fed = true;
        let text = error.message().unwrap_or("");
        let duration_spent = error.traceback().is_empty() && text.contains(LIMIT_MARKERS[0]);
        // Monty 1.x, the harness's, names the limit per feed; 0.0.23 reports the same stop so.
        let display = if duration_spent {
            display.replacen("TimeoutError: time limit exceeded", "TimeoutError: feed time limit exceeded", 1)
        } else {
            display
        };
        let mut message = format!("Runtime error:\n{}", self.prepend(&display));
        let limit_hit = LIMIT_MARKERS.iter().any(|m| text.contains(m));
        if (self.budget_exhausted || limit_hit) && !self.calls.is_empty() {
            message.push_str("\n\n");
            message.push_str(&self.started_calls());
        }
        if duration_spent {
            session.repl = None;
            message.push_str("\n\nThe code ran longer than `max_duration_secs` and was stopped, so the session was reset. Re-run any imports, recreate any state you need, and make the code do less work per call.");
        } else {
            session.repl = repl;
        }
        if error.exc_type() == ExcType::RuntimeError && is_suspension_limit(text) {
            message.push_str("\n\nIf this reports the sandbox session's `max_suspensions` limit, its cumulative host-interaction budget is exhausted. Further tool calls, OS callbacks, name lookups and future resolutions need a fresh session; revising the snippet does not replenish this budget. Pure Python using existing state may still work. Pass `restart: true` to start a fresh session; that discards all REPL variables, imports and definitions. Check the calls already started before continuing, and do not replay completed side effects.");
        }
        message
    }

    /// How many nested calls started, each with what it returned (the harness's summary).
    fn started_calls(&self) -> String {
        let mut lines = Vec::new();
        let mut used = 0;
        for call in &self.calls {
            let outcome = match self.returns.get(&call.tool_call_id) {
                None => "did not finish, so it may have applied a partial change".to_string(),
                Some(ret) => format!("returned {}", preview(&ret.content, false)),
            };
            let line = format!("- {}({}) {outcome}", call.tool_name, preview(&call.args, false));
            if used + line.len() > 2000 {
                lines.push(format!("- ... and {} more not shown", self.calls.len() - lines.len()));
                break;
            }
            used += line.len();
            lines.push(line);
        }
        let n = self.calls.len();
        format!(
            "{n} nested tool calls started before execution stopped:\n{}\nAccount for all {n} before retrying; repeating a call repeats whatever it already did.",
            lines.join("\n")
        )
    }
}

/// A part as the history writes it, with its `part_kind`.
fn with_kind(part: Result<Value, serde_json::Error>, kind: &str) -> Value {
    let mut v = part.unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        map.insert("part_kind".into(), Value::String(kind.into()));
    }
    v
}

fn is_suspension_limit(text: &str) -> bool {
    text.strip_prefix("suspension limit ")
        .and_then(|rest| rest.strip_suffix(" exceeded"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A value cut short for an error message, as the harness previews it.
fn preview(value: &Value, nested: bool) -> String {
    const CHARS: usize = 120;
    const ITEMS: usize = 5;
    let elided = |count: usize, shown: usize, unit: &str| {
        if count > shown { format!(" ... ({count} {unit} total)") } else { String::new() }
    };
    match value {
        Value::String(s) => {
            let cut: String = s.chars().take(CHARS).collect();
            toolsmith::pyjson::repr(&Value::String(cut)) + &elided(s.chars().count(), CHARS, "chars")
        }
        Value::Array(items) if nested => format!("[{} items]", items.len()),
        Value::Array(items) => {
            let shown: Vec<String> = items.iter().take(ITEMS).map(|i| preview(i, true)).collect();
            format!("[{}]", shown.join(", ")) + &elided(items.len(), ITEMS, "items")
        }
        Value::Object(map) if nested => format!("{{{} items}}", map.len()),
        Value::Object(map) => {
            let shown: Vec<String> = map
                .iter()
                .take(ITEMS)
                .map(|(k, v)| format!("{}: {}", preview(&Value::String(k.clone()), true), preview(v, true)))
                .collect();
            format!("{{{}}}", shown.join(", ")) + &elided(map.len(), ITEMS, "items")
        }
        other => toolsmith::pyjson::repr(other),
    }
}
