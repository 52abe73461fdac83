//! The finite guard of double sums, against f64 addition on both sides of the edge.

use super::*;

/// The bound of `finite_guard` for `d`, and whether `s + d` overflows in doubles.
fn bound(d: f64) -> f64 {
    let guard = finite_guard(&doc! { "f": d });
    let cond = guard
        .get_document("f")
        .unwrap()
        .get_document("$not")
        .unwrap();
    cond.get_f64(if d > 0.0 { "$gte" } else { "$lte" }).unwrap()
}

#[test]
fn the_guard_refuses_exactly_the_sums_that_would_overflow() {
    for d in [f64::MAX, f64::MAX / 2.0, 1e308, 1.0, 1e300] {
        let t = bound(d);
        for s in [0.0, 2.5, 1e291, 1e292, f64::MAX / 2.0, 1e308, f64::MAX] {
            let passes = s < t;
            assert_eq!(
                passes,
                (s + d).is_finite(),
                "s = {s:e}, d = {d:e}, bound {t:e}"
            );
            let (ns, nd) = (-s, -d);
            let passes = ns > bound(nd);
            assert_eq!(passes, (ns + nd).is_finite(), "s = {ns:e}, d = {nd:e}");
        }
    }
    assert!(finite_guard(&doc! { "n": 5_i64, "z": 0.0 }).is_empty());
}
