//! `#[operation(tree.insert_many, nodes = nodes.len())]`: the runtime's operation span, written
//! once. Not for users: `pattern-runtime` puts it on its handles' operations, and it expands to
//! `tracing`'s `#[instrument]` with the span's name (`pattern_runtime::tree.insert_many`), the
//! model and collection of the handle (`crate::span::Spanned`, unless given), the extra fields, no
//! arguments recorded, and a returned error as a `DEBUG` event (never `ERROR`: the caller
//! decides).
//!
//! Options, after the name: `level = "debug"` (the span's level; `INFO` by default),
//! `no_err` (the function returns no `Result`), `model = expr` and `collection = expr` (instead
//! of the handle's), `later(id, slot)` (fields the body records once it has them:
//! `tracing::Span::current().record("id", ..)`), and any other `field = expr`, or a bare `field`
//! (the argument so named).

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Token};

/// The attribute's arguments.
struct Args {
    name: String,
    level: Option<LitStr>,
    err: bool,
    model: Option<TokenStream>,
    collection: Option<TokenStream>,
    /// Extra fields: `name = value`, or a bare `name` (the argument of that name).
    fields: Vec<(Ident, Option<TokenStream>)>,
    /// Fields declared empty, recorded by the body: `later(id, slot)`.
    later: Vec<Ident>,
}

/// `key = value` (any tokens up to the next comma: `%from`, `?how`, an expression), a flag, or
/// `later(a, b)`.
struct Item {
    key: Ident,
    value: Option<TokenStream>,
    later: Vec<Ident>,
}

impl Parse for Item {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        if key == "later" && input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            let later = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
            return Ok(Item {
                key,
                value: None,
                later: later.into_iter().collect(),
            });
        }
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            let mut value = TokenStream::new();
            while !input.is_empty() && !input.peek(Token![,]) {
                value.extend([input.parse::<proc_macro2::TokenTree>()?]);
            }
            Some(value)
        } else {
            None
        };
        Ok(Item {
            key,
            value,
            later: Vec::new(),
        })
    }
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        // `tree.insert`, `tree.holders.insert`.
        let mut path = vec![input.parse::<Ident>()?.to_string()];
        while input.peek(Token![.]) {
            input.parse::<Token![.]>()?;
            path.push(input.parse::<Ident>()?.to_string());
        }
        let mut args = Args {
            name: format!("pattern_runtime::{}", path.join(".")),
            level: None,
            err: true,
            model: None,
            collection: None,
            fields: Vec::new(),
            later: Vec::new(),
        };
        if input.is_empty() {
            return Ok(args);
        }
        input.parse::<Token![,]>()?;
        for item in Punctuated::<Item, Token![,]>::parse_terminated(input)? {
            let key = item.key.to_string();
            match (key.as_str(), item.value) {
                ("later", None) if !item.later.is_empty() => args.later.extend(item.later),
                ("no_err", None) => args.err = false,
                ("level", Some(value)) => args.level = Some(syn::parse2::<LitStr>(value)?),
                ("model", Some(e)) => args.model = Some(e),
                ("collection", Some(e)) => args.collection = Some(e),
                ("level" | "model" | "collection", None) => {
                    return Err(syn::Error::new(
                        item.key.span(),
                        format!("`{key}` takes a value: `{key} = ..`"),
                    ))
                }
                (_, value) => args.fields.push((item.key, value)),
            }
        }
        Ok(args)
    }
}

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let args: Args = match syn::parse2(args) {
        Ok(a) => a,
        Err(e) => {
            let error = e.to_compile_error();
            return quote!(#error #item);
        }
    };
    let name = &args.name;
    let level = args.level.as_ref().map(|l| quote!(level = #l,));
    let model = args.model.as_ref().map_or_else(
        || quote!(crate::span::Spanned::span_model(self)),
        |m| quote!(#m),
    );
    let collection = args.collection.as_ref().map_or_else(
        || quote!(crate::span::Spanned::span_collection(self)),
        |c| quote!(#c),
    );
    let fields = args.fields.iter().map(|(k, v)| match v {
        Some(v) => quote!(#k = #v),
        None => quote!(#k),
    });
    let later = args
        .later
        .iter()
        .map(|k| quote!(#k = ::tracing::field::Empty));
    let err = args.err.then(|| quote!(, err(level = "debug")));
    quote! {
        #[::tracing::instrument(
            name = #name,
            #level
            skip_all,
            fields(model = #model, collection = #collection #(, #fields)* #(, #later)*)
            #err
        )]
        #item
    }
}
