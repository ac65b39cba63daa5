//! Link flags for libferrocl.so.

fn main() {
    // Without -Bsymbolic the driver's own cl* symbols would bind to the loader's functions of
    // the same name (symbol interposition), and the loader would see 0 platforms.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic");
}
