//! Symbol names as people read them: Rust's mangled names (v0 `_R…` and
//! legacy `_ZN…17h<hash>E`) demangled by `rustc-demangle`, without the
//! hashes and crate disambiguators, and LLVM's `.llvm.<digits>` suffix of
//! internalized symbols dropped. Every other name (C, C++, Go) is kept as
//! the symbol table spells it. The symbol table keeps the mangled names:
//! lookups by name use those.

use std::borrow::Cow;

/// `name` for a report: demangled if it is a Rust symbol.
pub fn display(name: &str) -> Cow<'_, str> {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        // `{:#}`: no `::h<hash>` (legacy), no `[<disambiguator>]` (v0).
        return Cow::Owned(format!("{d:#}"));
    }
    match name.find(".llvm.") {
        Some(i)
            if i > 0
                && !name[i + 6..].is_empty()
                && name[i + 6..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            Cow::Borrowed(&name[..i])
        }
        _ => Cow::Borrowed(name),
    }
}

#[cfg(test)]
mod tests {
    use super::display;

    #[test]
    fn rust_names_are_demangled_and_others_kept() {
        let table = [
            // v0: a generic instance's method, a closure, a static.
            (
                "_RNvMs_Csgwiwt6F3Sso_3genINtB4_6SharedyE4bumpB4_",
                "<gen::Shared<u64>>::bump",
            ),
            (
                "_RNCNvCsgwiwt6F3Sso_3gen4main0B3_",
                "gen::main::{closure#0}",
            ),
            (
                "_RNvCs4fqI2P2rA04_11static_race7COUNTER",
                "static_race::COUNTER",
            ),
            // legacy, with an LLVM suffix.
            (
                "_ZN3std2rt10lang_start17h0123456789abcdefE",
                "std::rt::lang_start",
            ),
            (
                "_ZN4core3ptr13drop_in_place17h0123456789abcdefE.llvm.123",
                "core::ptr::drop_in_place",
            ),
            // Not Rust: C, C++, Go, an internalized C name.
            ("main", "main"),
            ("_ZNSt6thread4joinEv", "_ZNSt6thread4joinEv"),
            ("_ZN3foo3barEv", "_ZN3foo3barEv"),
            ("main.careless", "main.careless"),
            ("__rust_try.llvm.8791896685958844351", "__rust_try"),
            ("f.llvm.", "f.llvm."),
            ("f.llvm.12x", "f.llvm.12x"),
        ];
        for (mangled, want) in table {
            assert_eq!(display(mangled), want, "{mangled}");
        }
    }
}
