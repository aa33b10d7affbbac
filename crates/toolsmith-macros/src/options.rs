//! The options of `#[tool(...)]`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprLit, ExprUnary, Lit, LitBool, LitStr, UnOp};

/// The names accepted in `#[tool(...)]`, for the "unknown option" error.
const VALID: &str = "name, description, retries, timeout, strict, sequential, requires_approval, \
                     defer_loading, include_return_schema, metadata, require_parameter_descriptions, flatten, fn_name";

/// The parsed options. Each is `None` when not given.
#[derive(Default)]
pub(crate) struct Options {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub retries: Option<u32>,
    pub timeout: Option<std::time::Duration>,
    pub strict: Option<bool>,
    pub sequential: Option<bool>,
    pub requires_approval: Option<bool>,
    pub defer_loading: Option<bool>,
    pub include_return_schema: Option<bool>,
    pub metadata: Option<LitStr>,
    pub require_parameter_descriptions: Option<bool>,
    /// `flatten = bool`, with the span of the option for errors.
    pub flatten: Option<(bool, Span)>,
    /// `fn_name = ident`: the name the function keeps beside the constant.
    pub fn_name: Option<syn::Ident>,
}

impl Options {
    /// Parses the tokens inside `#[tool(...)]`.
    pub fn parse(args: TokenStream) -> syn::Result<Options> {
        let mut options = Options::default();
        let parser = syn::meta::parser(|meta| options.parse_one(&meta));
        syn::parse::Parser::parse2(parser, args)?;
        Ok(options)
    }

    fn parse_one(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(ident) = meta.path.get_ident() else {
            return Err(meta.error(format_args!("unknown option; valid options are: {VALID}")));
        };
        let key = ident.to_string();
        match key.as_str() {
            "name" => {
                let lit: LitStr = meta.value()?.parse()?;
                if lit.value().is_empty() {
                    return Err(syn::Error::new_spanned(lit, "the tool name must not be empty"));
                }
                set(meta, &mut self.name, lit)
            }
            "description" => {
                let lit: LitStr = meta.value()?.parse()?;
                set(meta, &mut self.description, lit)
            }
            "retries" => {
                let expr: Expr = meta.value()?.parse()?;
                let value = match &expr {
                    Expr::Lit(ExprLit { lit: Lit::Int(int), .. }) => int.base10_parse::<u32>()?,
                    _ => {
                        return Err(syn::Error::new_spanned(
                            expr,
                            "retries must be a non-negative integer, e.g. `retries = 3`",
                        ));
                    }
                };
                set(meta, &mut self.retries, value)
            }
            "timeout" => {
                let expr: Expr = meta.value()?.parse()?;
                let value = timeout_value(&expr)?;
                set(meta, &mut self.timeout, value)
            }
            "strict" => {
                let value = flag(meta)?;
                set(meta, &mut self.strict, value)
            }
            "sequential" => {
                let value = flag(meta)?;
                set(meta, &mut self.sequential, value)
            }
            "requires_approval" => {
                let value = flag(meta)?;
                set(meta, &mut self.requires_approval, value)
            }
            "defer_loading" => {
                let value = flag(meta)?;
                set(meta, &mut self.defer_loading, value)
            }
            "include_return_schema" => {
                let value = flag(meta)?;
                set(meta, &mut self.include_return_schema, value)
            }
            "require_parameter_descriptions" => {
                let value = flag(meta)?;
                set(meta, &mut self.require_parameter_descriptions, value)
            }
            "flatten" => {
                let value = flag(meta)?;
                set(meta, &mut self.flatten, (value, ident.span()))
            }
            "fn_name" => {
                let ident: syn::Ident = meta.value()?.parse()?;
                set(meta, &mut self.fn_name, ident)
            }
            "metadata" => {
                let lit: LitStr = meta.value()?.parse()?;
                if let Err(e) = crate::json::check_object(&lit.value()) {
                    return Err(syn::Error::new_spanned(lit, format!("metadata must be a JSON object: {e}")));
                }
                set(meta, &mut self.metadata, lit)
            }
            _ => Err(meta.error(format_args!("unknown option `{key}`; valid options are: {VALID}"))),
        }
    }

    /// The `SpecOptions` expression for the options that were given.
    pub fn spec_options(&self) -> TokenStream {
        let mut fields = Vec::new();
        if let Some(name) = &self.name {
            fields.push(quote!(name: ::core::option::Option::Some(#name)));
        }
        if let Some(description) = &self.description {
            fields.push(quote!(description: ::core::option::Option::Some(#description)));
        }
        if let Some(retries) = self.retries {
            fields.push(quote!(retries: ::core::option::Option::Some(#retries)));
        }
        if let Some(timeout) = self.timeout {
            let (secs, nanos) = (timeout.as_secs(), timeout.subsec_nanos());
            fields.push(quote!(timeout: ::core::option::Option::Some(::core::time::Duration::new(#secs, #nanos))));
        }
        if let Some(strict) = self.strict {
            fields.push(quote!(strict: ::core::option::Option::Some(#strict)));
        }
        if let Some(include) = self.include_return_schema {
            fields.push(quote!(include_return_schema: ::core::option::Option::Some(#include)));
        }
        if let Some(metadata) = &self.metadata {
            fields.push(quote!(metadata: ::core::option::Option::Some(#metadata)));
        }
        for (name, value) in [
            ("sequential", self.sequential),
            ("requires_approval", self.requires_approval),
            ("defer_loading", self.defer_loading),
            ("require_parameter_descriptions", self.require_parameter_descriptions),
        ] {
            if let Some(value) = value {
                let name = syn::Ident::new(name, Span::call_site());
                fields.push(quote!(#name: #value));
            }
        }
        quote! {
            ::toolsmith::__private::SpecOptions {
                #(#fields,)*
                ..::toolsmith::__private::SpecOptions::DEFAULT
            }
        }
    }
}

/// Stores an option, rejecting a second occurrence.
fn set<T>(meta: &ParseNestedMeta<'_>, slot: &mut Option<T>, value: T) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error("this option is given twice"));
    }
    *slot = Some(value);
    Ok(())
}

/// `flag` alone means `true`; `flag = true` / `flag = false` are explicit.
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(syn::Token![=]) {
        let lit: LitBool = meta.value()?.parse()?;
        Ok(lit.value)
    } else {
        Ok(true)
    }
}

/// A timeout in seconds: an integer or float literal greater than zero.
fn timeout_value(expr: &Expr) -> syn::Result<std::time::Duration> {
    const MSG: &str = "timeout must be a duration greater than 0: seconds (`timeout = 5.0`) or a string with a unit (`timeout = \"250ms\"`, `\"5s\"`, `\"2m\"`, `\"1h\"`)";
    let seconds = match expr {
        Expr::Lit(ExprLit { lit: Lit::Float(f), .. }) => f.base10_parse::<f64>()?,
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<f64>()?,
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
            let text = s.value();
            let text = text.trim();
            let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
            let (number, unit) = text.split_at(split);
            let scale = match unit.trim() {
                "ms" => 0.001,
                "s" => 1.0,
                "m" | "min" => 60.0,
                "h" => 3600.0,
                _ => return Err(syn::Error::new_spanned(expr, MSG)),
            };
            number.trim().parse::<f64>().map_err(|_| syn::Error::new_spanned(expr, MSG))? * scale
        }
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), .. }) => return Err(syn::Error::new_spanned(expr, MSG)),
        _ => return Err(syn::Error::new_spanned(expr, MSG)),
    };
    match std::time::Duration::try_from_secs_f64(seconds) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(syn::Error::new_spanned(expr, MSG)),
    }
}
