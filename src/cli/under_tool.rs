//! Whether the process runs under a CUDA tool that intercepts every launch (Nsight
//! Compute replays each kernel to read its counters; compute-sanitizer instruments
//! each one), so that the times `tune`, `bench` and `diagnose` take are the tool's, and a
//! tune's winner is picked by them.
//!
//! The tools' launchers set variables in the processes they run (read off the H200
//! machine, bench/results/h200-2026-12-03t4/tool-env.txt): Nsight Compute 2025.3
//! `NV_NSIGHT_INJECTION_TRANSPORT_TYPE`, compute-sanitizer 13.0
//! `NV_SANITIZER_INJECTION_TRANSPORT_TYPE`; other injection libraries are loaded
//! through `CUDA_INJECTION64_PATH`.

/// The variables, each with the tool it names.
const MARKS: [(&str, &str); 3] = [
    (
        "NV_NSIGHT_INJECTION_TRANSPORT_TYPE",
        "an Nsight tool (Nsight Compute or Systems)",
    ),
    ("NV_SANITIZER_INJECTION_TRANSPORT_TYPE", "compute-sanitizer"),
    ("CUDA_INJECTION64_PATH", "a CUDA injection library"),
];

/// The tool `var`'s lookups say the process runs under, with the variable that says so
/// ("compute-sanitizer (NV_SANITIZER_INJECTION_TRANSPORT_TYPE is set)"); `None` when no
/// tool's variable is set.
pub fn tool(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let (name, tool) = MARKS
        .iter()
        .find(|(name, _)| var(name).is_some_and(|v| !v.is_empty()))?;
    Some(format!("{tool} ({name} is set)"))
}

/// [`tool`] from the environment: what `tune --json`, `diagnose --json` and the bench
/// report's notes carry as `under_tool`, so that a result file says it as well as stderr.
pub fn detected() -> Option<String> {
    tool(|k| std::env::var(k).ok())
}

/// The warning `what` ("tune", "bench", ..) prints under a tool, from `var`'s lookups;
/// `None` when no tool's variable is set.
pub fn warning(what: &str, var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let tool = tool(var)?;
    Some(format!(
        "crossgemm: warning: {what} runs under {tool}: every launch goes through the tool, \
         so the times below are not the kernels' own, and a tuning cache written now holds \
         winners picked by them (use a --cache-dir of its own)"
    ))
}

/// [`warning`] from the environment, printed to stderr.
pub fn warn(what: &str) {
    if let Some(w) = warning(what, |k| std::env::var(k).ok()) {
        eprintln!("{w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_is_named_and_an_empty_variable_is_none() {
        let only = |set: &'static str| move |k: &str| (k == set).then(|| "uds".to_string());
        let w = warning("tune", only("NV_SANITIZER_INJECTION_TRANSPORT_TYPE")).unwrap();
        assert!(w.contains("tune runs under compute-sanitizer"), "{w}");
        let w = warning("bench", only("NV_NSIGHT_INJECTION_TRANSPORT_TYPE")).unwrap();
        assert!(w.contains("bench runs under an Nsight tool"), "{w}");
        assert!(warning("diagnose", only("CUDA_INJECTION64_PATH")).is_some());
        assert_eq!(warning("tune", |_| None), None);
        assert_eq!(warning("tune", |_| Some(String::new())), None);
        assert_eq!(warning("tune", only("CUDA_VISIBLE_DEVICES")), None);
        assert_eq!(
            tool(only("CUDA_INJECTION64_PATH")).as_deref(),
            Some("a CUDA injection library (CUDA_INJECTION64_PATH is set)")
        );
    }
}
