//! The REQUIRE switches for the runtime's own unit tests, as tests/common reads them for
//! the integration tests: `CROSSGEMM_REQUIRE_OPENCL`, `CROSSGEMM_REQUIRE_CUDA` and
//! `CROSSGEMM_REQUIRE_NVRTC` are `1` (a skip is a failure) or `0`/unset (a skip is
//! reported on the real stderr, so that it shows in `cargo test` output); any other
//! value fails, so that a misspelt switch cannot let a skip through.

/// Whether `var` is on: `1` yes; unset, empty or `0` no; anything else panics.
pub(crate) fn required(var: &str) -> bool {
    let v = match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => None,
        Ok(v) => Some(v),
        Err(e) => panic!("{var}: {e}"),
    };
    parse(v.as_deref()).unwrap_or_else(|v| panic!("{var}={v:?}: expected 1 (require) or 0/unset (allow skipping)"))
}

/// A switch's value: `1` on; unset, empty or `0` off; anything else is returned.
fn parse(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None | Some("") | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(other.to_string()),
    }
}

/// Reports that `test` skips `what` because `why`, as `SKIPPED <test>: <what>: <why>` on
/// the process's real stderr (the harness captures `eprintln!` of a passing test); panics
/// instead when `switch` is on.
pub(crate) fn skip(test: &str, what: &str, why: &str, switch: &str) {
    if required(switch) {
        panic!("{test}: {switch}=1 but {why}: {what} cannot run");
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED {test}: {what}: {why} (set {switch}=1 to make this a failure)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values a switch takes (without touching the process's environment: tests
    /// run in parallel); a misspelt one is an error, not "off".
    #[test]
    fn switch_values() {
        assert_eq!(parse(None), Ok(false));
        assert_eq!(parse(Some("")), Ok(false));
        assert_eq!(parse(Some("0")), Ok(false));
        assert_eq!(parse(Some(" 1 ")), Ok(true));
        assert_eq!(parse(Some("yes")), Err("yes".to_string()));
        assert!(!required("CROSSGEMM_REQUIRE_NOTHING_AT_ALL"));
    }
}
