//! Compiles the long double reference functions (src/reference.c) against glibc's libm.
fn main() {
    println!("cargo:rerun-if-changed=src/reference.c");
    cc::Build::new()
        .file("src/reference.c")
        .flag_if_supported("-fno-fast-math")
        // The reference must not be contracted into fmas or reassociated.
        .flag_if_supported("-ffp-contract=off")
        .compile("ferrocl_cts_reference");
    println!("cargo:rustc-link-lib=m");
}
