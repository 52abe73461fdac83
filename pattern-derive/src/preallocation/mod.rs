//! `#[preallocated(resource = room_id, slot = date, holder = booked_by)]` (and `bitmap =
//! half_hours, sub_slots = 48`) on a slot model: the `SlotSpec` with its unique `{resource,
//! slot}` index, `Preallocated`, and so `Model::collection(&db).slots()`. The options are checked here; the
//! fields' types by constants of generated code (the runtime's `preallocation::slot_probe`).
//!
//! `parse.rs` reads the attributes through `options.rs`; `validate.rs` checks what was read against
//! the model; `expand.rs` generates the code.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::{DeriveInput, Ident};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;
mod validate;

const HELP: &str = "`#[preallocated(resource = room_id, slot = date, holder = booked_by)]`: one \
                    document per resource and slot, `booked_by: Option<..>` `None` while free; \
                    or `bitmap = half_hours, sub_slots = 48` for an integer whose bits are the \
                    slot's sub-slots";

use parse::parse;
use validate::refuse_on_fields;

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
