//! The expansion of `#[tool]`: checks the function and generates the `ToolSpec` constant.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, ReturnType, Safety, Type, Visibility};

use crate::docs::{ParsedDoc, join_doc_values, param_doc, parse_doc};
use crate::options::Options;
use crate::types::*;

/// Expands `#[tool(args)] item`. Errors become `compile_error!`s next to the unchanged function,
/// so that one mistake does not cascade into errors about a missing function.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let err = syn::Error::new_spanned(&item, "#[tool] goes on free functions (`fn` or `async fn`)");
            let err = err.to_compile_error();
            return quote!(#err #item);
        }
    };
    let options = Options::parse(args);
    let fn_name = options.as_ref().ok().and_then(|o| o.fn_name.clone());
    let tool = Tool::analyze(func);
    match (options, tool) {
        (Ok(options), Ok(tool)) => match tool.generate(&options) {
            Ok(tokens) => tokens,
            Err(e) => fallback(e, tool.into_func(), fn_name),
        },
        (Err(mut error), Err(failed)) => {
            let (e, func) = *failed;
            error.combine(e);
            fallback(error, func, fn_name)
        }
        (Err(error), Ok(tool)) => fallback(error, tool.into_func(), fn_name),
        (Ok(_), Err(failed)) => {
            let (error, func) = *failed;
            fallback(error, func, fn_name)
        }
    }
}

/// The name the function keeps beside the constant: `fn_name = ...`, else `{name}_fn`.
fn callable_ident(func: &ItemFn, fn_name: Option<Ident>) -> Ident {
    fn_name.unwrap_or_else(|| format_ident!("{}_fn", func.sig.ident.unraw(), span = func.sig.ident.span()))
}

/// The function under its callable name, beside the constant: same visibility, the constant's
/// `cfg`s, and a doc line pointing at the tool. It wraps the function as written, nested under
/// its own name, so that the name still means the function in its body (a recursive tool). Not
/// reported as dead code on its own: the constant calls it.
fn callable_fn(func: &ItemFn, ident: &Ident, vis: &Visibility, const_attrs: &[Attribute]) -> TokenStream {
    let mut inner = func.clone();
    inner.vis = Visibility::Inherited;
    let own = &func.sig.ident;
    let mut sig = func.sig.clone();
    sig.ident = ident.clone();
    let mut args = Vec::new();
    for (index, input) in sig.inputs.iter_mut().enumerate() {
        if let FnArg::Typed(pat_type) = input {
            pat_type.attrs.clear();
            let name = match &*pat_type.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && p.ident != *own => p.ident.clone(),
                _ => format_ident!("__toolsmith_arg{index}"),
            };
            *pat_type.pat = syn::parse_quote!(#name);
            args.push(name);
        }
    }
    let call = match sig.asyncness {
        Some(_) => quote!(#own(#(#args),*).await),
        None => quote!(#own(#(#args),*)),
    };
    let tool = own.unraw().to_string();
    let doc = format!(
        " The function of the tool `{tool}`, to call directly (in a unit test, say): `{tool}` itself is the tool's `ToolSpec`."
    );
    let cfgs = const_attrs.iter().filter(|a| a.path().is_ident("cfg"));
    quote! {
        #[doc = #doc]
        #(#cfgs)*
        #[allow(dead_code)]
        #vis #sig {
            #inner
            #call
        }
    }
}

/// The errors, and a placeholder constant of the right type so that code using the tool does not
/// report more errors. The function is kept beside it under its callable name (minus parameter
/// attributes that rustc would reject), so that errors in its body are still reported and code
/// calling it does not report more.
fn fallback(error: syn::Error, mut func: ItemFn, fn_name: Option<Ident>) -> TokenStream {
    let error = error.to_compile_error();
    let (const_attrs, fn_attrs): (Vec<Attribute>, Vec<Attribute>) =
        std::mem::take(&mut func.attrs).into_iter().partition(is_const_attr);
    func.attrs = fn_attrs;
    let vis = std::mem::replace(&mut func.vis, Visibility::Inherited);
    // Only a function that can be called plainly; the others' errors are already reported.
    let sig = &func.sig;
    let plain = sig.receiver().is_none() && sig.abi.is_none() && sig.variadic.is_none();
    let callable = if plain && !matches!(sig.safety, Safety::Unsafe(_)) {
        callable_fn(&func, &callable_ident(&func, fn_name), &vis, &const_attrs)
    } else {
        quote!()
    };
    let ident = &func.sig.ident;
    let name = ident.unraw().to_string();
    let pv = quote!(::toolsmith::__private);
    quote! {
        #error
        #callable
        #(#const_attrs)*
        #[allow(non_upper_case_globals)]
        #vis const #ident: ::toolsmith::ToolSpec = {
            fn __toolsmith_schema() -> (#pv::serde_json::Value, ::core::option::Option<::std::string::String>) {
                ::core::unreachable!()
            }
            fn __toolsmith_handler(_: &dyn #pv::AnyRunContext, _: #pv::serde_json::Value) -> #pv::Invocation {
                ::core::unreachable!()
            }
            #pv::ToolSpec::__new(
                #name,
                ::core::option::Option::None,
                &[],
                __toolsmith_schema,
                #pv::DepsReq::Any,
                __toolsmith_handler,
                #pv::SpecOptions::DEFAULT,
            )
        };
    }
}

/// Attributes that belong on the generated constant rather than the function.
fn is_const_attr(attr: &Attribute) -> bool {
    ["doc", "cfg", "deprecated"].iter().any(|name| attr.path().is_ident(name))
}

/// What the first parameter says about the context.
pub(crate) enum Context {
    /// No `RunContext` parameter.
    None,
    /// `RunContext` or `RunContext<()>`.
    Unit,
    /// `RunContext<T>`.
    Typed(Box<Type>),
}

/// A parameter the model provides.
struct Param {
    ident: Ident,
    ty: Type,
    description: Option<String>,
    /// `#[serde(...)]` and `#[schemars(...)]` attributes, moved to the arguments struct's field.
    field_attrs: Vec<Attribute>,
}

/// How the function's return value becomes the tool's output.
#[derive(Clone, Copy)]
pub(crate) enum Output {
    Value,
    Result,
    Return,
    ReturnResult,
}

struct Tool {
    /// The function, with parameter attributes that are not Rust's removed.
    func: ItemFn,
    context: Context,
    params: Vec<Param>,
    doc: ParsedDoc,
    /// Attributes for the constant: docs, `cfg` and `deprecated`.
    const_attrs: Vec<Attribute>,
    output: Output,
    output_span: Span,
    /// The type whose JSON schema is the tool's return schema (none for `ToolReturn`).
    value_type: Option<Type>,
}

impl Tool {
    /// Checks the function. On error, returns the errors and the function cleaned of parameter
    /// attributes that rustc would reject.
    fn analyze(mut func: ItemFn) -> Result<Tool, Box<(syn::Error, ItemFn)>> {
        let mut errors: Vec<syn::Error> = Vec::new();
        let sig = &func.sig;
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            errors.push(syn::Error::new_spanned(
                &sig.generics,
                "#[tool] functions cannot be generic: the argument schema is built from concrete types",
            ));
        }
        if let Safety::Unsafe(token) = &sig.safety {
            errors.push(syn::Error::new_spanned(token, "#[tool] functions cannot be `unsafe`"));
        }
        if let Some(abi) = &sig.abi {
            errors.push(syn::Error::new_spanned(abi, "#[tool] functions cannot have an `extern` ABI"));
        }
        if let Some(variadic) = &sig.variadic {
            errors.push(syn::Error::new_spanned(variadic, "#[tool] functions cannot be variadic"));
        }

        // Attributes of the function: docs (and `cfg`, `deprecated`) go on the constant.
        let mut doc_values = Vec::new();
        let mut const_attrs = Vec::new();
        let mut fn_attrs = Vec::new();
        for attr in std::mem::take(&mut func.attrs) {
            if attr.path().is_ident("doc") {
                if let Some(value) = doc_value(&attr) {
                    doc_values.push(value);
                }
                const_attrs.push(attr);
            } else if is_const_attr(&attr) {
                const_attrs.push(attr);
            } else {
                fn_attrs.push(attr);
            }
        }
        func.attrs = fn_attrs;
        let doc = parse_doc(&join_doc_values(&doc_values));

        let mut context = Context::None;
        let mut params = Vec::new();
        for (index, input) in func.sig.inputs.iter_mut().enumerate() {
            let pat_type = match input {
                FnArg::Receiver(receiver) => {
                    errors.push(syn::Error::new_spanned(
                        receiver.self_token,
                        "#[tool] goes on free functions, not methods: remove `self`",
                    ));
                    continue;
                }
                FnArg::Typed(pat_type) => pat_type,
            };
            // Attributes on parameters: docs are descriptions, serde/schemars go to the field.
            let mut param_docs = Vec::new();
            let mut field_attrs = Vec::new();
            pat_type.attrs.retain(|attr| {
                if attr.path().is_ident("doc") {
                    if let Some(value) = doc_value(attr) {
                        param_docs.push(value);
                    }
                    false
                } else if attr.path().is_ident("serde") || attr.path().is_ident("schemars") {
                    field_attrs.push(attr.clone());
                    false
                } else {
                    true
                }
            });

            if let Some(ctx) = run_context(&pat_type.ty) {
                if index != 0 {
                    errors.push(syn::Error::new_spanned(
                        &pat_type.ty,
                        "`RunContext` must be the first parameter of a tool",
                    ));
                    continue;
                }
                match ctx {
                    Ok(ctx) => context = ctx,
                    Err(e) => errors.push(e),
                }
                if let Some(attr) = field_attrs.first() {
                    errors.push(syn::Error::new_spanned(
                        attr,
                        "the context parameter takes no serde/schemars attributes",
                    ));
                }
                continue;
            }
            if let Type::Reference(reference) = &*pat_type.ty
                && run_context(&reference.elem).is_some()
            {
                errors.push(syn::Error::new_spanned(
                    &pat_type.ty,
                    "take the context by value: `ctx: RunContext<T>`, not a reference",
                ));
                continue;
            }

            let ident = match &*pat_type.pat {
                Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
                other => {
                    errors.push(syn::Error::new_spanned(
                        other,
                        "tool parameters must be plain identifiers such as `city: String`: \
                         the names become the argument names the model uses",
                    ));
                    continue;
                }
            };
            if let Err(e) = check_owned(&pat_type.ty) {
                errors.push(e);
                continue;
            }
            let description = param_doc(&join_doc_values(&param_docs));
            params.push(Param { ident, ty: (*pat_type.ty).clone(), description, field_attrs });
        }

        let (output, output_span) = match &func.sig.output {
            ReturnType::Default => (Output::Value, func.sig.ident.span()),
            ReturnType::Type(_, ty) => (classify_output(ty), ty.span()),
        };
        let value_type: Option<Type> = match (&func.sig.output, output) {
            (ReturnType::Default, _) => Some(syn::parse_quote!(())),
            (ReturnType::Type(_, ty), Output::Value) => Some((**ty).clone()),
            (ReturnType::Type(_, ty), Output::Result) => {
                last_segment(ty).and_then(|s| type_args(s).first().map(|t| (*t).clone()))
            }
            _ => None,
        };

        let mut errors = errors.into_iter();
        match errors.next() {
            Some(mut error) => {
                errors.for_each(|e| error.combine(e));
                func.attrs.extend(const_attrs);
                Err(Box::new((error, func)))
            }
            None => Ok(Tool { func, context, params, doc, const_attrs, output, output_span, value_type }),
        }
    }

    /// The function with all its attributes back, for the error fallback.
    fn into_func(self) -> ItemFn {
        let mut func = self.func;
        func.attrs.extend(self.const_attrs);
        func
    }

    /// Whether the arguments deserialise directly into the single parameter's type.
    fn flatten(&self, options: &Options) -> syn::Result<bool> {
        match options.flatten {
            Some((false, _)) => Ok(false),
            Some((true, span)) => {
                if self.params.len() != 1 {
                    return Err(syn::Error::new(span, "`flatten` needs exactly one parameter besides the context"));
                }
                if let Some(attr) = self.params[0].field_attrs.first() {
                    return Err(syn::Error::new_spanned(
                        attr,
                        "serde/schemars attributes on the parameter need the wrapper struct: remove `flatten`",
                    ));
                }
                Ok(true)
            }
            None => Ok(self.params.len() == 1
                && self.params[0].field_attrs.is_empty()
                && is_struct_like(&self.params[0].ty)),
        }
    }

    fn generate(&self, options: &Options) -> syn::Result<TokenStream> {
        let flatten = self.flatten(options)?;
        let pv = quote!(::toolsmith::__private);
        let fn_ident = &self.func.sig.ident;
        let const_attrs = &self.const_attrs;
        let vis = &self.func.vis;
        let callable = callable_ident(&self.func, options.fn_name.clone());
        let callable_fn = callable_fn(&self.func, &callable, vis, const_attrs);
        let name = fn_ident.unraw().to_string();

        let description = match &self.doc.description {
            Some(d) => quote!(::core::option::Option::Some(#d)),
            None => quote!(::core::option::Option::None),
        };

        // Parameter descriptions: on the parameter itself, else from `# Arguments`.
        let descriptions: Vec<Option<String>> = self
            .params
            .iter()
            .map(|p| p.description.clone().or_else(|| self.doc.param(&p.ident.unraw().to_string()).map(str::to_string)))
            .collect();
        let undocumented: Vec<String> = if flatten {
            Vec::new()
        } else {
            self.params
                .iter()
                .zip(&descriptions)
                .filter(|(_, d)| d.is_none())
                .map(|(p, _)| p.ident.unraw().to_string())
                .collect()
        };

        // The arguments: a generated struct, or the single parameter's own type.
        let ready_err = quote! {
            ::core::result::Result::Err(e) => {
                return #pv::Invocation::Ready(::core::result::Result::Err(e))
            }
        };
        let (args_struct, schema_body, parse_args, call_args) = if flatten {
            let ty = &self.params[0].ty;
            let parse_args = quote_spanned! {ty.span()=>
                let __toolsmith_arg: #ty = match #pv::parse_args::<#ty>(__toolsmith_args) {
                    ::core::result::Result::Ok(a) => a,
                    #ready_err
                };
            };
            let schema = quote_spanned!(ty.span()=> #pv::model_schema::<#ty>());
            (quote!(), schema, parse_args, vec![quote!(__toolsmith_arg)])
        } else {
            let fields = self.params.iter().zip(&descriptions).map(|(p, d)| {
                let Param { ident, ty, field_attrs, .. } = p;
                let user_has_description =
                    field_attrs.iter().any(|a| a.to_token_stream().to_string().contains("description"));
                let description = match d {
                    Some(d) if !user_has_description => quote!(#[schemars(description = #d)]),
                    _ => quote!(),
                };
                quote!(#(#field_attrs)* #description #ident: #ty)
            });
            let args_struct = quote! {
                #[derive(#pv::serde::Deserialize, #pv::schemars::JsonSchema)]
                #[serde(crate = "::toolsmith::__private::serde", deny_unknown_fields)]
                #[schemars(crate = "::toolsmith::__private::schemars", deny_unknown_fields)]
                struct __ToolArgs { #(#fields,)* }
            };
            let parse_args = quote! {
                let __toolsmith_parsed: __ToolArgs = match #pv::parse_args::<__ToolArgs>(__toolsmith_args) {
                    ::core::result::Result::Ok(a) => a,
                    #ready_err
                };
            };
            let call_args = self.params.iter().map(|p| {
                let ident = &p.ident;
                quote!(__toolsmith_parsed.#ident)
            });
            (args_struct, quote!(#pv::args_schema::<__ToolArgs>()), parse_args, call_args.collect())
        };
        let parse_args = if self.params.is_empty() {
            quote! {
                if let ::core::result::Result::Err(e) = #pv::parse_args::<__ToolArgs>(__toolsmith_args) {
                    return #pv::Invocation::Ready(::core::result::Result::Err(e));
                }
            }
        } else {
            parse_args
        };

        // The context.
        let (deps_fns, deps, get_ctx, ctx_arg) = match &self.context {
            Context::None => (quote!(), quote!(#pv::DepsReq::Any), quote!(), None),
            Context::Unit => (
                quote!(),
                quote!(#pv::DepsReq::Any),
                quote!(let __toolsmith_ctx = #pv::AnyRunContext::unit(__toolsmith_any_ctx);),
                Some(quote!(__toolsmith_ctx)),
            ),
            Context::Typed(ty) => (
                quote! {
                    fn __toolsmith_deps_id() -> ::core::any::TypeId { ::core::any::TypeId::of::<#ty>() }
                    fn __toolsmith_deps_name() -> &'static str { ::core::any::type_name::<#ty>() }
                },
                quote!(#pv::DepsReq::Typed { id: __toolsmith_deps_id, name: __toolsmith_deps_name }),
                quote_spanned! {ty.span()=>
                    let __toolsmith_ctx = match #pv::typed_context::<#ty>(__toolsmith_any_ctx) {
                        ::core::result::Result::Ok(c) => c,
                        #ready_err
                    };
                },
                Some(quote!(__toolsmith_ctx)),
            ),
        };
        let ctx_param = if ctx_arg.is_some() { quote!(__toolsmith_any_ctx) } else { quote!(_) };
        let args = ctx_arg.into_iter().chain(call_args);
        let span = self.output_span;
        let mut callee = callable;
        callee.set_span(span);
        let call = quote_spanned!(span=> #callee(#(#args),*));
        // Spanned at the return type, so that an error type that does not convert into
        // `ToolError` (or a value that is not `Serialize`) is reported there.
        let output_fn = match self.output {
            Output::Value => quote_spanned!(span=> ::toolsmith::__private::value_output),
            Output::Result => quote_spanned!(span=> ::toolsmith::__private::result_output),
            Output::Return => quote_spanned!(span=> ::toolsmith::__private::return_output),
            Output::ReturnResult => {
                quote_spanned!(span=> ::toolsmith::__private::return_result_output)
            }
        };
        // An error type converts by `Into<ToolError>`, or else as any `std::error::Error`.
        let convert = |result: TokenStream| match self.output {
            Output::Result | Output::ReturnResult => quote_spanned! {span=>
                #result.map_err(|__toolsmith_error| {
                    #[allow(unused_imports)]
                    use #pv::{ErrorViaInto as _, ErrorViaStd as _};
                    (&&#pv::ErrorProbe::new(__toolsmith_error)).to_tool_error()
                })
            },
            Output::Value | Output::Return => result,
        };
        let invocation = if let Some(asyncness) = &self.func.sig.asyncness {
            let result = convert(quote_spanned!(span=> #call.await));
            let output = quote_spanned!(span=> #output_fn(#result));
            // A future that is not `Send` is reported at `async`.
            let future = quote_spanned!(asyncness.span=> ::std::boxed::Box::pin(async move { #output }));
            quote!(#pv::Invocation::Async(#future))
        } else {
            let result = convert(quote_spanned!(span=> #call));
            let output = quote_spanned!(span=> #output_fn(#result));
            quote!(#pv::Invocation::Blocking(::std::boxed::Box::new(move || #output)))
        };

        let options = options.spec_options();
        let (return_schema_fn, with_return_schema) = match &self.value_type {
            Some(ty) => (
                quote! {
                    fn __toolsmith_return_schema() -> ::core::option::Option<#pv::serde_json::Value> {
                        #[allow(unused_imports)]
                        use #pv::{ReturnSchemaFallback as _, ReturnSchemaKnown as _};
                        (&&#pv::ReturnSchemaProbe::<#ty>::new()).return_schema()
                    }
                },
                quote!(.__with_return_schema(__toolsmith_return_schema)),
            ),
            None => (quote!(), quote!()),
        };
        // A function without a context parameter is called without one being made.
        let without_context = match &self.context {
            Context::None => quote!(.__without_context()),
            _ => quote!(),
        };
        let with_envelope = if flatten {
            let name = self.params[0].ident.unraw().to_string();
            quote!(.__with_envelope(#name))
        } else {
            quote!()
        };
        Ok(quote! {
            #callable_fn
            #(#const_attrs)*
            #[allow(non_upper_case_globals)]
            #vis const #fn_ident: ::toolsmith::ToolSpec = {
                #args_struct
                #deps_fns
                fn __toolsmith_schema() -> (#pv::serde_json::Value, ::core::option::Option<::std::string::String>) {
                    #schema_body
                }
                fn __toolsmith_handler(
                    #ctx_param: &dyn #pv::AnyRunContext,
                    __toolsmith_args: &#pv::serde_json::Value,
                ) -> #pv::Invocation {
                    #get_ctx
                    #parse_args
                    #invocation
                }
                #return_schema_fn
                #pv::ToolSpec::__new(
                    #name,
                    #description,
                    &[#(#undocumented),*],
                    __toolsmith_schema,
                    #deps,
                    __toolsmith_handler,
                    #options,
                )
                #with_return_schema
                #with_envelope
                #without_context
            };
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> Type {
        syn::parse_str(s).unwrap()
    }

    #[test]
    fn output_classification() {
        let cases = [
            ("String", "value"),
            ("Result<String, ModelRetry>", "result"),
            ("std::io::Result<i64>", "result"),
            ("Result<ToolReturn, ModelRetry>", "return_result"),
            ("Result<toolsmith::ToolReturn, String>", "return_result"),
            ("ToolReturn", "return"),
            ("toolsmith::ToolReturn", "return"),
            ("Vec<ToolReturn>", "value"),
            ("(i64, i64)", "value"),
        ];
        for (t, expected) in cases {
            let got = match classify_output(&ty(t)) {
                Output::Value => "value",
                Output::Result => "result",
                Output::Return => "return",
                Output::ReturnResult => "return_result",
            };
            assert_eq!(got, expected, "{t}");
        }
    }

    #[test]
    fn struct_detection() {
        for t in ["Point", "geo::Point", "Wrapper<i64>"] {
            assert!(is_struct_like(&ty(t)), "{t}");
        }
        for t in ["i64", "String", "Vec<Point>", "Option<Point>", "serde_json::Value", "(i64, i64)", "[u8; 4]"] {
            assert!(!is_struct_like(&ty(t)), "{t}");
        }
    }

    #[test]
    fn context_detection() {
        assert!(run_context(&ty("String")).is_none());
        assert!(matches!(run_context(&ty("RunContext")), Some(Ok(Context::Unit))));
        assert!(matches!(run_context(&ty("RunContext<()>")), Some(Ok(Context::Unit))));
        assert!(matches!(run_context(&ty("toolsmith::RunContext<Deps>")), Some(Ok(Context::Typed(_)))));
        assert!(matches!(run_context(&ty("RunContext<A, B>")), Some(Err(_))));
    }

    #[test]
    fn owned_check() {
        assert!(check_owned(&ty("Vec<Option<String>>")).is_ok());
        let msg = |t: &str| check_owned(&ty(t)).unwrap_err().to_string();
        assert_eq!(msg("&str"), "tool parameters must be owned types: use String instead of &str");
        assert_eq!(msg("&'static str"), "tool parameters must be owned types: use String instead of &str");
        assert_eq!(msg("&[i64]"), "tool parameters must be owned types: use Vec<i64> instead of &[i64]");
        assert!(msg("Vec<&str>").contains("use String instead of &str"));
        assert!(msg("impl Into<String>").contains("not `impl Trait`"));
    }
}
