//! The report as markdown: a header saying what ran where, one table per dtype, notes
//! on single rows, and a summary of the speed-ups per dtype and epilogue.

use super::shapes::{DTYPES, EPILOGUES};
use super::{error_limit, ordered, Report, Row};
use std::fmt::Write;

/// What a missing value shows as.
pub(super) const MISSING: &str = "—";

/// A time in µs: one decimal, but three significant digits below 10 µs, where a tenth
/// of a µs is a large part of the time.
pub(super) fn us(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        None => MISSING.to_string(),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// A speed-up: two decimals and an "x".
fn speedup(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        None => MISSING.to_string(),
        Some(v) => format!("{v:.2}x"),
    }
}

/// An error in short scientific form (1.2e-3); an infinite one (a non-finite value
/// where the other side is finite, NaN against NaN) as "inf".
fn err(x: Option<f64>) -> String {
    match x {
        None => MISSING.to_string(),
        Some(v) if v.is_nan() => "NaN".to_string(),
        Some(v) if v.is_infinite() => "inf".to_string(),
        Some(0.0) => "0".to_string(),
        Some(v) => format!("{v:.1e}"),
    }
}

/// Whether the row's outputs passed: "ok" when some error was held to a limit and none
/// was over it, "**WRONG: ours, ..**" naming the sides over it, "—" when nothing was
/// checked (a failed row, an unknown dtype).
fn check(r: &Row) -> String {
    if !r.wrong_sides.is_empty() {
        return format!("**WRONG: {}**", r.wrong_sides.join(", "));
    }
    if r.wrong {
        return "**WRONG**".to_string();
    }
    let checked = [
        r.max_rel_err,
        r.cublas_max_rel_err,
        r.cublaslt_max_rel_err,
        r.triton_max_rel_err,
    ]
    .iter()
    .any(Option::is_some);
    if r.err_limit.is_some() && checked {
        "ok".to_string()
    } else {
        MISSING.to_string()
    }
}

fn tflops(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        None => MISSING.to_string(),
        Some(v) => format!("{v:.1}"),
    }
}

/// Text for a table cell: a `|` would end the cell and a line break the row.
pub(super) fn cell(text: &str) -> String {
    if text.is_empty() {
        return MISSING.to_string();
    }
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The cells a table row of `r`'s case starts with: shape, dtype and epilogue, with the
/// row's opening and closing bars (`| 1x8x8 | f16 | none |`).
pub(super) fn case_cells(r: &Row) -> String {
    format!("| {} | {} | {} |", r.shape_text(), r.dtype, cell(&r.epilogue))
}

/// `a / b` where both times are there and the outputs right (a > 1: `b` took less time).
fn ratio(a: Option<f64>, b: Option<f64>, wrong: bool) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 && !wrong => Some(a / b),
        _ => None,
    }
}

/// One row of a table that sets two timings of `r`'s case side by side: shape, dtype,
/// epilogue, the two times, their ratio (`WRONG` for a wrong output) and the two configs.
fn pair_row(out: &mut String, r: &Row, times: [Option<f64>; 2], x: Option<f64>, wrong: bool, configs: [&str; 2]) {
    let _ = writeln!(
        out,
        "{} {} | {} | {} | {} | {} |",
        case_cells(r),
        us(times[0]),
        us(times[1]),
        if wrong { "WRONG".to_string() } else { speedup(x) },
        cell(configs[0]),
        cell(configs[1])
    );
}

fn max_rel_err(r: &Row) -> String {
    let e = err(r.max_rel_err);
    if r.max_rel_err.is_some() && !r.err_vs.is_empty() {
        format!("{e} ({})", cell(&r.err_vs))
    } else {
        e
    }
}

fn tune(r: &Row) -> String {
    if r.tune_cache_hit {
        "cached".to_string()
    } else if r.tune_ms.is_finite() {
        format!("{:.0}", r.tune_ms)
    } else {
        MISSING.to_string()
    }
}

/// Geometric mean of the positive finite values (a mean of ratios must not let one
/// 10x outlier outweigh ten 0.9x rows), and how many exceed 1.0, of how many.
fn geomean_and_wins(values: impl Iterator<Item = f64>) -> Option<(f64, usize, usize)> {
    let (mut log_sum, mut wins, mut count) = (0.0, 0, 0);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        log_sum += v.ln();
        wins += usize::from(v > 1.0);
        count += 1;
    }
    (count > 0).then(|| ((log_sum / count as f64).exp(), wins, count))
}

const COLUMNS: [&str; 17] = [
    "shape (MxNxK)",
    "group",
    "epilogue",
    "ours µs",
    "cuBLAS µs",
    "cuBLASLt µs",
    "Triton µs",
    "×cuBLAS",
    "×cuBLASLt",
    "×Triton",
    "ours TFLOP/s",
    "max rel err",
    "cuBLAS err",
    "cuBLASLt err",
    "check",
    "config",
    "tune ms",
];

/// The columns holding text (left-aligned); the others are numbers.
const TEXT_COLUMNS: [&str; 5] = ["shape (MxNxK)", "group", "epilogue", "check", "config"];

impl Report {
    /// The report as markdown: a header (device, driver, commit, date, copy bandwidth,
    /// launch overhead, the notes), one table per dtype (missing values as "—"), the
    /// rows' own notes, a summary per dtype and epilogue: the geometric mean of the
    /// speed-ups over cuBLAS, cuBLASLt and Triton and how many rows ours wins; then the
    /// decode-size rows' bandwidth ([`Report::bandwidth_markdown`]).
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        self.write_header(&mut out);
        if self.rows.is_empty() {
            out.push_str("\nNo rows measured.\n");
            return out;
        }
        let dtypes = ordered(self.rows.iter().map(|r| r.dtype.as_str()), DTYPES);
        for dtype in &dtypes {
            self.write_table(&mut out, dtype);
        }
        self.write_summary(&mut out, &dtypes);
        out.push_str(&self.bandwidth_markdown());
        out
    }

    fn write_header(&self, out: &mut String) {
        let or_unknown = |s: &str| {
            if s.is_empty() {
                "unknown".to_string()
            } else {
                s.to_string()
            }
        };
        let _ = writeln!(out, "# crossgemm bench: {}\n", or_unknown(&self.device));
        if !self.device_id.is_empty() {
            let _ = writeln!(out, "- device: {} ({})", or_unknown(&self.device), self.device_id);
        }
        let _ = writeln!(out, "- driver: {}", or_unknown(&self.driver));
        let _ = writeln!(out, "- commit: {}", or_unknown(&self.commit));
        let _ = writeln!(out, "- date: {}", or_unknown(&self.date));
        if let Some(v) = &self.cublas_version {
            let _ = writeln!(out, "- cuBLAS: {v}");
        }
        match self.copy_gbps.filter(|g| g.is_finite()) {
            Some(g) => {
                let _ = writeln!(out, "- device-to-device copy: {g:.0} GB/s");
            }
            None => out.push_str("- device-to-device copy: not measured\n"),
        }
        match &self.launch_overhead {
            Some(l) => {
                let _ = writeln!(
                    out,
                    "- launch overhead: a warm cached call of a generated kernel ({}) takes {} µs, \
                     a bare driver launch of an empty kernel {} µs ({:+.2} µs)",
                    l.shape,
                    us(Some(l.ours_us)),
                    us(Some(l.bare_us)),
                    l.ours_us - l.bare_us
                );
            }
            None => out.push_str("- launch overhead: not measured\n"),
        }
        let dtypes = ordered(self.rows.iter().map(|r| r.dtype.as_str()), DTYPES);
        let limits: Vec<String> = dtypes
            .iter()
            .filter_map(|d| error_limit(d).map(|l| format!("{d} {l:.0e}")))
            .collect();
        if !limits.is_empty() {
            let _ = writeln!(
                out,
                "- error limits (max rel err of each side's output; over it, or not finite, the row is marked wrong): {}",
                limits.join(", ")
            );
        }
        let wrong = self.wrong_rows();
        if !wrong.is_empty() {
            let _ = writeln!(
                out,
                "- **{} row{} with a wrong output** (left out of the means and wins): {}",
                wrong.len(),
                if wrong.len() == 1 { "" } else { "s" },
                wrong.join("; ")
            );
        }
        if !self.notes.is_empty() {
            out.push_str("\nNotes:\n\n");
            for n in &self.notes {
                let _ = writeln!(out, "- {}", n.replace('\n', " "));
            }
        }
    }

    fn write_table(&self, out: &mut String, dtype: &str) {
        let rows: Vec<&Row> = self.rows.iter().filter(|r| r.dtype == dtype).collect();
        let _ = writeln!(out, "\n## {dtype}\n");
        let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
        // Text columns left-aligned, numbers right-aligned.
        let align: Vec<&str> = COLUMNS
            .iter()
            .map(|c| if TEXT_COLUMNS.contains(c) { ":--" } else { "--:" })
            .collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for r in &rows {
            let cells = [
                r.shape_text(),
                cell(&r.group),
                cell(&r.epilogue),
                us(r.ours_us),
                us(r.cublas_us),
                us(r.cublaslt_us),
                us(r.triton_us),
                speedup(r.speedup_vs_cublas),
                speedup(r.speedup_vs_cublaslt),
                speedup(r.speedup_vs_triton),
                tflops(r.ours_tflops),
                max_rel_err(r),
                err(r.cublas_max_rel_err),
                err(r.cublaslt_max_rel_err),
                check(r),
                cell(&r.config),
                tune(r),
            ];
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let wrong: Vec<&&Row> = rows.iter().filter(|r| r.wrong || !r.wrong_sides.is_empty()).collect();
        if !wrong.is_empty() {
            out.push_str("\nWrong outputs (their speed-ups are left out of the summary):\n\n");
            for r in wrong {
                let _ = writeln!(out, "- {} {}: {}", r.shape_text(), r.epilogue, r.wrong_text());
            }
        }
        let noted: Vec<&&Row> = rows.iter().filter(|r| !r.note.trim().is_empty()).collect();
        if !noted.is_empty() {
            out.push_str("\nRow notes:\n\n");
            for r in noted {
                let _ = writeln!(
                    out,
                    "- {} {}: {}",
                    r.shape_text(),
                    r.epilogue,
                    r.note.trim().replace('\n', " ")
                );
            }
        }
    }

    fn write_summary(&self, out: &mut String, dtypes: &[String]) {
        out.push_str(
            "\n## Summary\n\nGeometric mean of the speed-ups (> 1: crossgemm faster) and the rows where \
             crossgemm is faster, of the rows where both ran and neither output was wrong (`wrong`: rows \
             with some side over the error limit).\n\n",
        );
        out.push_str("| dtype | epilogue | rows | wrong | ×cuBLAS | wins vs cuBLAS | ×cuBLASLt | wins vs cuBLASLt | ×Triton | wins vs Triton |\n");
        out.push_str("|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for dtype in dtypes {
            let of_dtype: Vec<&Row> = self.rows.iter().filter(|r| &r.dtype == dtype).collect();
            for epilogue in ordered(of_dtype.iter().map(|r| r.epilogue.as_str()), EPILOGUES) {
                let rows: Vec<&&Row> = of_dtype.iter().filter(|r| r.epilogue == epilogue).collect();
                let wrong = rows.iter().filter(|r| r.wrong || !r.wrong_sides.is_empty()).count();
                let mut cells = vec![
                    dtype.clone(),
                    cell(&epilogue),
                    rows.len().to_string(),
                    wrong.to_string(),
                ];
                let columns: [fn(&Row) -> Option<f64>; 3] = [
                    |r| r.speedup_vs_cublas,
                    |r| r.speedup_vs_cublaslt,
                    |r| r.speedup_vs_triton,
                ];
                for get in columns {
                    match geomean_and_wins(rows.iter().filter_map(|r| get(r))) {
                        Some((g, wins, n)) => {
                            cells.push(speedup(Some(g)));
                            cells.push(format!("{wins}/{n}"));
                        }
                        None => cells.extend([MISSING.to_string(), MISSING.to_string()]),
                    }
                }
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
        }
    }
}

impl Report {
    /// `bench --first-call`: per row, where the config came from and what the first
    /// call cost; then the median and the largest first call. Empty when no row has one.
    pub fn first_call_markdown(&self) -> String {
        let rows: Vec<&Row> = self.rows.iter().filter(|r| r.first_call_ms.is_some()).collect();
        if rows.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "\n## First calls\n\nEach case's first plain launch under `CROSSGEMM_TUNE=cached` in this process: the config's lookup, its check at the call's build variant, the JIT compile of that one config (or the load of its prebuilt CUBIN: the kernel column) and the run, wall clock.\n\n",
        );
        out.push_str("| shape (MxNxK) | dtype | epilogue | source | kernel | first call ms | ours µs | config |\n");
        out.push_str("|:--|:--|:--|:--|:--|--:|--:|:--|\n");
        let mut ms: Vec<f64> = Vec::new();
        for r in rows {
            let t = r.first_call_ms.unwrap_or(f64::NAN);
            ms.push(t);
            let _ = writeln!(
                out,
                "{} {} | {} | {t:.0} | {} | {} |",
                case_cells(r),
                cell(&r.config_source),
                cell(&r.first_call_kernel),
                us(r.ours_us),
                cell(&r.config)
            );
        }
        ms.sort_by(f64::total_cmp);
        let _ = writeln!(
            out,
            "\n{} first calls: median {:.0} ms, largest {:.0} ms.",
            ms.len(),
            ms[ms.len() / 2],
            ms[ms.len() - 1]
        );
        out
    }

    /// `bench --pad`: per row, ours on the views against ours on the packed operands,
    /// timed in the same rounds, as packed / views (0.95: the views take 5% longer);
    /// then the geometric mean and the slowest row. Empty when no row has a packed time.
    pub fn views_markdown(&self) -> String {
        let rows: Vec<&Row> = self.rows.iter().filter(|r| r.packed_us.is_some()).collect();
        if rows.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "\n## Views against packed operands\n\nOurs on the views (`ours µs`) and ours on packed copies of the same operands (`packed µs`, tuned for them), timed in the same rounds; × is packed / views (1.0: the views cost nothing, 0.95: they take 5% longer).\n\n",
        );
        out.push_str(
            "| shape (MxNxK) | dtype | epilogue | views µs | packed µs | × | config (views) | config (packed) |\n",
        );
        out.push_str("|:--|:--|:--|--:|--:|--:|:--|:--|\n");
        let mut ratios: Vec<(f64, String)> = Vec::new();
        for r in rows {
            let wrong = r.is_wrong("ours") || r.is_wrong("packed");
            let x = ratio(r.packed_us, r.ours_us, wrong);
            pair_row(
                &mut out,
                r,
                [r.ours_us, r.packed_us],
                x,
                wrong,
                [&r.config, &r.packed_config],
            );
            if let Some(x) = x {
                ratios.push((x, format!("{} {} {}", r.shape_text(), r.dtype, cell(&r.epilogue))));
            }
        }
        if let Some((g, _, n)) = geomean_and_wins(ratios.iter().map(|(x, _)| *x)) {
            let (worst, at) = ratios
                .iter()
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(x, k)| (*x, k.as_str()))
                .unwrap_or((f64::NAN, ""));
            let _ = writeln!(
                out,
                "\n{n} {}: geometric mean {}, slowest {} ({at}).",
                if n == 1 { "row" } else { "rows" },
                speedup(Some(g)),
                speedup(Some(worst))
            );
        }
        out
    }

    /// How ours changed against an earlier report `before` (another commit, another
    /// planner): per row that both measured, ours then and now and their ratio (> 1:
    /// faster now) with both configs, then the geometric mean per dtype and the rows
    /// slower now by more than [`SLOWER_BAND`] (issue 9's "no shape slower than before").
    /// A markdown section to append to this report's own.
    pub fn change_markdown(&self, before: &Report) -> String {
        let mut out = format!(
            "\n## Change against {} ({}, {})\n\nOurs before / ours now (> 1: faster now), for the rows both reports measured.\n\n",
            if before.commit.is_empty() { "unknown" } else { &before.commit },
            before.date,
            before.device
        );
        out.push_str("| shape (MxNxK) | dtype | epilogue | before µs | now µs | × | config before | config now |\n");
        out.push_str("|:--|:--|:--|--:|--:|--:|:--|:--|\n");
        let mut by_dtype: Vec<(String, Vec<f64>)> = Vec::new();
        let mut slower: Vec<String> = Vec::new();
        for now in &self.rows {
            let Some(then) = before.rows.iter().find(|r| r.is_key(&now.key())) else {
                continue;
            };
            // A wrong output then or now: its time compares nothing.
            let wrong = then.is_wrong("ours") || now.is_wrong("ours");
            let ratio = ratio(then.ours_us, now.ours_us, wrong);
            pair_row(
                &mut out,
                now,
                [then.ours_us, now.ours_us],
                ratio,
                wrong,
                [&then.config, &now.config],
            );
            if let Some(x) = ratio.filter(|&x| x < 1.0 - SLOWER_BAND) {
                slower.push(format!(
                    "{} {} {} ({})",
                    now.shape_text(),
                    now.dtype,
                    cell(&now.epilogue),
                    speedup(Some(x))
                ));
            }
            if let Some(x) = ratio {
                match by_dtype.iter_mut().find(|(d, _)| *d == now.dtype) {
                    Some((_, v)) => v.push(x),
                    None => by_dtype.push((now.dtype.clone(), vec![x])),
                }
            }
        }
        if by_dtype.is_empty() {
            out.push_str("\nNo row was measured in both (rows with a wrong output left out).\n");
            return out;
        }
        out.push_str("\n| dtype | rows | geometric mean × | faster now |\n|:--|--:|--:|--:|\n");
        for (dtype, v) in by_dtype {
            if let Some((g, wins, n)) = geomean_and_wins(v.into_iter()) {
                let _ = writeln!(out, "| {dtype} | {n} | {} | {wins}/{n} |", speedup(Some(g)));
            }
        }
        let band = SLOWER_BAND * 100.0;
        if slower.is_empty() {
            let _ = writeln!(out, "\nNo row is slower now by more than {band:.0} %.");
        } else {
            let rows = if slower.len() == 1 { "row" } else { "rows" };
            let _ = writeln!(
                out,
                "\nSlower now by more than {band:.0} % ({} {rows}): {}.",
                slower.len(),
                slower.join("; ")
            );
        }
        out
    }
}

/// How much slower than before a row may be before the change report lists it: 5 %. The
/// same config moved by a median 1.4 % and at most 3.9 % slower (6.7 % faster) between
/// two H200 runs of the f16 table (the afternoon's full tune and the evening's prepared
/// first calls, 66 rows with the same config).
pub const SLOWER_BAND: f64 = 0.05;

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::super::LaunchOverhead;
    use super::*;

    fn row(m: usize, n: usize, k: usize, dtype: &str, epilogue: &str, times: [Option<f64>; 4]) -> Row {
        let mut r = Row {
            max_rel_err: Some(if dtype == "f32" { 2.5e-5 } else { 0.00123 }),
            err_vs: "cublas".into(),
            config: "128x128x32 s4 w8".into(),
            tune_ms: 1234.4,
            ..testing::row(m, n, k, dtype, epilogue, times)
        };
        r.judge();
        r
    }

    fn sample() -> Report {
        let mut rep = Report::new("NVIDIA H200", "cuda:0", "560.35", "abc1234", "2025-01-02");
        rep.copy_gbps = Some(3912.4);
        rep.cublas_version = Some("12.4.5".into());
        rep.launch_overhead = Some(LaunchOverhead {
            shape: "64x64x64".into(),
            ours_us: 4.25,
            bare_us: 2.5,
        });
        rep.notes = vec!["cuBLAS: cublasGemmEx, fp32 compute".into()];
        rep.rows = vec![
            row(
                4096,
                4096,
                4096,
                "f16",
                "none",
                [Some(200.0), Some(300.0), Some(250.0), Some(180.0)],
            ),
            row(16, 4096, 4096, "f16", "bias_relu", [Some(8.123), Some(6.5), None, None]),
            row(1024, 1024, 1024, "f32", "none", [Some(50.0), Some(100.0), None, None]),
        ];
        rep.rows[1].tune_cache_hit = true;
        rep.rows[1].tune_ms = 0.0;
        rep.rows[1].note = "cuBLASLt: no fused epilogue for this | shape".into();
        rep
    }

    #[test]
    fn markdown_has_header_tables_and_summary() {
        let md = sample().to_markdown();
        assert!(md.starts_with("# crossgemm bench: NVIDIA H200\n"), "{md}");
        for s in [
            "- device: NVIDIA H200 (cuda:0)",
            "- driver: 560.35",
            "- commit: abc1234",
            "- date: 2025-01-02",
            "- cuBLAS: 12.4.5",
            "- device-to-device copy: 3912 GB/s",
            "(64x64x64) takes 4.25 µs, a bare driver launch of an empty kernel 2.50 µs (+1.75 µs)",
            "- cuBLAS: cublasGemmEx, fp32 compute",
            "\n## f16\n",
            "\n## f32\n",
            "| shape (MxNxK) | group | epilogue | ours µs | cuBLAS µs | cuBLASLt µs | Triton µs | ×cuBLAS | ×cuBLASLt | ×Triton | ours TFLOP/s | max rel err | cuBLAS err | cuBLASLt err | check | config | tune ms |",
            "| 4096x4096x4096 | square | none | 200.0 | 300.0 | 250.0 | 180.0 | 1.50x | 1.25x | 0.90x | 687.2 | 1.2e-3 (cublas) | — | — | ok | 128x128x32 s4 w8 | 1234 |",
            "- error limits (max rel err of each side's output; over it, or not finite, the row is marked wrong): f16 5e-3, f32 1e-4",
            "- 16x4096x4096 bias_relu: cuBLASLt: no fused epilogue for this | shape",
            "\n## Summary\n",
        ] {
            assert!(md.contains(s), "missing {s:?} in\n{md}");
        }
        // f16 before f32, whatever the rows' order.
        assert!(md.find("## f16").unwrap() < md.find("## f32").unwrap());
    }

    #[test]
    fn markdown_shows_missing_values_as_dashes() {
        let md = sample().to_markdown();
        let line = md.lines().find(|l| l.starts_with("| 16x4096x4096 ")).unwrap();
        assert_eq!(
            line,
            "| 16x4096x4096 | square | bias_relu | 8.12 | 6.50 | — | — | 0.80x | — | — | 66.1 | 1.2e-3 (cublas) | — | — | ok | 128x128x32 s4 w8 | cached |"
        );
        let mut rep = sample();
        rep.copy_gbps = None;
        rep.launch_overhead = None;
        rep.rows[0].config = String::new();
        rep.rows[0].max_rel_err = None;
        let md = rep.to_markdown();
        assert!(md.contains("- device-to-device copy: not measured"));
        assert!(md.contains("- launch overhead: not measured"));
        let line = md.lines().find(|l| l.starts_with("| 4096x4096x4096 ")).unwrap();
        assert!(line.ends_with("| — | — | — | — | — | 1234 |"), "{line}");
    }

    #[test]
    fn markdown_summary_has_geomeans_and_wins() {
        let mut rep = sample();
        rep.rows.push(row(
            2048,
            2048,
            2048,
            "f16",
            "none",
            [Some(100.0), Some(50.0), Some(400.0), None],
        ));
        let md = rep.to_markdown();
        // ×cuBLAS: 1.5 and 0.5 → √0.75; ×cuBLASLt: 1.25 and 4 → √5; ×Triton: 0.9 alone.
        assert!(
            md.contains("| f16 | none | 2 | 0 | 0.87x | 1/2 | 2.24x | 2/2 | 0.90x | 0/1 |"),
            "{md}"
        );
        assert!(
            md.contains("| f16 | bias_relu | 1 | 0 | 0.80x | 0/1 | — | — | — | — |"),
            "{md}"
        );
        assert!(
            md.contains("| f32 | none | 1 | 0 | 2.00x | 1/1 | — | — | — | — |"),
            "{md}"
        );
    }

    /// A row over its limit: marked in its table, in the header and in the summary's
    /// `wrong` column, and left out of the means and wins; a wrong cuBLASLt output
    /// drops only the cuBLASLt ratio.
    #[test]
    fn wrong_rows_are_marked_and_left_out_of_the_summary() {
        let mut rep = sample();
        // Ours 1.5x and 1.25x faster at 4096³, but its output is off by 6e-3 > 5e-3.
        rep.rows[0].max_rel_err = Some(6e-3);
        rep.rows[0].cublaslt_max_rel_err = Some(1e-3);
        // cuBLASLt wrong at 2048³: ours stays in the ×cuBLAS mean, not in ×cuBLASLt.
        let mut lt = row(
            2048,
            2048,
            2048,
            "f16",
            "none",
            [Some(100.0), Some(50.0), Some(400.0), None],
        );
        lt.cublaslt_max_rel_err = Some(f64::INFINITY);
        rep.rows.push(lt);
        rep.judge_rows();
        assert_eq!(rep.rows[0].wrong_sides, ["ours"]);
        assert_eq!(rep.rows[3].wrong_sides, ["cublaslt"]);
        let md = rep.to_markdown();
        let line = md.lines().find(|l| l.starts_with("| 4096x4096x4096 ")).unwrap();
        assert_eq!(
            line,
            "| 4096x4096x4096 | square | none | 200.0 | 300.0 | 250.0 | 180.0 | — | — | — | 687.2 | 6.0e-3 (cublas) | — | 1.0e-3 | **WRONG: ours** | 128x128x32 s4 w8 | 1234 |"
        );
        let line = md.lines().find(|l| l.starts_with("| 2048x2048x2048 ")).unwrap();
        assert!(
            line.contains("| 0.50x | — | — |") && line.contains("| inf | **WRONG: cublaslt** |"),
            "{line}"
        );
        for s in [
            "- **2 rows with a wrong output** (left out of the means and wins): 4096x4096x4096 f16 none: ours (error 6.0e-3, limit 5.0e-3); 2048x2048x2048 f16 none: cublaslt (error inf, limit 5.0e-3)",
            "- 4096x4096x4096 none: ours (error 6.0e-3, limit 5.0e-3)",
            // Only 2048³'s ×cuBLAS (0.5) is left for f16 none; no ×cuBLASLt, no ×Triton.
            "| f16 | none | 2 | 2 | 0.50x | 0/1 | — | — | — | — |",
        ] {
            assert!(md.contains(s), "missing {s:?} in\n{md}");
        }
    }

    #[test]
    fn change_leaves_out_wrong_rows() {
        let before = testing::report(vec![testing::row(
            1024,
            1024,
            1024,
            "f16",
            "none",
            [Some(40.0), None, None, None],
        )]);
        let mut now = testing::report(vec![testing::row(
            1024,
            1024,
            1024,
            "f16",
            "none",
            [Some(20.0), None, None, None],
        )]);
        now.rows[0].max_rel_err = Some(0.5);
        now.judge_rows();
        let md = now.change_markdown(&before);
        assert!(
            md.contains("| 1024x1024x1024 | f16 | none | 40.0 | 20.0 | WRONG |"),
            "{md}"
        );
        assert!(md.contains("No row was measured in both"), "{md}");
    }

    #[test]
    fn markdown_of_an_empty_report() {
        let md = Report::default().to_markdown();
        assert!(md.contains("# crossgemm bench: unknown"));
        assert!(md.contains("No rows measured."));
    }

    #[test]
    fn change_against_an_earlier_report() {
        let before = testing::report(vec![
            testing::row(1024, 1024, 1024, "f16", "none", [Some(40.0), None, None, None]),
            testing::row(2048, 2048, 2048, "f16", "none", [Some(100.0), None, None, None]),
            testing::row(16, 16, 16, "f16", "none", [Some(1.0), None, None, None]),
        ]);
        let now = testing::report(vec![
            testing::row(1024, 1024, 1024, "f16", "none", [Some(20.0), None, None, None]),
            testing::row(2048, 2048, 2048, "f16", "none", [Some(125.0), None, None, None]),
            testing::row(4096, 4096, 4096, "f16", "none", [Some(400.0), None, None, None]),
        ]);
        let md = now.change_markdown(&before);
        assert!(md.contains("## Change against abc1234"), "{md}");
        assert!(
            md.contains("| 1024x1024x1024 | f16 | none | 40.0 | 20.0 | 2.00x |"),
            "{md}"
        );
        assert!(
            md.contains("| 2048x2048x2048 | f16 | none | 100.0 | 125.0 | 0.80x |"),
            "{md}"
        );
        // Rows only one report has are left out; the mean of 2.0 and 0.8 is 1.26.
        assert!(!md.contains("4096x4096x4096") && !md.contains("16x16x16"), "{md}");
        assert!(md.contains("| f16 | 2 | 1.26x | 1/2 |"), "{md}");
        assert!(
            md.contains("Slower now by more than 5 % (1 row): 2048x2048x2048 f16 none (0.80x)."),
            "{md}"
        );
        let none = now.change_markdown(&testing::report(vec![]));
        assert!(none.contains("No row was measured in both"), "{none}");
    }

    #[test]
    fn views_against_packed() {
        let mut views = testing::row(4096, 4096, 4096, "f16", "none", [Some(200.0), None, None, None]);
        views.packed_us = Some(190.0);
        views.packed_config = "wgmma 128x256".into();
        let mut wrong = testing::row(1000, 1000, 1000, "f16", "none", [Some(10.0), None, None, None]);
        wrong.packed_us = Some(5.0);
        wrong.packed_max_rel_err = Some(0.5);
        wrong.judge();
        assert_eq!(wrong.wrong_sides, ["packed"]);
        let plain = testing::row(16, 16, 16, "f16", "none", [Some(1.0), None, None, None]);
        let md = testing::report(vec![views, wrong, plain]).views_markdown();
        assert!(
            md.contains("| 4096x4096x4096 | f16 | none | 200.0 | 190.0 | 0.95x | — | wgmma 128x256 |"),
            "{md}"
        );
        assert!(
            md.contains("| 1000x1000x1000 | f16 | none | 10.0 | 5.00 | WRONG |"),
            "{md}"
        );
        // A row without a packed time is not listed; a wrong one counts in no mean.
        assert!(!md.contains("16x16x16"), "{md}");
        assert!(
            md.contains("1 row: geometric mean 0.95x, slowest 0.95x (4096x4096x4096 f16 none)."),
            "{md}"
        );
        assert_eq!(testing::report(vec![]).views_markdown(), "");
    }

    #[test]
    fn number_formats() {
        assert_eq!(us(Some(1234.56)), "1234.6");
        assert_eq!(us(Some(9.876)), "9.88");
        assert_eq!(us(Some(0.8123)), "0.812");
        assert_eq!(us(None), "—");
        assert_eq!(us(Some(f64::NAN)), "—");
        assert_eq!(speedup(Some(1.005)), "1.00x");
        assert_eq!(err(Some(0.00123)), "1.2e-3");
        assert_eq!(err(Some(3.0e-7)), "3.0e-7");
        assert_eq!(err(Some(0.0)), "0");
        assert_eq!(err(Some(f64::INFINITY)), "inf");
        assert_eq!(err(Some(f64::NAN)), "NaN");
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
