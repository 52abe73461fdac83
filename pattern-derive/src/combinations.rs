//! The attributes that cannot go together, written once: two attributes on one field, or an
//! attribute on a model whose struct carries another (`#[versioned]`, `#[bucket]`). Each entry
//! of [`RULES`] is the two attributes, where they are, where the error points and the message
//! with its fix. [`check`] reports them before any pattern reads its options (so the model's
//! other errors still show), and a pattern whose attribute a rule refuses reads nothing of it
//! ([`field_refuses`], [`model_refuses`]): nothing else is said of it.
//!
//! A rule may be about one form of an attribute ([`Form`]: a `#[relation]` with `inverse`): the
//! form is seen in the attribute's tokens, before any pattern reads them. Refusals that depend
//! on more than that stay in their pattern:
//! - `subset`: a `#[summary]` naming a field that is not a `#[subset]`, or another model's
//!   field (`by = ..`: that is `#[computed]`);
//! - `computed`: a `#[computed]` without `by` (a subset's summary is `#[summary]`);
//! - `extended_ref`: an `#[approximate]` counter listed among a reference's copied fields
//!   (unless `snapshot`), a `#[versioned]` source's copies kept live;
//! - `relation`: `inverse` together with `#[extended_ref]` on the same field (the message points
//!   at `inverse`'s value and depends on the relation's other options);
//! - `tree`: a holder's `copy` field whose `#[extended_ref]` does not `propagate`;
//! - `polymorphic`: the attributes an enum model refuses (a shape, not a combination);
//! - `bucket`: the time field named among the key fields (values of `#[bucket]`).

use proc_macro2::Span;
use syn::DeriveInput;

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::Errors;

/// Where the two attributes of a rule are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Both on one field.
    SameField,
    /// `with` on the struct, `refused` on the struct too.
    Struct,
    /// `with` on the struct, `refused` on any of its fields.
    Fields,
}

/// Which form of the refused attribute the rule is about.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Any.
    Any,
    /// `#[relation(inverse = ..)]`: a two-way relation.
    TwoWay,
}

/// Where the error points.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// The refused attribute, whole.
    Attribute,
    /// The refused attribute's name.
    Name,
    /// The value of the refused relation's `inverse = ..`.
    InverseValue,
}

/// One refused combination.
struct Rule {
    /// The attribute the other cannot go with.
    with: Attr,
    /// The attribute refused beside it, where the error points.
    refused: Attr,
    form: Form,
    place: Place,
    at: At,
    /// The pattern that reads nothing of its attribute when the rule applies, so that nothing
    /// else is said of it.
    stands_down: Option<Attr>,
    /// Why, and the fix.
    message: &'static str,
}

/// Every refused combination.
const RULES: &[Rule] = &[
    // On one field.
    Rule {
        with: Attr::Outlier,
        refused: Attr::Subset,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Outlier),
        message: "a field cannot be both `#[subset]` and `#[outlier]`: a subset keeps the first \
                  items and the full list elsewhere, an outlier array keeps every item, \
                  overflowing past its limit; choose one",
    },
    // A two-way relation's array (`#[relation(inverse = ..)]`) lists every child in the owner:
    // `assign` writes it, the outlier's pushes would move entries to overflow documents that
    // `assign` and the relation's check never read.
    Rule {
        with: Attr::Outlier,
        refused: Attr::Relation,
        form: Form::TwoWay,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Outlier),
        message: "a two-way relation's array cannot be an `#[outlier]` array: `assign` keeps \
                  every child listed in the owner document, and overflow documents would hide \
                  some from it. For owners with many children, drop `inverse` (the children's \
                  own field is the relation, queried with `#[relation(parent)]`), or keep the \
                  outlier array on another field",
    },
    Rule {
        with: Attr::Summary,
        refused: Attr::Subset,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Summary),
        message: "a `#[subset]` field cannot also be a `#[summary]`: a summary field keeps a \
                  number (declare it on a field of its own beside the subset)",
    },
    Rule {
        with: Attr::Computed,
        refused: Attr::Subset,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Computed),
        message: "a `#[subset]` field cannot also be `#[computed]`: a computed field keeps a \
                  number",
    },
    // A field keeps one value: a subset's summary or a value computed from another model.
    Rule {
        with: Attr::Summary,
        refused: Attr::Computed,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Summary),
        message: "a `#[summary]` field cannot also be `#[computed]`: a field keeps one value; \
                  declare another field for the other",
    },
    Rule {
        with: Attr::Approximate,
        refused: Attr::Summary,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Approximate),
        message: "an `#[approximate]` counter cannot also be a `#[summary]`: its value is \
                  written by the counter alone",
    },
    Rule {
        with: Attr::Approximate,
        refused: Attr::Computed,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Approximate),
        message: "an `#[approximate]` counter cannot also be `#[computed]`: its value is written \
                  by the counter alone",
    },
    Rule {
        with: Attr::Approximate,
        refused: Attr::Subset,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Approximate),
        message: "an `#[approximate]` counter cannot also be `#[subset]`: its value is written \
                  by the counter alone",
    },
    Rule {
        with: Attr::Approximate,
        refused: Attr::Version,
        form: Form::Any,
        place: Place::SameField,
        at: At::Attribute,
        stands_down: Some(Attr::Approximate),
        message: "an `#[approximate]` counter cannot also be `#[version]`: its value is written \
                  by the counter alone",
    },
    // On a `#[versioned]` model: the pattern's writes would change the document without a new
    // version or a copy of the old one.
    Rule {
        with: Attr::Versioned,
        refused: Attr::Attribute,
        form: Form::Any,
        place: Place::Fields,
        at: At::Name,
        stands_down: None,
        message: "`#[attribute]` is not supported on a `#[versioned]` model yet: `set` and \
                  `unset` would change the document without a new version or a copy of the old \
                  one. Change the items through the versioned model's `modify`, without \
                  `#[attribute]` (declare the index with `#[index(keys(..))]` and the array's \
                  bound with `#[bounded(n)]`)",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::Subset,
        form: Form::Any,
        place: Place::Fields,
        at: At::Name,
        stands_down: None,
        message: "`#[subset]` is not supported on a `#[versioned]` model yet: its pushes and \
                  removals would change the document without a new version or a copy of the old \
                  one, and the next `save` would undo them. Keep the subset on a model of its \
                  own (the versioned model's fields in a document it references), or change the \
                  array through the versioned model's `modify`",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::Computed,
        form: Form::Any,
        place: Place::Fields,
        at: At::Name,
        stands_down: None,
        message: "a field computed from another model is not supported on a `#[versioned]` \
                  model yet: the writes of its sources would change the document without a new \
                  version or a copy of the old one. Keep the computed values in a model of \
                  their own",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::Approximate,
        form: Form::Any,
        place: Place::Fields,
        at: At::Name,
        stands_down: None,
        message: "`#[approximate]` is not supported on a `#[versioned]` model yet: its counters \
                  would change the document without a new version or a copy of the old one. \
                  Count in a model of its own",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::Outlier,
        form: Form::Any,
        place: Place::Fields,
        at: At::Name,
        stands_down: None,
        message: "`#[outlier]` is not supported on a `#[versioned]` model yet: its pushes would \
                  change the document without a new version or a copy of the old one. Keep the \
                  array in a model of its own, or change it through the versioned model's \
                  `modify`",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::Relation,
        form: Form::TwoWay,
        place: Place::Fields,
        at: At::InverseValue,
        stands_down: None,
        message: "a two-way relation (`inverse = ..`) is not supported on a `#[versioned]` \
                  model yet: `assign` and `repair` would change its documents without a new \
                  version or a copy of the old one. Keep the reference loadable with \
                  `#[relation]` and change both sides through the versioned model's `modify`",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::Tree,
        form: Form::Any,
        place: Place::Struct,
        at: At::Name,
        stands_down: Some(Attr::Tree),
        message: "`#[tree]` is not supported on a `#[versioned]` model: a move rewrites the \
                  ancestors of a whole subtree at once, without a new version or a copy of each \
                  old one. Keep the nodes' place in the tree (`parent`, `ancestors`) on a \
                  `#[tree]` model without `#[versioned]`, and what needs revisions in a \
                  `#[versioned]` model of its own, one document per node, holding the node's key",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::InTree,
        form: Form::Any,
        place: Place::Struct,
        at: At::Name,
        stands_down: Some(Attr::InTree),
        message: "`#[in_tree]` is not supported on a `#[versioned]` model: a move of its node \
                  rewrites its path without a new version or a copy of the old one. Keep the \
                  node's key in a plain field (read the path with the tree's `path`), or place \
                  an unversioned model in the tree, holding the versioned document's `_id`",
    },
    Rule {
        with: Attr::Versioned,
        refused: Attr::Preallocated,
        form: Form::Any,
        place: Place::Struct,
        at: At::Name,
        stands_down: Some(Attr::Preallocated),
        message: "`#[preallocated]` is not supported on a `#[versioned]` model: a booking is one \
                  conditional update, which would change the slot without a new version or a \
                  copy of the old one. Keep the grid unversioned, and record each booking in a \
                  `#[versioned]` model of its own, written with the slot in one transaction \
                  (`Slots::in_transaction`)",
    },
    // On a measurement (`#[bucket]`, the options of `derive(Measurement)`).
    Rule {
        with: Attr::Bucket,
        refused: Attr::Versioned,
        form: Form::Any,
        place: Place::Struct,
        at: At::Attribute,
        stands_down: None,
        message: "a measurement cannot be `#[versioned]`: measurements are appended to bucket \
                  documents shared by many writers, which have no versions of their own. Keep \
                  what needs revisions (a device's settings) in a `#[versioned]` model of its own",
    },
    Rule {
        with: Attr::Bucket,
        refused: Attr::Version,
        form: Form::Any,
        place: Place::Fields,
        at: At::Attribute,
        stands_down: None,
        message: "`#[version]` belongs to a `#[versioned]` model; a measurement has no version",
    },
];

impl Form {
    /// Whether `attr` (an attribute of the rule's refused name) has this form.
    fn matches(self, attr: &syn::Attribute) -> bool {
        match self {
            Form::Any => true,
            Form::TwoWay => inverse_value(attr).is_some(),
        }
    }
}

impl Rule {
    /// The attributes this rule refuses on `field` (for a rule of one field).
    fn on_field<'f>(&self, field: &'f Field<'_>) -> impl Iterator<Item = &'f syn::Attribute> {
        let applies = self.place == Place::SameField && field.has(self.with);
        let form = self.form;
        field
            .attrs_of(self.refused)
            .filter(move |a| applies && form.matches(a))
    }

    /// The attributes this rule refuses on the model (for a rule of the struct).
    fn on_model<'m>(
        &self,
        input: &'m DeriveInput,
        model: &'m Model<'m>,
    ) -> Vec<&'m syn::Attribute> {
        if self.place == Place::SameField || !model.has(self.with) {
            return Vec::new();
        }
        let attrs: Vec<&syn::Attribute> = if self.place == Place::Struct {
            self.refused.find(&input.attrs).collect()
        } else {
            model
                .fields
                .iter()
                .flat_map(|f| f.attrs_of(self.refused))
                .collect()
        };
        attrs.into_iter().filter(|a| self.form.matches(a)).collect()
    }

    fn report(&self, attr: &syn::Attribute, errors: &mut Errors) {
        match self.at {
            At::Attribute => errors.spanned(attr, self.message),
            At::Name => errors.at(name_span(attr), self.message),
            At::InverseValue => errors.at(
                inverse_value(attr).unwrap_or_else(|| name_span(attr)),
                self.message,
            ),
        }
    }
}

/// Reports every refused combination on the model (`input` is the struct it was read from).
pub(crate) fn check(input: &DeriveInput, model: &Model<'_>, errors: &mut Errors) {
    for rule in RULES {
        for attr in rule.on_model(input, model) {
            rule.report(attr, errors);
        }
    }
    for field in &model.fields {
        for rule in RULES {
            for attr in rule.on_field(field) {
                rule.report(attr, errors);
            }
        }
    }
}

/// Whether a rule refused `attr` on `field`: its pattern then reads nothing of it.
pub(crate) fn field_refuses(field: &Field<'_>, attr: Attr) -> bool {
    RULES
        .iter()
        .filter(|r| r.stands_down == Some(attr))
        .any(|r| r.on_field(field).next().is_some())
}

/// Whether a rule refused the struct's `attr`: its pattern then reads nothing of it.
pub(crate) fn model_refuses(input: &DeriveInput, model: &Model<'_>, attr: Attr) -> bool {
    RULES
        .iter()
        .filter(|r| r.stands_down == Some(attr) && r.place != Place::SameField)
        .any(|r| !r.on_model(input, model).is_empty())
}

/// The attribute's name.
fn name_span(attr: &syn::Attribute) -> Span {
    attr.path()
        .segments
        .first()
        .map_or_else(Span::call_site, |s| s.ident.span())
}

/// The value of `inverse = ..` in a `#[relation(..)]`.
fn inverse_value(attr: &syn::Attribute) -> Option<Span> {
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    let tokens: Vec<proc_macro2::TokenTree> = list.tokens.clone().into_iter().collect();
    tokens.windows(3).find_map(|w| match w {
        [proc_macro2::TokenTree::Ident(key), proc_macro2::TokenTree::Punct(eq), value]
            if key == "inverse" && eq.as_char() == '=' =>
        {
            Some(value.span())
        }
        _ => None,
    })
}
