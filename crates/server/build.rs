//! Compiles INCRBYFLOAT's `long double` arithmetic (see src/incrbyfloat.rs).

fn main() {
    println!("cargo:rerun-if-changed=csrc/incrbyfloat.c");
    cc::Build::new()
        .file("csrc/incrbyfloat.c")
        .warnings(true)
        .compile("slsm_incrbyfloat");
}
