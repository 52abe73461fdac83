//! `#[preallocated(resource = room_id, slot = date, holder = booked_by)]` (and `bitmap =
//! half_hours, sub_slots = 48`) on a slot model: the `SlotSpec` with its unique `{resource,
//! slot}` index, `Preallocated`, and so `Model::collection(&db).slots()`. The options are checked here; the
//! fields' types by constants of generated code (the runtime's `preallocation::slot_probe`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{DeriveInput, Ident, LitInt, Token};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::{fail_with, Errors};
use crate::schema::{Pattern, PatternDef};

/// The preallocation pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input: &DeriveInput, model, errors| {
        refuse_on_fields(input, errors);
        let mut attrs = Attr::Preallocated.find(&input.attrs);
        let grid = attrs.next().and_then(|attr| {
            // Refused on a `#[versioned]` model (`combinations.rs`).
            if crate::combinations::model_refuses(input, model, Attr::Preallocated) {
                return None;
            }
            parse(attr, model, errors)
        });
        for extra in attrs {
            errors.spanned(extra, "one `#[preallocated(..)]` per model");
        }
        Box::new(Grids { grid })
    },
    fields: None,
};

const HELP: &str = "`#[preallocated(resource = room_id, slot = date, holder = booked_by)]`: one \
                    document per resource and slot, `booked_by: Option<..>` `None` while free; \
                    or `bitmap = half_hours, sub_slots = 48` for an integer whose bits are the \
                    slot's sub-slots";

const OPTIONS: &[&str] = &["resource", "slot", "holder", "bitmap", "sub_slots"];

fn refuse_on_fields(input: &DeriveInput, errors: &mut Errors) {
    let syn::Data::Struct(s) = &input.data else {
        return;
    };
    for attr in s.fields.iter().flat_map(|f| &f.attrs) {
        if Attr::Preallocated.is(attr) {
            errors.spanned(
                attr,
                format!("`#[preallocated(..)]` goes on the struct, naming its fields: {HELP}"),
            );
        }
    }
}

/// A field named in the attribute, by the span of its name there.
struct Named {
    ident: Ident,
    bson_name: String,
    /// The field's type, when it is stored as that type's own serialization.
    stored_ty: Option<syn::Type>,
}

struct Grid {
    resource: Named,
    slot: Named,
    holder: Option<Named>,
    bitmap: Option<(Named, u32, Span)>,
}

struct Grids {
    grid: Option<Grid>,
}

fn named(model: &Model<'_>, ident: &Ident, what: &str, errors: &mut Errors) -> Option<Named> {
    let field = crate::ast::stored_field(model, ident, what, errors)?;
    Some(Named {
        ident: Ident::new(&crate::ast::unraw(ident), ident.span()),
        bson_name: field.bson_name.clone(),
        stored_ty: (!field.custom_serializer).then(|| field.ty.clone()),
    })
}

fn parse(attr: &syn::Attribute, model: &Model<'_>, errors: &mut Errors) -> Option<Grid> {
    let syn::Meta::List(list) = &attr.meta else {
        errors.spanned(attr, HELP);
        return None;
    };
    let mut fields: Vec<(Ident, Ident)> = Vec::new();
    let mut sub_slots: Option<(u32, Span)> = None;
    let before = errors.count();
    let clean = crate::options::parse(
        list.tokens.clone(),
        "preallocated",
        OPTIONS,
        errors,
        |key, input, errors| {
            input.parse::<Token![=]>()?;
            if key == "sub_slots" {
                let lit: LitInt = input.parse()?;
                match lit.base10_parse::<u32>() {
                    Ok(n) if n > 0 => sub_slots = Some((n, lit.span())),
                    _ => errors.spanned(
                        &lit,
                        "`sub_slots` is how many sub-slots the bitmap has: a whole number above 0",
                    ),
                }
            } else {
                fields.push((key.clone(), Ident::parse_any(input)?));
            }
            Ok(())
        },
    );
    if !clean {
        return None;
    }
    let had_errors = errors.count() > before;
    let value = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mut missing = false;
    for required in ["resource", "slot"] {
        if value(required).is_none() {
            errors.spanned(
                attr.path(),
                format!("`#[preallocated]` needs `{required} = ..`; {HELP}"),
            );
            missing = true;
        }
    }
    match (value("holder"), value("bitmap")) {
        (None, None) => {
            errors.spanned(
                attr.path(),
                format!("`#[preallocated]` needs `holder = ..` or `bitmap = ..`; {HELP}"),
            );
            missing = true;
        }
        (Some(_), Some(b)) => {
            errors.spanned(
                b,
                "a slot is booked whole (`holder`) or by sub-slots (`bitmap`), not both: a \
                 booking of the whole slot would not see the sub-slots booked, nor the reverse. \
                 Keep one, or model the two grains as two slot models",
            );
            missing = true;
        }
        _ => {}
    }
    match (value("bitmap"), sub_slots) {
        (Some(b), None) if !had_errors => {
            errors.spanned(
                b,
                "a bitmap needs `sub_slots = ..`: how many sub-slots it has (`sub_slots = 48` \
                 for half hours)",
            );
            missing = true;
        }
        (None, Some((_, span))) => {
            errors.at(
                span,
                "`sub_slots` counts the bits of a bitmap: add `bitmap = ..`",
            );
            missing = true;
        }
        _ => {}
    }
    let resource = value("resource").and_then(|i| named(model, i, "the resource field", errors));
    let slot = value("slot").and_then(|i| named(model, i, "the slot field", errors));
    let holder = value("holder").map(|i| named(model, i, "the holder field", errors));
    let bitmap = value("bitmap").map(|i| named(model, i, "the bitmap field", errors));
    if missing || had_errors {
        return None;
    }
    let holder = match holder {
        Some(None) => return None,
        Some(Some(h)) => Some(h),
        None => None,
    };
    let bitmap = match (bitmap, sub_slots) {
        (Some(None), _) => return None,
        (Some(Some(b)), Some((n, span))) => Some((b, n, span)),
        _ => None,
    };
    let (resource, slot) = (resource?, slot?);
    let names: Vec<&Named> = [
        Some(&resource),
        Some(&slot),
        holder.as_ref(),
        bitmap.as_ref().map(|b| &b.0),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (i, a) in names.iter().enumerate() {
        if names[..i].iter().any(|b| b.bson_name == a.bson_name) {
            errors.spanned(
                &a.ident,
                "the resource, the slot, the holder and the bitmap are different fields",
            );
            return None;
        }
    }
    Some(Grid {
        resource,
        slot,
        holder,
        bitmap,
    })
}

impl Grids {
    fn expand(&self, model: &Model<'_>, with_checks: bool) -> TokenStream {
        let Some(grid) = &self.grid else {
            return TokenStream::new();
        };
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let name = ident.to_string();
        let collection = &model.collection;
        let field = |n: &Named| {
            let f = &n.ident;
            let span = f.span();
            let model_ident = Ident::new(&name, span);
            quote_spanned!(span=> #model_ident::FIELDS.#f)
        };
        let mut checks = TokenStream::new();
        if with_checks {
            for (n, what) in [(&grid.resource, "resource"), (&grid.slot, "slot")] {
                let span = n.ident.span();
                let f = field(n);
                let message = format!(
                    "`{}` names the {what}: make it a `String`, an `i32`, an `i64`, a \
                     `bson::oid::ObjectId` or a `bson::DateTime`",
                    n.ident
                );
                let check = quote_spanned! {span=> || {
                    #[allow(unused_imports)]
                    use #p::{ProbeOtherSlot as _, ProbeSlotKey as _};
                    (&&#p::SlotProbe::of(#f)).key()
                }};
                checks.extend(fail_with(quote!(#p::unless(#check, #message)), span, span));
            }
            if let Some(h) = &grid.holder {
                let span = h.ident.span();
                let message = format!(
                    "`{}` holds who booked the slot: make it an `Option` (`None` while free)",
                    h.ident
                );
                let (_, fail) =
                    crate::errors::checked_name(&p, field(h), "optional", &message, span);
                checks.extend(fail);
            }
        }
        let (bitmap, sub_slots, wide) = match &grid.bitmap {
            Some((b, n, n_span)) => {
                let span = b.ident.span();
                let f = field(b);
                let bits = quote_spanned! {span=> #p::bits_of(|| {
                    #[allow(unused_imports)]
                    use #p::{ProbeBits32 as _, ProbeBits64 as _, ProbeOtherSlot as _};
                    (&&&#p::SlotProbe::of(#f)).bits()
                })};
                if with_checks {
                    let not_int = format!(
                        "`{}` is the bitmap of the slot's sub-slots: make it an `i32` (up to 31 \
                         sub-slots) or an `i64` (up to 63)",
                        b.ident
                    );
                    checks.extend(fail_with(
                        quote! {
                            if #bits == 0 {
                                ::core::option::Option::Some(#not_int)
                            } else {
                                ::core::option::Option::None
                            }
                        },
                        span,
                        span,
                    ));
                    let too_many = format!(
                        "{n} sub-slots do not fit in `{}`: an `i32` holds 31, an `i64` 63",
                        b.ident
                    );
                    checks.extend(fail_with(
                        quote! {
                            if #bits != 0 && #n > #bits {
                                ::core::option::Option::Some(#too_many)
                            } else {
                                ::core::option::Option::None
                            }
                        },
                        *n_span,
                        *n_span,
                    ));
                }
                let name = &b.bson_name;
                (
                    quote!(::core::option::Option::Some(#name)),
                    quote!(#n),
                    quote!(#bits == 63),
                )
            }
            None => (
                quote!(::core::option::Option::None),
                quote!(0),
                quote!(false),
            ),
        };
        let holder = match &grid.holder {
            Some(h) => {
                let name = &h.bson_name;
                quote!(::core::option::Option::Some(#name))
            }
            None => quote!(::core::option::Option::None),
        };
        let (resource, slot) = (&grid.resource.bson_name, &grid.slot.bson_name);
        let stored = |n: &Named| {
            n.stored_ty
                .as_ref()
                .map_or_else(|| quote!(#p::Bson), |t| quote!(#t))
        };
        let (resource_ty, slot_ty) = (stored(&grid.resource), stored(&grid.slot));
        let index =
            crate::index::plain_spec(&p, &[resource.as_str(), slot.as_str()], None, true, None);
        quote! {
            static __SLOTS: #p::SlotSpec = #p::SlotSpec::from_parts(#p::SlotParts {
                model: #name,
                collection: #collection,
                resource: #resource,
                slot: #slot,
                holder: #holder,
                bitmap: #bitmap,
                sub_slots: #sub_slots,
                wide: #wide,
                index: #index,
            });
            #checks

            #[automatically_derived]
            impl #p::Preallocated for #ident {
                const SLOTS: &'static #p::SlotSpec = &__SLOTS;
                type Resource = #resource_ty;
                type Slot = #slot_ty;
            }
        }
    }
}

impl Pattern for Grids {
    /// The grid's unique `{resource, slot}`.
    fn own_indexes(&self) -> Vec<Vec<(String, i32)>> {
        self.grid
            .iter()
            .map(|g| {
                vec![
                    (g.resource.bson_name.clone(), 1),
                    (g.slot.bson_name.clone(), 1),
                ]
            })
            .collect()
    }

    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        let grid = self.grid.as_ref()?;
        let named = |n: &Named| n.ident == field.ident.unraw();
        (grid.holder.as_ref().is_some_and(named)
            || grid.bitmap.as_ref().is_some_and(|b| named(&b.0)))
        .then_some("SlotBooking")
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        self.expand(model, true)
    }

    fn specs(&self) -> Vec<TokenStream> {
        let statics = self
            .grid
            .as_ref()
            .map(|_| Ident::new("__SLOTS", Span::call_site()));
        crate::schema::spec_refs(statics.into_iter())
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        self.expand(model, false)
    }
}
