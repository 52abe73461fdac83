//! `#[json_schema(..)]` on a field: what the server-side validator says about it, where the
//! derive cannot know (a type without a `BsonShape`, a custom serializer) or should not check.
//!
//! - `#[json_schema(bson_type = "string")]`, `#[json_schema(bson_type = ["long", "int"])]`: the
//!   stored BSON type(s), by their `$jsonSchema` aliases; an `Option` field is also `null`.
//! - `#[json_schema(skip)]`: any value, and the field is not required.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::ParseStream;
use syn::{LitStr, Token};

use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};

/// What `#[json_schema]` says of one field.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Validate {
    /// Nothing: the field's type's shape.
    #[default]
    Derived,
    /// `skip`: unchecked.
    Skip,
    /// `bson_type = ..`: these BSON types.
    Types(Vec<String>),
}

/// The `$jsonSchema` `bsonType` aliases.
const ALIASES: &[&str] = &[
    "double",
    "string",
    "object",
    "array",
    "binData",
    "objectId",
    "bool",
    "date",
    "null",
    "regex",
    "javascript",
    "int",
    "timestamp",
    "long",
    "decimal",
    "minKey",
    "maxKey",
    "number",
];

const USAGE: &str = "write `#[json_schema(bson_type = \"string\")]` (or a list: \
                     `bson_type = [\"long\", \"int\"]`) for the stored type, or \
                     `#[json_schema(skip)]` to leave the field unchecked";

/// The field's `#[json_schema]`, its mistakes reported in `errors`. `stored` is whether serde
/// stores the field at all.
pub(crate) fn of_field(attrs: &[syn::Attribute], stored: bool, errors: &mut Errors) -> Validate {
    let mut found = Attr::JsonSchema.find(attrs);
    let Some(attr) = found.next() else {
        return Validate::Derived;
    };
    for extra in found {
        errors.spanned(
            extra,
            "one `#[json_schema(..)]` per field: put its options together",
        );
    }
    if !stored {
        errors.spanned(
            attr.path(),
            "this field is never stored (`#[serde(skip)]`): remove `#[json_schema]`",
        );
        return Validate::Derived;
    }
    let tokens = match &attr.meta {
        syn::Meta::List(list) if !list.tokens.is_empty() => list.tokens.clone(),
        _ => {
            errors.spanned(attr, USAGE);
            return Validate::Derived;
        }
    };
    let mut types: Option<Vec<String>> = None;
    let mut skip: Option<proc_macro2::Span> = None;
    crate::options::parse(
        tokens,
        "json_schema",
        &["bson_type", "skip"],
        errors,
        |key, input, errors| match key.to_string().as_str() {
            "skip" => {
                skip = Some(key.span());
                Ok(())
            }
            _ => {
                types = Some(bson_types(input, errors)?);
                Ok(())
            }
        },
    );
    match (types, skip) {
        (Some(_), Some(span)) => {
            errors.at(
                span,
                "`skip` and `bson_type` contradict each other: give one (`skip` leaves the field \
                 unchecked, `bson_type` checks its type)",
            );
            Validate::Derived
        }
        (Some(types), None) if types.is_empty() => Validate::Derived,
        (Some(types), None) => Validate::Types(types),
        (None, Some(_)) => Validate::Skip,
        (None, None) => Validate::Derived,
    }
}

/// `= "alias"` or `= ["alias", ..]`, each alias checked; an empty list is reported (and
/// returned empty).
fn bson_types(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<Vec<String>> {
    input.parse::<Token![=]>()?;
    let literals: Vec<LitStr> = if input.peek(syn::token::Bracket) {
        let content;
        let brackets = syn::bracketed!(content in input);
        let list = content.parse_terminated(|i| i.parse::<LitStr>(), Token![,])?;
        if list.is_empty() {
            errors.at(
                brackets.span.join(),
                "name at least one BSON type: `bson_type = [\"long\", \"int\"]`",
            );
        }
        list.into_iter().collect()
    } else if input.peek(LitStr) {
        vec![input.parse::<LitStr>()?]
    } else {
        return Err(input.error(
            "write the BSON type as a string: `bson_type = \"string\"`, or a list of them: \
             `bson_type = [\"long\", \"int\"]`",
        ));
    };
    let mut types = Vec::new();
    for lit in literals {
        let alias = lit.value();
        if ALIASES.contains(&alias.as_str()) {
            if !types.contains(&alias) {
                types.push(alias);
            }
        } else {
            errors.spanned(
                &lit,
                format!(
                    "`{alias}` is not a BSON type alias of `$jsonSchema`{}; expected one of: {}",
                    did_you_mean(&alias, ALIASES.iter().copied()),
                    ALIASES.join(", ")
                ),
            );
        }
    }
    Ok(types)
}

/// The field's `Option<Shape>` expression as `#[json_schema]` makes it, `None` when it says
/// nothing (the type's own shape then). `optional`: the field is an `Option` (its `None` is
/// stored as `null`).
pub(crate) fn shape(validate: &Validate, optional: bool, p: &TokenStream) -> Option<TokenStream> {
    match validate {
        Validate::Derived => None,
        Validate::Skip => Some(quote!(::core::option::Option::None)),
        Validate::Types(types) => {
            let shape = quote!(#p::Shape::Types(::std::vec![#(#types),*]));
            Some(if optional {
                quote!(::core::option::Option::Some(#shape.nullable()))
            } else {
                quote!(::core::option::Option::Some(#shape))
            })
        }
    }
}
