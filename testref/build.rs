//! Compiles the C references (src/half_ref.c) with the host's C compiler and libgcc.
fn main() {
    println!("cargo:rerun-if-changed=src/half_ref.c");
    cc::Build::new()
        .file("src/half_ref.c")
        // The conversions must be the C library's, rounded in the mode fesetround sets: no
        // fast-math, no contraction, no target flags that would change the instructions.
        .flag_if_supported("-fno-fast-math")
        .flag_if_supported("-frounding-math")
        .compile("ferrocl_testref");
    println!("cargo:rustc-link-lib=m");
    println!("cargo:rustc-link-lib=dl");
}
