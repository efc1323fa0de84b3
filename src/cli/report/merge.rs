//! Folding Triton times into a report. Triton runs in Python, in another process
//! (`bench/torch_baseline.py`); its rows are matched to the report's by
//! (m, n, k, dtype, epilogue) and only `triton_us` and `triton_max_rel_err` are taken:
//! the script's cuBLAS times were measured in another process, and the report's own
//! columns are the comparable ones. A Triton error over the dtype's limit marks the
//! row's Triton side wrong ([`Row::judge`](super::Row::judge)): its ratio then counts in
//! no mean.

use super::{Report, RowKey};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// The part of an input row that the merge reads; other fields are ignored.
#[derive(Deserialize)]
struct TritonRow {
    m: usize,
    n: usize,
    k: usize,
    dtype: String,
    epilogue: String,
    #[serde(default)]
    triton_us: Option<f64>,
    #[serde(default)]
    triton_max_rel_err: Option<f64>,
}

/// The layouts the merge reads, for the error when a file has none of them.
const EXPECTED: &str = "expected JSON rows (an array, an object with a \"rows\" array, or one object per line)";

/// What [`fold_triton`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MergeStats {
    /// Input rows with a Triton time whose case the report has (the time was set).
    pub matched: usize,
    /// Input rows with a Triton time for a case the report does not have, in input
    /// order, for the caller to warn about.
    pub unmatched: Vec<RowKey>,
    /// Input rows without a Triton time (null or absent: f32, `--no-triton`).
    pub input_without_triton: usize,
    /// Report rows that have no Triton time after the merge.
    pub rows_without_triton: usize,
}

impl fmt::Display for MergeStats {
    /// One line for the CLI, e.g. "merged 40 Triton times; 2 input rows match no report
    /// row (16x4096x4096 f16 none, ...); 18 input rows without a Triton time; 20 report
    /// rows have none".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "merged {} Triton time{}", self.matched, plural(self.matched))?;
        if !self.unmatched.is_empty() {
            const SHOWN: usize = 5;
            let mut list: Vec<String> = self.unmatched.iter().take(SHOWN).map(|k| k.to_string()).collect();
            if self.unmatched.len() > SHOWN {
                list.push(format!("and {} more", self.unmatched.len() - SHOWN));
            }
            let n = self.unmatched.len();
            let verb = if n == 1 { "matches" } else { "match" };
            write!(
                f,
                "; {n} input row{} {verb} no report row ({})",
                plural(n),
                list.join(", ")
            )?;
        }
        if self.input_without_triton > 0 {
            let n = self.input_without_triton;
            write!(f, "; {n} input row{} without a Triton time", plural(n))?;
        }
        if self.rows_without_triton > 0 {
            let n = self.rows_without_triton;
            write!(
                f,
                "; {n} report row{} {} none",
                plural(n),
                if n == 1 { "has" } else { "have" }
            )?;
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Reads the Triton results at `path` and sets `triton_us` (and the derived fields) of
/// each report row they match. The file is a JSON array of row objects, an object with
/// a `rows` array, or JSON lines (one object per line, as `bench/torch_baseline.py`
/// writes). A later input row for the same case replaces an earlier one. A malformed
/// file, a row without m/n/k/dtype/epilogue or a non-positive time is an error naming
/// the file and line (or the row's index in an array); the report is then unchanged.
pub fn fold_triton(report: &mut Report, path: &Path) -> Result<MergeStats, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    fold_triton_text(report, &text, &path.display().to_string())
}

/// [`fold_triton`] on the file's text; errors name it `source`.
pub fn fold_triton_text(report: &mut Report, text: &str, source: &str) -> Result<MergeStats, String> {
    // Everything is parsed and checked before the report is touched, so that an error
    // halfway through the file does not leave a half-merged report.
    let rows = parse_rows(text, source)?;
    let mut stats = MergeStats::default();
    for row in rows {
        let Some(us) = row.triton_us else {
            stats.input_without_triton += 1;
            continue;
        };
        let key = RowKey {
            m: row.m,
            n: row.n,
            k: row.k,
            batch: 1,
            dtype: row.dtype,
            epilogue: row.epilogue,
        };
        match report.row_mut(&key) {
            Some(r) => {
                r.triton_us = Some(us);
                r.triton_max_rel_err = row.triton_max_rel_err;
                // This Triton result replaces any earlier one, its mark included.
                r.wrong_sides.retain(|s| s != "triton");
                r.judge();
                stats.matched += 1;
            }
            None => stats.unmatched.push(key),
        }
    }
    stats.rows_without_triton = report.rows.iter().filter(|r| r.triton_us.is_none()).count();
    Ok(stats)
}

/// The input rows, checked, whichever of the three layouts the text uses.
fn parse_rows(text: &str, source: &str) -> Result<Vec<TritonRow>, String> {
    let json_err = |e: serde_json::Error| format!("{source}: line {}: {e}", e.line());
    let items: Vec<(String, Value)> = match text.trim_start().chars().next() {
        None => return Err(format!("{source}: the file is empty")),
        Some('[') => {
            let v: Value = serde_json::from_str(text).map_err(json_err)?;
            indexed(v)
        }
        Some('{') => match serde_json::from_str::<Value>(text) {
            // One object in the whole file: a `{"rows": [...]}` wrapper, or a single
            // JSON line.
            Ok(Value::Object(mut obj)) => match obj.remove("rows") {
                Some(rows @ Value::Array(_)) => indexed(rows),
                Some(_) => return Err(format!("{source}: \"rows\" is not an array")),
                None => vec![("line 1".to_string(), Value::Object(obj))],
            },
            Ok(other) => vec![("line 1".to_string(), other)],
            Err(_) => {
                let mut items = Vec::new();
                for (i, line) in text.lines().enumerate() {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let v: Value = serde_json::from_str(line).map_err(|e| format!("{source}: line {}: {e}", i + 1))?;
                    items.push((format!("line {}", i + 1), v));
                }
                items
            }
        },
        Some(_) => return Err(format!("{source}: line 1: {EXPECTED}")),
    };
    let mut rows = Vec::with_capacity(items.len());
    for (at, v) in items {
        if !v.is_object() {
            return Err(format!("{source}: {at}: expected a row object, found {v}"));
        }
        let row: TritonRow = serde_json::from_value(v).map_err(|e| format!("{source}: {at}: {e}"))?;
        if let Some(us) = row.triton_us {
            if !(us.is_finite() && us > 0.0) {
                return Err(format!("{source}: {at}: triton_us {us} is not a positive time"));
            }
        }
        if let Some(e) = row.triton_max_rel_err {
            // Python's json writes NaN and Infinity, which serde_json refuses before
            // this point; a negative error is a broken file.
            if e < 0.0 {
                return Err(format!("{source}: {at}: triton_max_rel_err {e} is negative"));
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The elements of a JSON array, each named by its index for error messages.
fn indexed(v: Value) -> Vec<(String, Value)> {
    match v {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("row {i}"), v))
            .collect(),
        other => vec![("row 0".to_string(), other)],
    }
}

#[cfg(test)]
mod tests {
    use super::super::Row;
    use super::*;

    fn report() -> Report {
        let mut rep = Report::new("NVIDIA H200", "cuda:0", "560.35", "abc1234", "2025-01-02");
        for (m, dtype, epilogue) in [(4096, "f16", "none"), (4096, "f16", "bias_relu"), (4096, "f32", "none")] {
            let mut r = Row {
                group: "square".into(),
                m,
                n: m,
                k: m,
                dtype: dtype.into(),
                epilogue: epilogue.into(),
                ours_us: Some(200.0),
                ..Row::default()
            };
            r.finish();
            rep.rows.push(r);
        }
        rep
    }

    /// Two lines as bench/torch_baseline.py prints them, plus an f32 row without Triton
    /// and a row for a case the report does not have.
    const JSONL: &str = r#"{"m": 4096, "n": 4096, "k": 4096, "dtype": "f16", "epilogue": "none", "accumulate": "fp32", "cublas_us": 1.0, "unfused_us": 2.0, "cublaslt_us": null, "triton_us": 300.0, "triton_max_rel_err": 0.001}
{"m": 4096, "n": 4096, "k": 4096, "dtype": "f16", "epilogue": "bias_relu", "accumulate": "fp32", "cublas_us": 1.0, "unfused_us": 2.0, "cublaslt_us": 3.0, "triton_us": 100.0, "triton_max_rel_err": 0.001}

{"m": 4096, "n": 4096, "k": 4096, "dtype": "f32", "epilogue": "none", "accumulate": "fp32", "cublas_us": 1.0, "unfused_us": 2.0, "cublaslt_us": null, "triton_us": null, "triton_max_rel_err": null}
{"m": 16, "n": 4096, "k": 4096, "dtype": "f16", "epilogue": "none", "triton_us": 9.5}
"#;

    #[test]
    fn folds_json_lines() {
        let mut rep = report();
        let stats = fold_triton_text(&mut rep, JSONL, "rows.jsonl").unwrap();
        assert_eq!(stats.matched, 2);
        assert_eq!(stats.input_without_triton, 1);
        assert_eq!(stats.rows_without_triton, 1);
        assert_eq!(stats.unmatched.len(), 1);
        assert_eq!(stats.unmatched[0].to_string(), "16x4096x4096 f16 none");
        assert_eq!(rep.rows[0].triton_us, Some(300.0));
        assert_eq!(rep.rows[0].speedup_vs_triton, Some(1.5));
        assert_eq!(rep.rows[1].speedup_vs_triton, Some(0.5));
        // The script's own cuBLAS times are not taken.
        assert_eq!(rep.rows[0].cublas_us, None);
        assert_eq!(rep.rows[2].triton_us, None);
        assert_eq!(
            stats.to_string(),
            "merged 2 Triton times; 1 input row matches no report row (16x4096x4096 f16 none); \
             1 input row without a Triton time; 1 report row has none"
        );
    }

    #[test]
    fn folds_arrays_and_rows_objects_and_files() {
        let lines: Vec<&str> = JSONL.lines().filter(|l| !l.is_empty()).collect();
        let array = format!("[\n{}\n]", lines.join(",\n"));
        let wrapped = format!("{{\"producer\": \"torch_baseline\", \"rows\": {array}}}");
        for text in [array, wrapped] {
            let mut rep = report();
            let stats = fold_triton_text(&mut rep, &text, "rows.json").unwrap();
            assert_eq!(
                (stats.matched, stats.unmatched.len(), stats.input_without_triton),
                (2, 1, 1),
                "{text}"
            );
            assert_eq!(rep.rows[1].triton_us, Some(100.0));
        }
        // A single JSON line is one row, not a wrapper.
        let mut rep = report();
        let stats = fold_triton_text(&mut rep, lines[1], "one.jsonl").unwrap();
        assert_eq!(stats.matched, 1);

        let path = std::env::temp_dir().join(format!("crossgemm-report-{}-triton.jsonl", std::process::id()));
        std::fs::write(&path, JSONL).unwrap();
        let mut rep = report();
        assert_eq!(fold_triton(&mut rep, &path).unwrap().matched, 2);
        std::fs::remove_file(&path).unwrap();
        let e = fold_triton(&mut rep, Path::new("/nonexistent/t.jsonl")).unwrap_err();
        assert!(e.contains("/nonexistent/t.jsonl"), "{e}");
    }

    /// A Triton error over the dtype's limit marks the Triton side: the time is kept, the
    /// ratio is not.
    #[test]
    fn a_wrong_triton_output_is_marked_and_its_ratio_dropped() {
        let mut rep = report();
        let text = r#"{"m": 4096, "n": 4096, "k": 4096, "dtype": "f16", "epilogue": "none", "triton_us": 100.0, "triton_max_rel_err": 0.2}
{"m": 4096, "n": 4096, "k": 4096, "dtype": "f16", "epilogue": "bias_relu", "triton_us": 100.0, "triton_max_rel_err": 0.001}"#;
        fold_triton_text(&mut rep, text, "t").unwrap();
        assert_eq!(rep.rows[0].triton_us, Some(100.0));
        assert_eq!(rep.rows[0].wrong_sides, ["triton"]);
        assert_eq!(rep.rows[0].speedup_vs_triton, None);
        assert!(rep.rows[1].wrong_sides.is_empty());
        assert_eq!(rep.rows[1].speedup_vs_triton, Some(0.5));
        assert_eq!(rep.rows[1].triton_max_rel_err, Some(0.001));
    }

    #[test]
    fn later_input_rows_win() {
        let mut rep = report();
        let text = r#"{"m": 4096, "n": 4096, "k": 4096, "dtype": "f16", "epilogue": "none", "triton_us": 300.0}
{"m": 4096, "n": 4096, "k": 4096, "dtype": "f16", "epilogue": "none", "triton_us": 400.0}"#;
        fold_triton_text(&mut rep, text, "t").unwrap();
        assert_eq!(rep.rows[0].speedup_vs_triton, Some(2.0));
    }

    #[test]
    fn malformed_files_name_the_file_and_line() {
        let check = |text: &str, want: &[&str]| {
            let mut rep = report();
            let before = rep.clone();
            let e = fold_triton_text(&mut rep, text, "rows.jsonl").unwrap_err();
            for w in want {
                assert!(e.contains(w), "{e:?} lacks {w:?}");
            }
            assert!(e.starts_with("rows.jsonl: "), "{e}");
            assert_eq!(rep, before, "a failed merge must leave the report unchanged");
        };
        let broken = JSONL.replacen("\"bias_relu\",", "\"bias_relu\"", 1);
        check(&broken, &["line 2"]);
        let missing = JSONL.replacen("\"dtype\": \"f32\", ", "", 1);
        check(&missing, &["line 4", "dtype"]);
        check(&JSONL.replacen("300.0", "-3.0", 1), &["line 1", "not a positive time"]);
        check("[{\"m\": 1}, ", &["line 1"]);
        check("[1, 2]", &["row 0", "expected a row object"]);
        check("{\"rows\": 3}", &["\"rows\" is not an array"]);
        check("m,n,k\n1,2,3\n", &["line 1"]);
        check("  \n", &["empty"]);
    }
}
