//! The generated `PreallocSpec`, its index and the constants that check the named fields' types.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::ast::Model;
use crate::errors::fail_with;

use super::*;

impl Grids {
    pub(super) fn expand(&self, model: &Model<'_>, with_checks: bool) -> TokenStream {
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
