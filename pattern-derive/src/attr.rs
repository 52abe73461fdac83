//! The toolkit's attributes, named once. A pattern asks which attributes a field or the input
//! carries through [`Attrs`] (`field.has(Attr::Subset)`, computed once in `ast.rs`) and finds
//! them with [`Attr::find`]; no pattern matches another's attribute by its name string.
//!
//! `lib.rs`'s `proc_macro_derive(.., attributes(..))` lists are literals and cannot be generated
//! from [`Attr::ALL`]: a test below reads `lib.rs` and checks that both agree.

/// One attribute of the toolkit's derives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attr {
    Model,
    Index,
    ShardKey,
    Subset,
    Summary,
    Computed,
    Approximate,
    Outlier,
    Versioned,
    Version,
    ExtendedRef,
    Attribute,
    Relation,
    Tree,
    InTree,
    Preallocated,
    Bounded,
    SchemaVersion,
    JsonSchema,
    Bucket,
    Projection,
}

impl Attr {
    /// Every attribute, in the order of [`Attr`].
    pub(crate) const ALL: [Attr; 21] = [
        Attr::Model,
        Attr::Index,
        Attr::ShardKey,
        Attr::Subset,
        Attr::Summary,
        Attr::Computed,
        Attr::Approximate,
        Attr::Outlier,
        Attr::Versioned,
        Attr::Version,
        Attr::ExtendedRef,
        Attr::Attribute,
        Attr::Relation,
        Attr::Tree,
        Attr::InTree,
        Attr::Preallocated,
        Attr::Bounded,
        Attr::SchemaVersion,
        Attr::JsonSchema,
        Attr::Bucket,
        Attr::Projection,
    ];

    /// The attribute's name, as the user writes it: the one place it is spelled.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Attr::Model => "model",
            Attr::Index => "index",
            Attr::ShardKey => "shard_key",
            Attr::Subset => "subset",
            Attr::Summary => "summary",
            Attr::Computed => "computed",
            Attr::Approximate => "approximate",
            Attr::Outlier => "outlier",
            Attr::Versioned => "versioned",
            Attr::Version => "version",
            Attr::ExtendedRef => "extended_ref",
            Attr::Attribute => "attribute",
            Attr::Relation => "relation",
            Attr::Tree => "tree",
            Attr::InTree => "in_tree",
            Attr::Preallocated => "preallocated",
            Attr::Bounded => "bounded",
            Attr::SchemaVersion => "schema_version",
            Attr::JsonSchema => "json_schema",
            Attr::Bucket => "bucket",
            Attr::Projection => "projection",
        }
    }

    /// Which toolkit attribute `attr` is, if any.
    pub(crate) fn of(attr: &syn::Attribute) -> Option<Attr> {
        let ident = attr.path().get_ident()?;
        Attr::ALL.into_iter().find(|a| ident == a.name())
    }

    /// Whether `attr` is this attribute.
    pub(crate) fn is(self, attr: &syn::Attribute) -> bool {
        attr.path().is_ident(self.name())
    }

    /// The attributes of this name among `attrs`, in order.
    pub(crate) fn find(self, attrs: &[syn::Attribute]) -> impl Iterator<Item = &syn::Attribute> {
        attrs.iter().filter(move |a| self.is(a))
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// Which toolkit attributes an item (a field, or the input itself) carries.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Attrs(u32);

impl Attrs {
    /// No attribute: a field the derive generates.
    pub(crate) const NONE: Attrs = Attrs(0);

    /// The toolkit attributes among `attrs`.
    pub(crate) fn of(attrs: &[syn::Attribute]) -> Attrs {
        Attrs(
            attrs
                .iter()
                .filter_map(Attr::of)
                .fold(0, |set, a| set | a.bit()),
        )
    }

    pub(crate) fn has(self, attr: Attr) -> bool {
        self.0 & attr.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::{Attr, Attrs};

    /// The names inside `attributes(..)` of the `proc_macro_derive` of `derive` in `lib.rs`.
    fn listed(derive: &str) -> Vec<String> {
        let lib = include_str!("lib.rs");
        let found = lib.split("#[proc_macro_derive(").skip(1).find(|rest| {
            rest.trim_start()
                .strip_prefix(derive)
                .is_some_and(|r| r.starts_with([',', ')']))
        });
        let Some(rest) = found else {
            panic!("no proc_macro_derive({derive}) in lib.rs");
        };
        let head = &rest[..rest.find("]\n").unwrap_or(rest.len())];
        let Some(open) = head.find("attributes(") else {
            return Vec::new();
        };
        let list = &head[open + "attributes(".len()..];
        list[..list.find(')').unwrap_or(list.len())]
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    }

    #[test]
    fn lib_rs_lists_only_toolkit_attributes() {
        let mut every = Vec::new();
        for derive in ["Model", "Measurement", "Fields", "AttributeKey"] {
            for name in listed(derive) {
                assert!(
                    Attr::ALL.iter().any(|a| a.name() == name),
                    "lib.rs lists `{name}` for {derive}, which is not in `Attr`"
                );
                every.push(name);
            }
        }
        for attr in Attr::ALL {
            assert!(
                every.iter().any(|n| n == attr.name()),
                "`Attr::{attr:?}` (`{}`) is in no derive's list in lib.rs",
                attr.name()
            );
        }
    }

    #[test]
    fn model_lists_every_attribute_but_the_measurement_and_fields_ones() {
        let model = listed("Model");
        for attr in Attr::ALL {
            let expected = !matches!(attr, Attr::Bucket | Attr::Projection);
            assert_eq!(
                model.iter().any(|n| n == attr.name()),
                expected,
                "`{}` in derive(Model)'s list",
                attr.name()
            );
        }
    }

    #[test]
    fn all_is_in_declaration_order() {
        for (i, attr) in Attr::ALL.into_iter().enumerate() {
            assert_eq!(attr as usize, i);
        }
    }

    #[test]
    fn attrs_records_toolkit_attributes_only() {
        let attrs: Vec<syn::Attribute> = vec![
            syn::parse_quote!(#[subset(limit = 1)]),
            syn::parse_quote!(#[serde(rename = "x")]),
            syn::parse_quote!(#[in_tree(Category)]),
        ];
        let set = Attrs::of(&attrs);
        assert!(set.has(Attr::Subset) && set.has(Attr::InTree));
        assert!(!set.has(Attr::Tree) && !set.has(Attr::Outlier));
    }
}
