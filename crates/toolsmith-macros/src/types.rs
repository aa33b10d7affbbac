//! What the expansion reads off Rust types: doc attributes, path segments and their type
//! arguments, the `RunContext` parameter, owned parameter types, and the kind of return type.

use quote::ToTokens;
use syn::{Attribute, Expr, ExprLit, GenericArgument, Lit, Meta, PathArguments, Type};

use crate::expand::{Context, Output};

/// The string of a `#[doc = "..."]` attribute (`None` for `#[doc = include_str!(...)]` and
/// `#[doc(hidden)]`).
pub(crate) fn doc_value(attr: &Attribute) -> Option<String> {
    match &attr.meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    }
}

/// The last path segment of a type, looking through parentheses and invisible groups.
pub(crate) fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Paren(p) => last_segment(&p.elem),
        Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

/// The type arguments of a path segment (`<A, B>`), lifetimes and bindings left out.
pub(crate) fn type_args(segment: &syn::PathSegment) -> Vec<&Type> {
    match &segment.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `Some` when `ty` is `RunContext`/`RunContext<T>`: the context it asks for, or an error for
/// forms that are not understood.
pub(crate) fn run_context(ty: &Type) -> Option<syn::Result<Context>> {
    let segment = last_segment(ty)?;
    if segment.ident != "RunContext" {
        return None;
    }
    Some(match &segment.arguments {
        PathArguments::None => Ok(Context::Unit),
        PathArguments::AngleBracketed(args) => match (args.args.len(), args.args.first()) {
            (1, Some(GenericArgument::Type(Type::Tuple(t)))) if t.elems.is_empty() => Ok(Context::Unit),
            (1, Some(GenericArgument::Type(t))) => Ok(Context::Typed(Box::new(t.clone()))),
            _ => Err(syn::Error::new_spanned(args, "expected `RunContext<T>` with one dependency type")),
        },
        PathArguments::Parenthesized(args) => Err(syn::Error::new_spanned(args, "expected `RunContext<T>`")),
    })
}

/// Rejects borrowed parameter types (and `impl Trait`), which cannot be deserialised into.
pub(crate) fn check_owned(ty: &Type) -> syn::Result<()> {
    match ty {
        Type::Reference(r) => {
            let hint = match &*r.elem {
                Type::Path(p) if p.path.is_ident("str") => "use String instead of &str".to_string(),
                Type::Slice(s) => format!("use Vec<{}> instead of &[{}]", tokens(&s.elem), tokens(&s.elem)),
                Type::Path(p) if p.path.is_ident("Path") => "use PathBuf instead of &Path".to_string(),
                other => format!("use {} instead of {}", tokens(other), tokens(ty)),
            };
            Err(syn::Error::new_spanned(ty, format!("tool parameters must be owned types: {hint}")))
        }
        Type::ImplTrait(_) => Err(syn::Error::new_spanned(
            ty,
            "tool parameters must be concrete types that implement Deserialize and JsonSchema, not `impl Trait`",
        )),
        Type::Paren(p) => check_owned(&p.elem),
        Type::Group(g) => check_owned(&g.elem),
        Type::Array(a) => check_owned(&a.elem),
        Type::Slice(s) => check_owned(&s.elem),
        Type::Tuple(t) => t.elems.iter().try_for_each(check_owned),
        Type::Path(p) => {
            if let Some(qself) = &p.qself {
                check_owned(&qself.ty)?;
            }
            p.path.segments.iter().try_for_each(|s| type_args(s).into_iter().try_for_each(check_owned))
        }
        _ => Ok(()),
    }
}

pub(crate) fn tokens(ty: &Type) -> String {
    ty.to_token_stream().to_string().replace(" < ", "<").replace(" >", ">").replace("& ", "&")
}

/// Types that are not structs with named fields: a single parameter of such a type is wrapped in
/// an arguments object rather than taken as the whole arguments object.
const NOT_A_STRUCT: &[&str] = &[
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "f32",
    "f64",
    "bool",
    "char",
    "String",
    "str",
    "Vec",
    "VecDeque",
    "LinkedList",
    "BinaryHeap",
    "Option",
    "HashMap",
    "BTreeMap",
    "HashSet",
    "BTreeSet",
    "IndexMap",
    "IndexSet",
    "Value",
    "Map",
    "Number",
    "Box",
    "Arc",
    "Rc",
    "Cow",
    "PathBuf",
    "Duration",
    "SystemTime",
    "NonZeroU8",
    "NonZeroU16",
    "NonZeroU32",
    "NonZeroU64",
    "NonZeroU128",
    "NonZeroUsize",
    "NonZeroI8",
    "NonZeroI16",
    "NonZeroI32",
    "NonZeroI64",
    "NonZeroI128",
    "NonZeroIsize",
    "NonZero",
    "Wrapping",
    "Uuid",
    "DateTime",
    "NaiveDate",
    "NaiveTime",
    "NaiveDateTime",
    "Url",
    "Decimal",
];

/// Whether a single parameter of this type is taken to be a user struct deriving `Deserialize`
/// and `JsonSchema`, whose schema becomes the tool's schema.
pub(crate) fn is_struct_like(ty: &Type) -> bool {
    match last_segment(ty) {
        Some(segment) => !NOT_A_STRUCT.iter().any(|name| segment.ident == name),
        None => false,
    }
}

/// Chooses the output conversion from the written return type.
pub(crate) fn classify_output(ty: &Type) -> Output {
    let Some(segment) = last_segment(ty) else {
        return Output::Value;
    };
    if segment.ident == "ToolReturn" {
        return Output::Return;
    }
    if segment.ident == "Result" {
        return match type_args(segment).first().and_then(|t| last_segment(t)) {
            Some(ok) if ok.ident == "ToolReturn" => Output::ReturnResult,
            _ => Output::Result,
        };
    }
    Output::Value
}
