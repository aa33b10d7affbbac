//! Expansion tests: the errors the macro reports and the shape of what it generates.

use proc_macro2::{TokenStream, TokenTree};

use crate::expand::expand;

fn run(args: &str, item: &str) -> TokenStream {
    expand(args.parse().unwrap(), item.parse().unwrap())
}

/// The messages of the `compile_error!`s in an expansion.
fn errors(args: &str, item: &str) -> Vec<String> {
    fn scan(stream: TokenStream, out: &mut Vec<String>) {
        let tokens: Vec<TokenTree> = stream.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            if let TokenTree::Ident(ident) = token
                && ident == "compile_error"
                && let Some(TokenTree::Group(group)) = tokens.get(i + 2)
            {
                out.push(syn::parse2::<syn::LitStr>(group.stream()).unwrap().value());
            } else if let TokenTree::Group(group) = token {
                scan(group.stream(), out);
            }
        }
    }
    let mut out = Vec::new();
    scan(run(args, item), &mut out);
    out
}

fn error(args: &str, item: &str) -> String {
    let errors = errors(args, item);
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors.into_iter().next().unwrap()
}

#[test]
fn valid_tools_expand_without_errors() {
    for (args, item) in [
        ("", "fn f() {}"),
        ("", "async fn f(ctx: RunContext<String>, a: i64, mut b: String) -> Result<String, ModelRetry> { todo!() }"),
        ("", "pub fn f(_ctx: RunContext, p: Point) -> ToolReturn { todo!() }"),
        ("", "fn f(ctx: toolsmith::RunContext<()>, r#type: Option<Vec<String>>) {}"),
        ("", "fn f(/// the x\n x: i64, #[serde(default)] y: i64) {}"),
        ("", "const fn f(x: i64) -> i64 { x }"),
        ("retries = 3, timeout = 5, strict, sequential = false, name = \"n\", description = \"d\"", "fn f() {}"),
        ("requires_approval, defer_loading = true, require_parameter_descriptions, flatten = false", "fn f() {}"),
        ("metadata = r#\"{\"a\": [1, {\"b\": null}]}\"#, timeout = 0.25, flatten = true", "fn f(x: Alias) {}"),
        ("timeout = \"250ms\"", "fn f() {}"),
        ("timeout = \"2m\"", "fn f() {}"),
        ("fn_name = f_impl", "fn f() {}"),
        ("fn_name = r#f2", "fn r#type() {}"),
    ] {
        assert_eq!(errors(args, item), Vec::<String>::new(), "#[tool({args})] {item}");
    }
}

#[test]
fn expansion_shape() {
    let out = run(
        "retries = 3, timeout = 5.0",
        "/// Get me foobar.\n///\n/// # Arguments\n/// * `a` - apple pie\n#[inline] pub(crate) async fn foobar(ctx: RunContext<String>, a: i64, b: String) -> Result<String, ModelRetry> { todo!() }",
    )
    .to_string();
    for expected in [
        "# [doc = \" Get me foobar.\"]",
        "# [allow (non_upper_case_globals)] pub (crate) const foobar : :: toolsmith :: ToolSpec = {",
        "# [allow (dead_code)] pub (crate) async fn foobar_fn (ctx : RunContext < String > , a : i64 , b : String) -> Result < String , ModelRetry > { # [inline] async fn foobar (ctx : RunContext < String > , a : i64 , b : String) -> Result < String , ModelRetry > { todo ! () } foobar (ctx , a , b) . await }",
        "struct __ToolArgs { # [schemars (description = \"apple pie\")] a : i64 , b : String , }",
        ":: toolsmith :: __private :: typed_context :: < String > (__toolsmith_any_ctx)",
        ":: toolsmith :: __private :: Invocation :: Async (:: std :: boxed :: Box :: pin (async move {",
        ":: toolsmith :: __private :: result_output (foobar_fn (__toolsmith_ctx , __toolsmith_parsed . a , __toolsmith_parsed . b) . await . map_err (| __toolsmith_error |",
        "(&& :: toolsmith :: __private :: ErrorProbe :: new (__toolsmith_error)) . to_tool_error ()",
        "ToolSpec :: __new (\"foobar\" , :: core :: option :: Option :: Some (\"Get me foobar.\") , & [\"b\"] ,",
        "DepsReq :: Typed { id : __toolsmith_deps_id , name : __toolsmith_deps_name }",
        "retries : :: core :: option :: Option :: Some (3u32) , timeout : :: core :: option :: Option :: Some (:: core :: time :: Duration :: new (5u64 , 0u32)) ,",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }

    let out = run("", "fn norm(p: Point) -> f64 { 0.0 }").to_string();
    assert!(out.contains("model_schema :: < Point > ()"), "{out}");
    assert!(out.contains("Invocation :: Blocking (:: std :: boxed :: Box :: new (move || :: toolsmith :: __private :: value_output (norm_fn (__toolsmith_arg))))"), "{out}");
    assert!(out.contains("DepsReq :: Any"), "{out}");
    assert!(!out.contains("__ToolArgs"), "{out}");

    let out = run("flatten = false", "fn norm(p: Point) {}").to_string();
    assert!(out.contains("args_schema :: < __ToolArgs > ()"), "{out}");

    let out = run("", "fn f(ctx: RunContext<()>, /// doc\n x: i64) -> ToolReturn { todo!() }").to_string();
    assert!(out.contains("AnyRunContext :: unit (__toolsmith_any_ctx)"), "{out}");
    assert!(out.contains("return_output (f_fn (__toolsmith_ctx , __toolsmith_parsed . x))"), "{out}");
    assert!(out.contains("fn f_fn (ctx : RunContext < () > , x : i64)"), "parameter docs are removed: {out}");
    assert!(out.contains("& [] ,"), "{out}");

    let out = run("", "fn f() -> Result<ToolReturn, String> { todo!() }").to_string();
    assert!(out.contains("return_result_output"), "{out}");
}

#[test]
fn not_a_function() {
    assert_eq!(error("", "struct S;"), "#[tool] goes on free functions (`fn` or `async fn`)");
}

#[test]
fn signature_errors() {
    assert_eq!(error("", "fn f(&self, x: i64) {}"), "#[tool] goes on free functions, not methods: remove `self`");
    assert!(error("", "fn f<T>(x: T) {}").starts_with("#[tool] functions cannot be generic"));
    assert!(error("", "fn f(x: i64) where i64: Copy {}").starts_with("#[tool] functions cannot be generic"));
    assert_eq!(error("", "unsafe fn f() {}"), "#[tool] functions cannot be `unsafe`");
    assert_eq!(error("", "extern \"C\" fn f() {}"), "#[tool] functions cannot have an `extern` ABI");
}

#[test]
fn parameter_errors() {
    assert_eq!(error("", "fn f(text: &str) {}"), "tool parameters must be owned types: use String instead of &str");
    assert_eq!(error("", "fn f(xs: &[u8]) {}"), "tool parameters must be owned types: use Vec<u8> instead of &[u8]");
    assert_eq!(
        error("", "fn f(xs: Option<&'static Point>) {}"),
        "tool parameters must be owned types: use Point instead of &'static Point"
    );
    assert!(error("", "fn f(x: impl Into<String>) {}").contains("not `impl Trait`"));
    let plain = "tool parameters must be plain identifiers such as `city: String`: the names become the argument names the model uses";
    assert_eq!(error("", "fn f((a, b): (i64, i64)) {}"), plain);
    assert_eq!(error("", "fn f(_: i64) {}"), plain);
    assert_eq!(error("", "fn f(ref x: i64) {}"), plain);
    assert_eq!(error("", "fn f(Point { x, y }: Point) {}"), plain);
}

#[test]
fn context_errors() {
    assert_eq!(error("", "fn f(x: i64, ctx: RunContext) {}"), "`RunContext` must be the first parameter of a tool");
    assert_eq!(
        error("", "fn f(ctx: &RunContext<String>) {}"),
        "take the context by value: `ctx: RunContext<T>`, not a reference"
    );
    assert_eq!(error("", "fn f(ctx: RunContext<A, B>) {}"), "expected `RunContext<T>` with one dependency type");
}

#[test]
fn all_errors_are_reported_together() {
    let errors = errors("retry = 1", "fn f(a: &str, (b, c): (i64, i64)) {}");
    assert_eq!(errors.len(), 3, "{errors:?}");
}

#[test]
fn errors_leave_a_placeholder_constant_around_the_function() {
    let out = run("", "/// Doc.\n#[cfg(test)] #[inline] pub fn f(/// x doc\n x: &str, #[serde(default)] y: i64) {}")
        .to_string();
    assert!(
        out.contains("# [doc = \" Doc.\"] # [cfg (test)] # [allow (non_upper_case_globals)] pub const f : :: toolsmith :: ToolSpec = {"),
        "{out}"
    );
    assert!(
        out.contains("# [cfg (test)] # [allow (dead_code)] pub fn f_fn (x : & str , y : i64) { # [inline] fn f (x : & str , y : i64) { } f (x , y) }"),
        "the function stays callable beside the placeholder: {out}"
    );
    assert!(out.contains(":: core :: unreachable ! ()"), "{out}");
    // A method is not kept: it cannot live in a block.
    let out = run("", "fn f(&self) {}").to_string();
    assert!(!out.contains("fn f"), "{out}");
    // The name given with `fn_name` is kept when another option is wrong.
    let out = run("fn_name = g, retry = 1", "fn f() {}").to_string();
    assert!(!out.contains("fn g"), "unparsed options give the default name: {out}");
    assert!(out.contains("fn f_fn"), "{out}");
    let out = run("fn_name = g", "fn f(x: &str) {}").to_string();
    assert!(out.contains("fn g (x : & str)"), "{out}");
    // Something that is not a function is left as it is.
    let out = run("", "struct S;").to_string();
    assert!(out.ends_with("struct S ;"), "{out}");
}

#[test]
fn option_errors() {
    let unknown = error("retry = 3", "fn f() {}");
    assert_eq!(
        unknown,
        "unknown option `retry`; valid options are: name, description, retries, timeout, strict, sequential, \
         requires_approval, defer_loading, include_return_schema, metadata, require_parameter_descriptions, flatten, \
         fn_name"
    );
    assert_eq!(error("fn_name = \"g\"", "fn f() {}"), "expected identifier");
    assert_eq!(error("fn_name = g, fn_name = h", "fn f() {}"), "this option is given twice");
    assert!(error("a::b = 1", "fn f() {}").starts_with("unknown option;"));
    for timeout in ["0", "0.0", "-1", "-2.5", "\"5\"", "\"5 days\"", "\"0ms\"", "x", "1e999", "1e30", "\"1e30s\""] {
        assert_eq!(
            error(&format!("timeout = {timeout}"), "fn f() {}"),
            "timeout must be a duration greater than 0: seconds (`timeout = 5.0`) or a string with a unit \
             (`timeout = \"250ms\"`, `\"5s\"`, `\"2m\"`, `\"1h\"`)",
            "{timeout}"
        );
    }
    assert!(error("retries = -1", "fn f() {}").starts_with("retries must be a non-negative integer"));
    assert!(error("retries = 1.5", "fn f() {}").starts_with("retries must be a non-negative integer"));
    assert!(!error("retries = 99999999999", "fn f() {}").is_empty());
    assert_eq!(error("retries = 1, retries = 2", "fn f() {}"), "this option is given twice");
    assert_eq!(error("strict, strict = false", "fn f() {}"), "this option is given twice");
    assert_eq!(error("name = \"\"", "fn f() {}"), "the tool name must not be empty");
    assert_eq!(error("name = 3", "fn f() {}"), "expected string literal");
    assert_eq!(error("strict = 1", "fn f() {}"), "expected boolean literal");
    assert_eq!(
        error("metadata = \"[1, 2]\"", "fn f() {}"),
        "metadata must be a JSON object: expected a JSON object (`{...}`)"
    );
    assert!(
        error("metadata = \"{'a': 1}\"", "fn f() {}")
            .starts_with("metadata must be a JSON object: expected a string key")
    );
    assert_eq!(
        error("flatten = true", "fn f(a: Point, b: Point) {}"),
        "`flatten` needs exactly one parameter besides the context"
    );
    assert_eq!(
        error("flatten", "fn f(#[serde(default)] a: Point) {}"),
        "serde/schemars attributes on the parameter need the wrapper struct: remove `flatten`"
    );
}

#[test]
fn the_function_stays_callable_beside_the_constant() {
    let out =
        run("", "/// Doc.\n#[cfg(feature = \"x\")] #[deprecated] pub async fn lookup(city: String) -> String { city }")
            .to_string();
    let expected = "# [doc = \" The function of the tool `lookup`, to call directly (in a unit test, say): `lookup` itself is the tool's `ToolSpec`.\"] # [cfg (feature = \"x\")] # [allow (dead_code)] pub async fn lookup_fn (city : String) -> String { async fn lookup (city : String) -> String { city } lookup (city) . await }";
    assert!(out.contains(expected), "{out}");
    assert!(
        out.contains("# [deprecated] # [allow (non_upper_case_globals)] pub const lookup : :: toolsmith :: ToolSpec"),
        "{out}"
    );
    assert!(out.contains("value_output (lookup_fn (__toolsmith_parsed . city) . await)"), "{out}");

    let out = run("fn_name = lookup_impl", "fn lookup() {}").to_string();
    assert!(out.contains("fn lookup_impl ()"), "{out}");
    assert!(out.contains("value_output (lookup_impl ())"), "{out}");
    assert!(!out.contains("lookup_fn"), "{out}");

    let out = run("", "fn r#type() {}").to_string();
    assert!(out.contains("fn type_fn () { fn r#type () { } r#type () }"), "{out}");

    // Patterns, and a parameter named like the function, get plain names in the wrapper; the
    // function as written keeps its own, and its name means itself in its body.
    let out = run("", "fn f(_: RunContext, mut f: i64, #[allow(unused)] y: i64) -> i64 { f(0) }").to_string();
    assert!(
        out.contains("fn f_fn (__toolsmith_arg0 : RunContext , __toolsmith_arg1 : i64 , y : i64) -> i64 { fn f (_ : RunContext , mut f : i64 , # [allow (unused)] y : i64) -> i64 { f (0) } f (__toolsmith_arg0 , __toolsmith_arg1 , y) }"),
        "{out}"
    );
}
