//! The `run_code` tool's description and arguments schema, in pydantic-ai-harness's words.

use serde_json::{Value, json};

use crate::signature::render_catalogue;
use toolsmith::ToolDefinition;

const HEAD: &str = "Write and run Python code in a sandboxed environment.

The sandbox uses Monty, a subset of Python. Key restrictions:
- **No third-party libraries**: only the standard library modules listed below can be used
- **Importable standard library modules**: `sys`, `typing`, `asyncio`, `math`, `json`, `re`, `unicodedata`, `datetime`, `time`, `random`, `os`, `pathlib`, `collections`, `itertools`, `functools`, `dataclasses`, `copy`, `base64`, `binascii`. These must be imported before use, just like in regular Python.";

const NO_OS: &str = "- **No filesystem, environment, or clock**: `pathlib.Path` I/O, `os.getenv`/`os.environ`, `datetime.datetime.now()`, `datetime.date.today()`, and `time.time()` are unavailable here (no filesystem mount or OS handler is configured). `os` and `pathlib` import successfully, but their I/O operations are not supported in this configuration. `time.sleep` and `asyncio.sleep` really wait.";

const TAIL: &str = "- **No `import *`**: wildcard imports are not supported

State is preserved between calls (REPL-style). Set `restart: true` to reset state.

The last expression's value is automatically captured as the return value -- you do **not** need to `print()` it. End the snippet with the value to return as a bare expression. A final assignment stores the value but does not return it. A final expression that evaluates to `None` is treated as no result. Without a non-`None` final expression or print output, `run_code` returns `{}`. For example:

```python
result = some_expression
result
```

Avoid `print()` for return values as it produces Python string representations, not structured data. Use `print()` only for supplementary logging or debug output.

Returns a non-`None` last expression's value directly when nothing is printed. With `print()` output and no non-`None` final expression, returns `{\"output\": \"<printed text>\"}`. With `print()` output and a plain, non-`None` final expression, returns `{\"output\": \"<printed text>\", \"result\": <last expression>}`. With `print()` output and a multimodal final expression, returns a list with the printed text followed by the native content.";

/// The description without the functions (no file system, environment or clock).
pub(crate) fn base_description() -> String {
    format!("{HEAD}\n{NO_OS}\n{TAIL}")
}

fn functions_header(has_sync: bool, has_async: bool) -> String {
    if has_sync && !has_async {
        return "\nThe following functions are available inside the sandbox. Call them directly (do **not** redefine or import them). All parameters are keyword-only. All tool functions are synchronous: call them directly, e.g. `tool_name(arg=value)`.".into();
    }
    let base = "\nThe following functions are available inside the sandbox. These functions are already defined in the sandbox; call them by name without redefining or importing them. All parameters are keyword-only.";
    if has_async && !has_sync {
        return format!(
            "{base} All tool functions are async: invoke them with `await`, e.g. `await tool_name(arg=value)`. Calling without `await` returns an unresolved future, not the value.\n\nTo run calls concurrently, first `import asyncio`, then use `await asyncio.gather(...)` with positional awaitables. Monty does not support `asyncio.gather` keyword arguments or other task creation and wait APIs."
        );
    }
    format!(
        "{base} Async functions (`async def`) must be invoked with `await`, e.g. `await tool_name(arg=value)`. Sync functions (`def`) are called directly, e.g. `tool_name(arg=value)`.\n\nTo run async calls concurrently, first `import asyncio`, then use `await asyncio.gather(...)` with positional awaitables. Monty does not support `asyncio.gather` keyword arguments or other task creation and wait APIs."
    )
}

/// The functions' part of the description: the header, the `TypedDict` classes and the
/// signatures; empty without functions. Each function is `(name inside the sandbox,
/// definition)`; a `sequential` tool is a plain `def`, the others `async def`.
pub(crate) fn catalogue(functions: &[(String, &ToolDefinition)]) -> String {
    if functions.is_empty() {
        return String::new();
    }
    let defs: Vec<(String, &ToolDefinition, bool)> =
        functions.iter().map(|(name, def)| (name.clone(), *def, !def.sequential)).collect();
    let rendered = render_catalogue(&defs, "...");
    let has_sync = functions.iter().any(|(_, d)| d.sequential);
    let has_async = functions.iter().any(|(_, d)| !d.sequential);
    let mut sections = vec![functions_header(has_sync, has_async)];
    if !rendered.types.is_empty() {
        sections.push(format!("```python\n{}\n```", rendered.types.join("\n\n")));
    }
    sections.push(format!("```python\n{}\n```", rendered.functions.join("\n\n")));
    sections.join("\n\n")
}

/// The whole description: the base prose, then the catalogue.
pub(crate) fn description(functions: &[(String, &ToolDefinition)]) -> String {
    let base = base_description();
    let catalogue = catalogue(functions);
    if catalogue.is_empty() { base } else { format!("{base}\n\n{catalogue}") }
}

/// The arguments schema the harness sends for `run_code` (pydantic's schema of `RunCodeArgs`).
pub(crate) fn parameters_schema() -> Value {
    json!({
        "properties": {
            "code": {"description": "The Python code to execute in the sandbox.", "title": "Code", "type": "string"},
            "restart": {
                "description": "Set to true to reset REPL state. When false (default), state is preserved between calls.",
                "title": "Restart",
                "type": "boolean"
            }
        },
        "required": ["code"],
        "title": "_RunCodeArguments",
        "type": "object"
    })
}
