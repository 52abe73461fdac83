//! Comparing a declared [`IndexSpec`] with an index the server lists.

use std::fmt;

use bson::{Bson, Document};

use super::spec::{IndexKind, IndexSpec};
use crate::finding::{number, same_stored};

/// One way an existing index differs from its declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// What differs: `"key"`, `"key order"`, `"name"`, `"unique"`, `"sparse"`, `"hidden"`,
    /// `"expireAfterSeconds"`, `"collation"` or `"partialFilterExpression"`.
    pub option: &'static str,
    /// The declared value (`None`: not declared).
    pub declared: Option<Bson>,
    /// The value on the server (`None`: absent).
    pub existing: Option<Bson>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Bson>| {
            v.as_ref()
                .map_or_else(|| "(none)".to_owned(), Bson::to_string)
        };
        write!(
            f,
            "{}: declared {}, server has {}",
            self.option,
            show(&self.declared),
            show(&self.existing)
        )
    }
}

/// A key as the comparison sees it: text keys collapse into one block, since mongod stores them
/// as `{_fts: "text", _ftsx: 1}` with the fields in `weights`, and their order carries no meaning.
#[derive(Debug, Clone, PartialEq)]
enum NormKey {
    Field(String, Bson),
    Text(Vec<String>),
}

fn declared_keys(spec: &IndexSpec) -> Vec<NormKey> {
    let mut out: Vec<NormKey> = Vec::new();
    for key in spec.keys() {
        if key.kind == IndexKind::Text {
            if let Some(NormKey::Text(fields)) = out.last_mut() {
                fields.push(key.path.to_owned());
                fields.sort();
                continue;
            }
            out.push(NormKey::Text(vec![key.path.to_owned()]));
        } else {
            out.push(NormKey::Field(key.path.to_owned(), key.kind.to_bson()));
        }
    }
    out
}

fn existing_keys(index: &Document) -> Vec<NormKey> {
    let Ok(key) = index.get_document("key") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (path, value) in key {
        match path.as_str() {
            "_fts" => {
                let mut fields: Vec<String> = index
                    .get_document("weights")
                    .map(|w| w.keys().cloned().collect())
                    .unwrap_or_default();
                fields.sort();
                out.push(NormKey::Text(fields));
            }
            "_ftsx" => {}
            _ => out.push(NormKey::Field(path.clone(), value.clone())),
        }
    }
    out
}

fn norm_key_eq(a: &NormKey, b: &NormKey) -> bool {
    match (a, b) {
        (NormKey::Field(pa, va), NormKey::Field(pb, vb)) => pa == pb && same_stored(va, vb),
        (NormKey::Text(fa), NormKey::Text(fb)) => fa == fb,
        _ => false,
    }
}

fn key_lists_eq(a: &[NormKey], b: &[NormKey]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| norm_key_eq(x, y))
}

/// Whether an existing index has the declared keys in the declared order.
pub(crate) fn same_keys(spec: &IndexSpec, existing: &Document) -> bool {
    key_lists_eq(&declared_keys(spec), &existing_keys(existing))
}

/// Every difference between a declaration and an existing index, name excluded.
pub(crate) fn differences(spec: &IndexSpec, existing: &Document) -> Vec<Difference> {
    let mut diffs = Vec::new();
    let declared = declared_keys(spec);
    let found = existing_keys(existing);
    if !key_lists_eq(&declared, &found) {
        let same_set = declared.len() == found.len()
            && declared
                .iter()
                .all(|d| found.iter().any(|f| norm_key_eq(d, f)));
        diffs.push(Difference {
            option: if same_set { "key order" } else { "key" },
            declared: Some(Bson::Document(spec.key_document())),
            existing: existing.get("key").cloned(),
        });
    }
    let options = spec.options_document();
    for flag in ["unique", "sparse", "hidden"] {
        let want = options.get(flag).is_some_and(truthy);
        let have = existing.get(flag).is_some_and(truthy);
        if want != have {
            diffs.push(Difference {
                option: flag,
                declared: options.get(flag).cloned(),
                existing: existing.get(flag).cloned(),
            });
        }
    }
    for option in ["expireAfterSeconds", "partialFilterExpression"] {
        let want = options.get(option);
        let have = existing.get(option);
        let same = match (want, have) {
            (None, None) => true,
            (Some(a), Some(b)) => same_stored(a, b),
            _ => false,
        };
        if !same {
            diffs.push(Difference {
                option,
                declared: want.cloned(),
                existing: have.cloned(),
            });
        }
    }
    // The server fills in every collation field; compare only those that were declared.
    let want = spec.collation().map(|c| c.to_document());
    let have = existing.get_document("collation").ok();
    let same = match (&want, have) {
        (None, None) => true,
        (Some(w), Some(h)) => w
            .iter()
            .all(|(k, v)| h.get(k).is_some_and(|hv| same_stored(v, hv))),
        _ => false,
    };
    if !same {
        diffs.push(Difference {
            option: "collation",
            declared: want.map(Bson::Document),
            existing: have.cloned().map(Bson::Document),
        });
    }
    diffs
}

/// Whether an existing index has the declaration's signature: the keys, `unique`, `sparse`, the
/// partial filter and the collation, which is what the server (5.0+) compares to decide that two
/// indexes are the same index. TTL, `hidden` and the name are not part of it.
pub(crate) fn same_signature(spec: &IndexSpec, existing: &Document) -> bool {
    differences(spec, existing)
        .iter()
        .all(|d| !in_signature(d.option))
}

fn in_signature(option: &str) -> bool {
    !matches!(option, "hidden" | "expireAfterSeconds")
}

/// Whether these differences can be fixed in place with `collMod` instead of drop + create.
pub(crate) fn fixable_in_place(diffs: &[Difference]) -> bool {
    diffs
        .iter()
        .all(|d| matches!(d.option, "hidden" | "expireAfterSeconds") && d.existing.is_some())
}

fn truthy(v: &Bson) -> bool {
    match v {
        Bson::Boolean(b) => *b,
        other => number(other).is_some_and(|n| n != 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::spec::IndexKey;
    use bson::doc;

    const TEXT_KEYS: &[IndexKey] = &[
        IndexKey {
            path: "title",
            kind: IndexKind::Text,
        },
        IndexKey {
            path: "body",
            kind: IndexKind::Text,
        },
    ];

    fn spec(keys: &'static [IndexKey]) -> IndexSpec {
        IndexSpec::plain(keys, "t")
    }

    #[test]
    fn text_index_matches_its_fts_form() {
        let listed = doc! {
            "v": 2, "key": { "_fts": "text", "_ftsx": 1 }, "name": "t",
            "weights": { "body": 1, "title": 1 }, "default_language": "english",
            "textIndexVersion": 3,
        };
        assert!(differences(&spec(TEXT_KEYS), &listed).is_empty());
    }

    #[test]
    fn numeric_types_and_document_order_are_ignored() {
        assert!(same_stored(&Bson::Int32(1), &Bson::Double(1.0)));
        assert!(same_stored(
            &Bson::Document(doc! { "a": 1, "b": { "$gt": 2 } }),
            &Bson::Document(doc! { "b": { "$gt": 2i64 }, "a": 1.0 }),
        ));
        assert!(!same_stored(&Bson::Int32(1), &Bson::String("1".into())));
    }

    #[test]
    fn reordered_keys_are_reported_as_key_order() {
        const KEYS: &[IndexKey] = &[
            IndexKey {
                path: "a",
                kind: IndexKind::Ascending,
            },
            IndexKey {
                path: "b",
                kind: IndexKind::Descending,
            },
        ];
        let listed = doc! { "key": { "b": -1, "a": 1 }, "name": "t" };
        let diffs = differences(&spec(KEYS), &listed);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].option, "key order");
    }
}
