//! The typed model of a `#[derive(Model)]` input: fields with their serialized names (resolved
//! once, by serde's own front end) and the container attributes.

use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::quote;
use quote::ToTokens;
use serde_derive_internals::{ast, Ctxt, Derive};
use syn::punctuated::Punctuated;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Token, Type};

use crate::attr::{Attr, Attrs};
use crate::errors::{did_you_mean, Errors};

/// A struct with named fields, as the derive sees it.
pub(crate) struct Model<'a> {
    pub ident: &'a Ident,
    /// The path generated code uses for the runtime crate.
    pub krate: syn::Path,
    pub collection: String,
    /// `#[model(group = "...")]` (`#[bucket(group = "...")]` on a measurement).
    pub group: Option<String>,
    pub fields: Vec<Field<'a>>,
    /// For the common fields of an enum model: the fields of some variants only, by Rust name,
    /// with the variants that have them (so a message can say where a name is missing).
    pub partial_fields: Vec<(String, Vec<String>)>,
    /// How messages name the type whose fields these are, when not `` `ident` `` (a generated
    /// struct of an enum model: "variant `Push` of `Notification`").
    pub described_as: Option<String>,
    /// The toolkit attributes on the input itself (none on a model the derive generates).
    pub carries: Attrs,
}

/// One named field.
pub(crate) struct Field<'a> {
    pub ident: &'a Ident,
    /// The Rust name without `r#`.
    pub rust_name: String,
    /// The BSON key, after `rename` and `rename_all`.
    pub bson_name: String,
    pub ty: &'a Type,
    /// `false` under `#[serde(skip)]` / `skip_serializing`: never stored.
    pub serialized: bool,
    /// `#[serde(with = ...)]` / `serialize_with`: the stored type is not `ty`'s default.
    pub custom_serializer: bool,
    /// `#[serde(skip_serializing_if = ...)]`: some stored documents may lack the field.
    pub omittable: bool,
    /// `#[json_schema(..)]`: what the server-side validator says of it.
    pub validate: crate::validate::Validate,
    pub attrs: &'a [syn::Attribute],
    /// The toolkit attributes among `attrs`.
    pub carries: Attrs,
}

impl Field<'_> {
    /// Whether the field carries the toolkit attribute `attr`.
    pub(crate) fn has(&self, attr: Attr) -> bool {
        self.carries.has(attr)
    }

    /// The field's attributes `#[attr(..)]`, in order.
    pub(crate) fn attrs_of(&self, attr: Attr) -> impl Iterator<Item = &syn::Attribute> {
        attr.find(self.attrs)
    }
}

impl Model<'_> {
    /// Whether the input itself carries the toolkit attribute `attr`.
    pub(crate) fn has(&self, attr: Attr) -> bool {
        self.carries.has(attr)
    }

    /// The type `Model::Id` names: the `_id` field's type when it is stored as that type's own
    /// serialization, else `Bson` (no `_id` field, or a custom serializer): ids are then
    /// checked at run time only.
    pub(crate) fn id_type(&self, p: &TokenStream) -> TokenStream {
        id_type(&self.fields, p)
    }

    /// The place of the field `ident` among the model's fields: what tells the model handle
    /// which pattern handle a typed field name leads to (`Handled<K, N>`).
    pub(crate) fn field_index(&self, ident: &Ident) -> usize {
        self.fields
            .iter()
            .position(|f| f.ident == ident)
            .unwrap_or_default()
    }

    /// The impl of the runtime's `trait_` (`SubsetField`, `OutlierField`, ...) for the typed
    /// name of `field`: the model handle's `subset(..)` (and the others) reach `handle_ty`,
    /// made by `body` from `db`, through it. With `span` (the first and last token of the field's
    /// type), the handle's type is declared over it, so that an error in it is reported there,
    /// as one with the other uses of the field's type.
    pub(crate) fn field_handle(
        &self,
        field: &Ident,
        trait_: &str,
        handle_ty: &TokenStream,
        body: &TokenStream,
        span: Option<(Span, Span)>,
    ) -> TokenStream {
        let krate = &self.krate;
        let p = quote!(#krate::__private);
        let ident = self.ident;
        let index = proc_macro2::Literal::usize_unsuffixed(self.field_index(field));
        let trait_ = Ident::new(trait_, Span::call_site());
        let (lo, hi) = span.unwrap_or((Span::call_site(), Span::call_site()));
        let assoc = crate::errors::respan_all(quote!(type Handle =), lo);
        let semi = crate::errors::respan_all(quote!(;), hi);
        let head = crate::errors::respan_all(quote!(#[inline] fn handle(db: &#p::Database) ->), lo);
        let mut block = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, body.clone());
        block.set_span(hi);
        quote! {
            #[automatically_derived]
            impl<__T: ?::core::marker::Sized, __K, const __I: usize> #p::#trait_<#ident>
                for #p::FieldName<__T, #p::Handled<__K, #index>, #ident, __I>
            {
                #assoc #handle_ty #semi
                // The handle's type again, not `Self::Handle`, and the function spanned like it:
                // an error in it (a relation's field that holds no reference) is reported at the
                // field's type, once.
                #head #handle_ty #block
            }
        }
    }

    pub(crate) fn field(&self, rust_name: &str) -> Option<&Field<'_>> {
        self.fields.iter().find(|f| f.rust_name == rust_name)
    }

    /// The message for a name that is not a field, with a suggestion (by Rust or BSON name).
    pub(crate) fn unknown_field_message(&self, got: &str, what: &str) -> String {
        if let Some((_, variants)) = self.partial_fields.iter().find(|(f, _)| f == got) {
            return format!(
                "{what} `{got}` is not a field of every variant (only of {}): an index on the \
                 enum names fields common to all its variants; put `#[index(...)]` on the \
                 variant instead, for an index restricted to its documents",
                variants
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(f) = self.fields.iter().find(|f| f.bson_name == got) {
            return format!(
                "{what} `{got}` is not a field: keys are Rust field names; `{got}` is the \
                 serialized name of `{}`, write `{}`",
                f.rust_name, f.rust_name
            );
        }
        let names: Vec<&str> = self.fields.iter().map(|f| f.rust_name.as_str()).collect();
        format!(
            "{what} `{got}` is not a field of {}{}",
            self.described_as
                .clone()
                .unwrap_or_else(|| format!("`{}`", self.ident)),
            did_you_mean(got, names.iter().copied())
        )
    }
}

/// What went wrong before the fields could be read.
pub(crate) enum Unsupported {
    /// Not a struct with named fields, or generic: no stub can be generated.
    Shape,
    /// serde's own attributes are invalid: serde's derive reports them.
    Serde,
}

/// Reads the input. Errors go to `errors`; `Err` means the model could not be built at all.
pub(crate) fn parse<'a>(
    input: &'a DeriveInput,
    errors: &mut Errors,
) -> Result<Model<'a>, Unsupported> {
    parse_as(input, errors, DeriveKind::Model)
}

/// Which derive reads the input.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeriveKind {
    /// `derive(Model)`: a document with an `_id`, `#[model(...)]` options.
    Model,
    /// `derive(Measurement)`: a measurement of a series; no `_id`, options in `#[bucket(...)]`.
    Measurement,
    /// `derive(Fields)`: any struct with named fields; typed field names only.
    Fields,
}

impl DeriveKind {
    fn name(self) -> &'static str {
        match self {
            DeriveKind::Model => "derive(Model)",
            DeriveKind::Measurement => "derive(Measurement)",
            DeriveKind::Fields => "derive(Fields)",
        }
    }
}

/// [`parse`] for either derive.
pub(crate) fn parse_as<'a>(
    input: &'a DeriveInput,
    errors: &mut Errors,
    derive: DeriveKind,
) -> Result<Model<'a>, Unsupported> {
    check_shape(input, errors, derive)?;
    let attrs = match derive {
        DeriveKind::Model => parse_model_attrs(input, errors),
        // A measurement's options are in `#[bucket(...)]`; `#[model]` is reported there.
        DeriveKind::Measurement | DeriveKind::Fields => ModelAttrs::default(),
    };

    let cx = Ctxt::new();
    let container = ast::Container::from_ast(&cx, input, Derive::Serialize);
    let serde_ok = cx.check().is_ok();
    let Some(container) = container.filter(|_| serde_ok) else {
        return Err(Unsupported::Serde);
    };
    check_container_serde(input, &container, errors);
    let ast::Data::Struct(_, serde_fields) = &container.data else {
        return Err(Unsupported::Shape);
    };

    let fields = fields_of(serde_fields, errors);

    let model = Model {
        ident: &input.ident,
        krate: attrs
            .krate
            .unwrap_or_else(|| syn::parse_quote!(::pattern_runtime)),
        collection: attrs
            .collection
            .unwrap_or_else(|| default_collection(&input.ident.to_string())),
        group: attrs.group,
        fields,
        partial_fields: Vec::new(),
        described_as: None,
        carries: Attrs::of(&input.attrs),
    };
    if derive == DeriveKind::Model {
        check_id(&model, model.has(Attr::ExtendedRef), errors);
    }
    Ok(model)
}

/// The named fields serde reads (of a struct or of an enum's struct variant), with their
/// serialized names; `#[serde(flatten)]` is refused.
pub(crate) fn fields_of<'a>(
    serde_fields: &[ast::Field<'a>],
    errors: &mut Errors,
) -> Vec<Field<'a>> {
    let mut fields = Vec::new();
    for f in serde_fields {
        let Some(ident) = f.original.ident.as_ref() else {
            continue;
        };
        if f.attrs.flatten() {
            let span = serde_key_span(&f.original.attrs, "flatten").unwrap_or_else(|| ident.span());
            errors.at(
                span,
                "`#[serde(flatten)]` is not supported on a model: the flattened keys are not \
                 known at compile time, so indexes and updates could not name them. Nest the \
                 struct as a field instead",
            );
        }
        fields.push(Field {
            ident,
            rust_name: unraw(ident),
            bson_name: f.attrs.name().serialize_name().to_owned(),
            ty: f.ty,
            serialized: !f.attrs.skip_serializing(),
            custom_serializer: f.attrs.serialize_with().is_some(),
            omittable: f.attrs.skip_serializing_if().is_some(),
            validate: crate::validate::of_field(
                &f.original.attrs,
                !f.attrs.skip_serializing(),
                errors,
            ),
            attrs: &f.original.attrs,
            carries: Attrs::of(&f.original.attrs),
        });
    }
    fields
}

pub(crate) fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#")
        .map_or_else(|| s.clone(), str::to_owned)
}

fn check_shape(
    input: &DeriveInput,
    errors: &mut Errors,
    derive: DeriveKind,
) -> Result<(), Unsupported> {
    let name = derive.name();
    let shape_error = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(_) => None,
            Fields::Unnamed(_) => Some((
                input.ident.span(),
                format!(
                    "`{name}` needs a struct with named fields: a tuple struct has no field \
                     names to store as BSON keys"
                ),
            )),
            Fields::Unit => Some((
                input.ident.span(),
                match derive {
                    DeriveKind::Model => "`derive(Model)` needs a struct with named fields, \
                                      including an `_id` field; a unit struct has none"
                        .to_owned(),
                    DeriveKind::Measurement => "`derive(Measurement)` needs a struct with named \
                                            fields: a key, a time and the values"
                        .to_owned(),
                    DeriveKind::Fields => "`derive(Fields)` needs a struct with named fields: a \
                                       unit struct has no field names"
                        .to_owned(),
                },
            )),
        },
        Data::Enum(e) => Some((
            e.enum_token.span,
            format!(
                "`{name}` supports structs with named fields, not enums; for one collection \
                 holding several shapes, derive `Model` on an enum with `#[serde(tag = \"type\")]`"
            ),
        )),
        Data::Union(u) => Some((
            u.union_token.span,
            format!("`{name}` supports structs with named fields, not unions"),
        )),
    };
    if let Some((span, message)) = shape_error {
        errors.at(span, message);
        return Err(Unsupported::Shape);
    }
    if !input.generics.params.is_empty() {
        let message = match derive {
            DeriveKind::Model | DeriveKind::Measurement => format!(
                "`{name}` does not support generic structs: a {} is registered once, for \
                 one collection, with one set of fields. Derive it on a concrete struct",
                if derive == DeriveKind::Model {
                    "model"
                } else {
                    "measurement"
                }
            ),
            DeriveKind::Fields => "`derive(Fields)` does not support generic structs: its \
                                   field names are constants of one concrete type"
                .to_owned(),
        };
        errors.spanned(&input.generics, message);
        return Err(Unsupported::Shape);
    }
    Ok(())
}

/// `#[model(...)]` on the struct or enum.
#[derive(Default)]
pub(crate) struct ModelAttrs {
    pub collection: Option<String>,
    pub group: Option<String>,
    pub krate: Option<syn::Path>,
    /// `derive(Clone, PartialEq)`: extra derives of the types generated for an enum model.
    pub derives: Vec<syn::Path>,
}

const MODEL_KEYS: &[&str] = &["collection", "group", "crate", "derive"];

pub(crate) fn parse_model_attrs(input: &DeriveInput, errors: &mut Errors) -> ModelAttrs {
    let mut out = ModelAttrs::default();
    let mut keys = crate::options::Keys::new("model", MODEL_KEYS);
    for attr in Attr::Model.find(&input.attrs) {
        keys.nested(attr, errors, |key, meta, errors| {
            if key == "derive" {
                let content;
                syn::parenthesized!(content in meta.input);
                let paths =
                    syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated(
                        &content,
                    )?;
                if matches!(input.data, Data::Enum(_)) {
                    out.derives.extend(paths);
                } else {
                    errors.spanned(
                        &meta.path,
                        "`derive(...)` adds derives to the types generated for an enum model \
                         (its variants and common fields); on a struct, derive them on the \
                         struct itself",
                    );
                }
                return Ok(());
            }
            let mut value: syn::Expr = meta.value()?.parse()?;
            // A `$name:literal` of a `macro_rules!` arrives in an invisible group.
            while let syn::Expr::Group(group) = value {
                value = *group.expr;
            }
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = value
            else {
                errors.spanned(
                    &value,
                    format!("`{key}` takes a string: `{key} = \"...\"`"),
                );
                return Ok(());
            };
            match key {
                "collection" => {
                    if let Some(problem) = collection_name_problem(&s.value()) {
                        errors.spanned(&s, problem);
                    }
                    out.collection = Some(s.value());
                }
                "group" => {
                    if let Some(problem) = group_name_problem(&s.value()) {
                        errors.spanned(&s, problem);
                    }
                    out.group = Some(s.value());
                }
                _ => match s.parse::<syn::Path>() {
                    Ok(path) => out.krate = Some(path),
                    Err(_) => errors.spanned(
                        &s,
                        "`crate` takes a path to the runtime crate: `crate = \"::pattern_runtime\"`",
                    ),
                },
            }
            Ok(())
        });
    }
    out
}

/// Why `name` cannot be a group name, if it cannot.
pub(crate) fn group_name_problem(name: &str) -> Option<&'static str> {
    name.trim()
        .is_empty()
        .then_some("a group needs a name: `group = \"shop\"`")
}

pub(crate) fn collection_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a collection name cannot be empty")
    } else if name.contains('$') || name.contains('\0') {
        Some("a collection name cannot contain `$` or a NUL character")
    } else if name.starts_with("system.") {
        Some("`system.` collections are reserved by the server")
    } else {
        None
    }
}

/// `OrderLine` -> `order_lines`, `Category` -> `categories`, `Address` -> `addresses`.
pub(crate) fn default_collection(type_name: &str) -> String {
    let mut snake = String::new();
    for (i, c) in type_name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                snake.push('_');
            }
            snake.extend(c.to_lowercase());
        } else {
            snake.push(c);
        }
    }
    let consonant_y = snake.len() > 1
        && snake.ends_with('y')
        && !snake[..snake.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        snake.pop();
        snake.push_str("ies");
    } else if snake.ends_with(['s', 'x', 'z']) || snake.ends_with("ch") || snake.ends_with("sh") {
        snake.push_str("es");
    } else {
        snake.push('s');
    }
    snake
}

/// Container-level serde attributes that change the stored shape in ways the derive cannot see.
pub(crate) fn check_container_serde(
    input: &DeriveInput,
    container: &ast::Container<'_>,
    errors: &mut Errors,
) {
    let a = &container.attrs;
    let refused = [
        (
            a.transparent(),
            "transparent",
            "stores the inner value instead of a document",
        ),
        (
            a.type_into().is_some(),
            "into",
            "stores another type's shape",
        ),
        (
            a.type_from().is_some(),
            "from",
            "reads another type's shape",
        ),
        (
            a.type_try_from().is_some(),
            "try_from",
            "reads another type's shape",
        ),
        (a.remote().is_some(), "remote", "describes another type"),
    ];
    for (present, key, why) in refused {
        if present {
            let span = serde_key_span(&input.attrs, key).unwrap_or_else(|| input.ident.span());
            errors.at(
                span,
                format!(
                    "`#[serde({key})]` is not supported on a model: it {why}, so the field names \
                     the derive reads are not the stored keys"
                ),
            );
        }
    }
}

/// The span of `key` inside `#[serde(...)]` attributes.
pub(crate) fn serde_key_span(attrs: &[syn::Attribute], key: &str) -> Option<Span> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if found.is_none() && meta.path.is_ident(key) {
                found = Some(
                    meta.path
                        .get_ident()
                        .map_or_else(Span::call_site, Ident::span),
                );
            }
            // Skip any value: `= expr` or a parenthesised list.
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|_| Ok(()));
            }
            Ok(())
        });
    }
    found
}

/// Whether `fields` have one serialized as `_id`; one that is never serialized is reported.
pub(crate) fn has_id(fields: &[Field<'_>], errors: &mut Errors) -> bool {
    match fields.iter().find(|f| f.bson_name == "_id") {
        Some(f) if !f.serialized => {
            errors.spanned(
                f.ident,
                "the `_id` field is never serialized (`#[serde(skip)]`): a model's `_id` must be \
                 stored; use `skip_serializing_if = \"Option::is_none\"` to let the server assign \
                 it",
            );
            true
        }
        Some(_) => true,
        None => false,
    }
}

fn check_id(model: &Model<'_>, referenced: bool, errors: &mut Errors) {
    if has_id(&model.fields, errors) {
        return;
    }
    errors.spanned(
        model.ident,
        format!(
            "`{}` has no field serialized as `_id`{}: add `#[serde(rename = \"_id\")]` to its \
             id field (e.g. `#[serde(rename = \"_id\")] id: bson::oid::ObjectId`)",
            model.ident,
            if referenced {
                " (an extended reference copies its source's `_id`: the copies are found by it)"
            } else {
                ""
            }
        ),
    );
}

/// The source field's serde attributes without `rename` and `alias` (the copy is renamed
/// explicitly to the source's serialized name): `with`, `skip_serializing_if`, `default`, ...
/// keep the copy's stored form equal to the source's.
pub(crate) fn serde_attrs_without_names(attrs: &[syn::Attribute]) -> Vec<TokenStream> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .filter_map(|a| {
            let metas = a
                .parse_args_with(Punctuated::<syn::Meta, Token![,]>::parse_terminated)
                .ok()?;
            let kept: Vec<&syn::Meta> = metas
                .iter()
                .filter(|m| !(m.path().is_ident("rename") || m.path().is_ident("alias")))
                .collect();
            (!kept.is_empty()).then(|| quote!(#[serde(#(#kept),*)]))
        })
        .collect()
}

/// Parses a string literal as the named kind of value.
pub(crate) fn lit_str(input: syn::parse::ParseStream<'_>, what: &str) -> syn::Result<LitStr> {
    input
        .parse::<LitStr>()
        .map_err(|e| syn::Error::new(e.span(), format!("{what} takes a string literal")))
}

/// The `(..)` of a field attribute whose pattern stores the field: an error (and `None`) when the
/// field is not serialized (`#[serde(skip)]`) or the attribute has no list, `help` saying what to
/// write. `name` is the attribute's name, `what` the stored thing (`an approximate counter`).
pub(crate) fn stored_field_list<'a>(
    field: &Field<'_>,
    attr: &'a syn::Attribute,
    name: &str,
    what: &str,
    help: &str,
    errors: &mut Errors,
) -> Option<&'a syn::MetaList> {
    if !field.serialized {
        errors.spanned(
            attr,
            format!("{what} is stored: remove `#[serde(skip)]` or `#[{name}]`"),
        );
        return None;
    }
    let syn::Meta::List(list) = &attr.meta else {
        errors.spanned(attr, help);
        return None;
    };
    Some(list)
}

/// A stored field of the model named in an attribute, or an error at the name.
pub(crate) fn stored_field<'a>(
    model: &'a Model<'a>,
    ident: &Ident,
    what: &str,
    errors: &mut Errors,
) -> Option<&'a Field<'a>> {
    let name = unraw(ident);
    let Some(field) = model.field(&name) else {
        errors.spanned(ident, model.unknown_field_message(&name, what));
        return None;
    };
    if !field.serialized {
        errors.spanned(
            ident,
            format!("{what} `{name}` is stored: remove its `#[serde(skip)]`"),
        );
        return None;
    }
    Some(field)
}

/// [`Model::id_type`] of `fields`.
pub(crate) fn id_type<'f, 'a: 'f>(
    fields: impl IntoIterator<Item = &'f Field<'a>>,
    p: &TokenStream,
) -> TokenStream {
    fields
        .into_iter()
        .find(|f| f.bson_name == "_id" && f.serialized && !f.custom_serializer)
        .map_or_else(|| quote!(#p::Bson), |f| f.ty.to_token_stream())
}

#[cfg(test)]
mod tests {
    use super::default_collection;

    #[test]
    fn default_collection_names() {
        assert_eq!(default_collection("Product"), "products");
        assert_eq!(default_collection("OrderLine"), "order_lines");
        assert_eq!(default_collection("Category"), "categories");
        assert_eq!(default_collection("Day"), "days");
        assert_eq!(default_collection("Address"), "addresses");
        assert_eq!(default_collection("Batch"), "batches");
    }
}
