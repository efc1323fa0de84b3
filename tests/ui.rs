//! Compile-error and user-crate tests of `#[gemm_kernel]` (trybuild).
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/pass/*.rs");
}
