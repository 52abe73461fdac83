//! `#[bounded(n)]` on an array field: the application keeps it at most `n` items. The
//! [doctor](pattern_runtime::doctor) then does not report it as an array that can grow without
//! bound, and reports the stored documents where it is over `n`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::LitInt;

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::Errors;
use crate::schema::{Pattern, PatternDef};

/// The bounded-array declarations' entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_input, model, errors| Box::new(collect(model, errors)),
    fields: None,
};

/// The checked `#[bounded(n)]` fields: BSON name and bound.
struct Bounds(Vec<(String, u32)>);

impl Bounds {
    fn statics(&self) -> impl Iterator<Item = syn::Ident> + '_ {
        (0..self.0.len()).map(|i| format_ident!("__BOUNDED_{}", i))
    }
}

impl Pattern for Bounds {
    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let items = self
            .0
            .iter()
            .zip(self.statics())
            .map(|((field, max), name)| {
                quote! {
                    static #name: #p::BoundSpec = #p::BoundSpec::from_parts(#p::BoundParts {
                        field: #field,
                        max: #max,
                    });
                }
            });
        quote!(#(#items)*)
    }

    fn specs(&self) -> Vec<TokenStream> {
        crate::schema::spec_refs(self.statics())
    }
}

const USAGE: &str = "write the most items the array ever holds: `#[bounded(20)]`";

fn collect(model: &Model<'_>, errors: &mut Errors) -> Bounds {
    let mut out = Vec::new();
    for field in &model.fields {
        let mut attrs = field.attrs_of(Attr::Bounded);
        let Some(attr) = attrs.next() else { continue };
        for extra in attrs {
            errors.spanned(extra, "one `#[bounded(n)]` per field");
        }
        let max = match attr.parse_args::<LitInt>() {
            Ok(lit) => match lit.base10_parse::<u32>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    errors.spanned(
                        &lit,
                        "the bound is a number of items above 0: `#[bounded(20)]`",
                    );
                    None
                }
            },
            Err(_) => {
                errors.spanned(attr, USAGE);
                None
            }
        };
        if !field.serialized {
            errors.spanned(
                attr.path(),
                "this field is never stored (`#[serde(skip)]`): remove `#[bounded]`",
            );
            continue;
        }
        if !is_growable(field) {
            errors.spanned(
                attr.path(),
                format!(
                    "`#[bounded]` goes on an array field (a `Vec`, `VecDeque` or set), and `{}` \
                     is a `{}`",
                    field.rust_name,
                    crate::errors::type_string(field.ty)
                ),
            );
            continue;
        }
        if let Some(max) = max {
            out.push((field.bson_name.clone(), max));
        }
    }
    Bounds(out)
}

/// Whether the field's type (inside `Option`) is one the doctor counts as an array that can
/// grow: `Vec`, `VecDeque`, `HashSet`, `BTreeSet`, `IndexSet`, by the last path segment. The
/// runtime's [`growable`](pattern_runtime::doctor) reads the same names off the type string.
fn is_growable(field: &Field<'_>) -> bool {
    let ty = crate::types::option_inner(field.ty).unwrap_or(field.ty);
    let syn::Type::Path(tp) = ty else {
        return false;
    };
    tp.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "IndexSet"
        )
    })
}
