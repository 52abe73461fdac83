//! The shapes of a relation's field type: one reference or many, and the target's name for
//! messages.

/// `Vec<T>` or `Option<Vec<T>>`, as written.
pub(super) fn written_many(ty: &syn::Type) -> bool {
    if crate::types::vec_element(ty).is_some() {
        return true;
    }
    let syn::Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    if last.ident != "Option" {
        return false;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => matches!(
            a.args.first(),
            Some(syn::GenericArgument::Type(t)) if crate::types::vec_element(t).is_some()
        ),
        _ => false,
    }
}

/// The innermost type argument's last segment (`Task` in `Vec<Ref<Task>>`), for messages.
pub(super) fn target_name(ty: &syn::Type) -> String {
    let mut ty = ty;
    loop {
        let syn::Type::Path(p) = ty else {
            return crate::errors::type_string(ty);
        };
        let Some(last) = p.path.segments.last() else {
            return crate::errors::type_string(ty);
        };
        match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => match a.args.first() {
                Some(syn::GenericArgument::Type(t)) => ty = t,
                _ => return last.ident.to_string(),
            },
            _ => return last.ident.to_string(),
        }
    }
}
