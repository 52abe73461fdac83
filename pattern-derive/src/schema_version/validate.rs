//! Checking the version field's type against what the attribute declares.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::Type;

/// What [`version_type`] read: the version and its literal's span, or the span of a
/// `SchemaVersion` whose `N` is not a literal above 0.
pub(super) type VersionType = Result<(u32, Span), Span>;

/// The version `N` of a field typed `SchemaVersion<N>` (by the type's last path segment), with
/// the literal's span; `Err` with the span of a `SchemaVersion` whose `N` is not a literal.
pub(super) fn version_type(ty: &Type) -> Option<VersionType> {
    let Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?;
    if last.ident != "SchemaVersion" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return Some(Err(last.ident.span()));
    };
    let Some(arg) = args.args.first() else {
        return Some(Err(last.ident.span()));
    };
    let lit = match arg {
        syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(lit),
            ..
        })) => lit.clone(),
        // `SchemaVersion<3>` parses as a type argument in some positions? No: a literal is an
        // expression; anything else (a const's name) is refused.
        other => return Some(Err(other.span())),
    };
    Some(match lit.base10_parse::<u32>() {
        Ok(n) if n > 0 => Ok((n, lit.span())),
        _ => Err(lit.span()),
    })
}
