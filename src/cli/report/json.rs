//! The report as JSON: writing it (atomically, so that a reader never sees half a
//! report), reading it back (refusing files of another format or a newer version), and
//! combining the reports of a run split over several processes.

use super::{Report, REPORT_FORMAT, REPORT_VERSION};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

impl Report {
    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> Result<String, String> {
        serde_json::to_string_pretty(self).map_err(|e| format!("cannot encode the report as JSON: {e}"))
    }

    /// Writes the report as pretty JSON to `path`, creating its folder. The text goes to
    /// a temporary file beside `path` that is then renamed over it, so that an
    /// interrupted run leaves the previous report intact.
    pub fn write_json(&self, path: &Path) -> Result<(), String> {
        let mut text = self.to_json()?;
        text.push('\n');
        write_atomic(path, text.as_bytes())
    }

    /// Reads a report written by [`Report::write_json`] (this or an older version).
    pub fn read_json(path: &Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Report::from_json(&text, &path.display().to_string())
    }

    /// Parses a report from JSON text; errors name it `source`.
    pub fn from_json(text: &str, source: &str) -> Result<Report, String> {
        // Format and version first, from an untyped parse: a newer report may not fit
        // this build's types, and "newer version" is the useful message then, not
        // "missing field".
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("{source}: not valid JSON: {e}"))?;
        let format = value.get("format").and_then(|f| f.as_str());
        if format != Some(REPORT_FORMAT) {
            let found = format.map_or_else(|| "none".to_string(), |f| format!("\"{f}\""));
            return Err(format!(
                "{source}: not a crossgemm bench report (format {found}, expected \"{REPORT_FORMAT}\")"
            ));
        }
        let version = value.get("version").and_then(|v| v.as_u64());
        match version {
            Some(v) if v <= u64::from(REPORT_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "{source}: report version {v} was written by a newer crossgemm (this build reads up to version {REPORT_VERSION})"
                ))
            }
            None => return Err(format!("{source}: the report has no valid \"version\"")),
        }
        serde_json::from_value(value).map_err(|e| format!("{source}: not a valid report: {e}"))
    }

    /// Combines the reports of one run split over several processes, in order: rows
    /// are concatenated, a later part's row replacing an earlier one with the same
    /// (m, n, k, dtype, epilogue) in place; `copy_gbps`, `launch_overhead` and
    /// `cublas_version` come from the first part that has them; notes are unioned in
    /// order. Every part must come from the same device (name and driver). Different
    /// device ids (one process per GPU of a host) are listed comma-separated, and
    /// parts built from different commits are noted.
    pub fn combine(parts: Vec<Report>) -> Result<Report, String> {
        let mut parts = parts.into_iter();
        let Some(mut out) = parts.next() else {
            return Err("no reports to combine".to_string());
        };
        out.format = REPORT_FORMAT.to_string();
        out.version = REPORT_VERSION;
        // A part may itself hold repeats; the same later-wins rule applies to them.
        let rows = std::mem::take(&mut out.rows);
        rows.into_iter().for_each(|r| out.upsert(r));
        let mut ids: Vec<String> = split_ids(&out.device_id);
        let mut commits: Vec<String> = vec![out.commit.clone()];
        for (i, part) in parts.enumerate() {
            if part.device != out.device || part.driver != out.driver {
                return Err(format!(
                    "cannot combine reports from different devices: part 1 ran on {} (driver {}), part {} on {} (driver {})",
                    out.device,
                    out.driver,
                    i + 2,
                    part.device,
                    part.driver
                ));
            }
            for id in split_ids(&part.device_id) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            if !commits.contains(&part.commit) {
                commits.push(part.commit.clone());
            }
            if out.copy_gbps.is_none() {
                out.copy_gbps = part.copy_gbps;
            }
            if out.launch_overhead.is_none() {
                out.launch_overhead = part.launch_overhead;
            }
            if out.cublas_version.is_none() {
                out.cublas_version = part.cublas_version;
            }
            for note in part.notes {
                if !out.notes.contains(&note) {
                    out.notes.push(note);
                }
            }
            part.rows.into_iter().for_each(|r| out.upsert(r));
        }
        out.device_id = ids.join(", ");
        if commits.len() > 1 {
            let note = format!(
                "combined from parts built from different commits: {}",
                commits.join(", ")
            );
            if !out.notes.contains(&note) {
                out.notes.push(note);
            }
        }
        Ok(out)
    }
}

fn split_ids(ids: &str) -> Vec<String> {
    ids.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`
/// (a rename within one folder replaces the file in one step).
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = parent {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let name = path
        .file_name()
        .ok_or_else(|| format!("{} is not a file path", path.display()))?
        .to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let result = std::fs::write(&tmp, bytes)
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, path)
                .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), path.display()))
        });
    if result.is_err() {
        // Best effort: the error above is the one worth reporting.
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The UTC date of `t` as YYYY-MM-DD (the report's `date`), without a date library.
pub fn utc_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (secs / 86_400) as i64;
    // Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::super::testing::{self, report};
    use super::super::{LaunchOverhead, Row};
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    /// A fresh folder under the system temp folder for one test.
    fn temp_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("crossgemm-report-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn row(m: usize, dtype: &str, epilogue: &str, ours: f64) -> Row {
        testing::row(m, m, m, dtype, epilogue, [Some(ours), Some(2.0 * ours), None, None])
    }

    /// The report at `path` with its derived fields recomputed: serde_json (without its
    /// `float_roundtrip` feature) may read a float back one ulp off, and the derived
    /// fields are the only inexact ones here.
    fn reread(path: &Path) -> Report {
        let mut r = Report::read_json(path).unwrap();
        r.finish_rows();
        r
    }

    #[test]
    fn json_round_trip_through_a_new_folder() {
        let dir = temp_dir("round-trip");
        let path = dir.join("deep/er/report.json");
        let mut rep = report(vec![
            row(1024, "f16", "none", 10.0),
            row(2048, "bf16", "bias_relu", 50.0),
        ]);
        rep.copy_gbps = Some(3900.5);
        rep.notes.push("medians of 100 runs".into());
        rep.write_json(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("\n  \"format\": \"crossgemm-bench\""),
            "pretty JSON expected"
        );
        assert!(text.contains("\"triton_us\": null"));
        assert_eq!(reread(&path), rep);
        // Overwriting leaves no temporary file behind.
        rep.rows.pop();
        rep.write_json(&path).unwrap();
        assert_eq!(reread(&path), rep);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["report.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn read_refuses_other_formats_and_newer_versions() {
        let good = report(vec![row(64, "f16", "none", 1.0)]).to_json().unwrap();
        assert!(Report::from_json(&good, "r.json").is_ok());
        let e = Report::from_json(&good.replace("crossgemm-bench", "tuning-records"), "r.json").unwrap_err();
        assert!(
            e.contains("r.json") && e.contains("\"tuning-records\"") && e.contains("not a crossgemm"),
            "{e}"
        );
        let newer = good.replace("\"version\": 1", "\"version\": 2");
        let newer = newer.replace("\"rows\"", "\"measurements\""); // a newer layout must not matter
        let e = Report::from_json(&newer, "r.json").unwrap_err();
        assert!(e.contains("version 2") && e.contains("newer"), "{e}");
        let e = Report::from_json("{\"rows\": []}", "r.json").unwrap_err();
        assert!(e.contains("format none"), "{e}");
        let e = Report::from_json(
            "{\"format\": \"crossgemm-bench\", \"version\": 1, \"rows\": 3",
            "r.json",
        )
        .unwrap_err();
        assert!(e.contains("r.json") && e.contains("not valid JSON"), "{e}");
        let e = Report::from_json("{\"format\": \"crossgemm-bench\", \"version\": 1}", "r.json").unwrap_err();
        assert!(e.contains("not a valid report"), "{e}");
        let e = Report::read_json(Path::new("/nonexistent/r.json")).unwrap_err();
        assert!(e.contains("/nonexistent/r.json"), "{e}");
    }

    #[test]
    fn combine_concatenates_and_later_rows_win() {
        let mut a = report(vec![row(1024, "f16", "none", 10.0), row(2048, "f16", "none", 40.0)]);
        a.notes = vec!["n1".into()];
        let mut b = report(vec![row(1024, "f16", "none", 8.0), row(4096, "f16", "none", 300.0)]);
        b.device_id = "cuda:1".into();
        b.copy_gbps = Some(4000.0);
        b.cublas_version = Some("12.4".into());
        b.launch_overhead = Some(LaunchOverhead {
            shape: "64x64x64".into(),
            ours_us: 4.0,
            bare_us: 2.5,
        });
        b.notes = vec!["n1".into(), "n2".into()];
        let mut c = report(vec![]);
        c.copy_gbps = Some(1.0);
        c.commit = "def5678".into();
        let out = Report::combine(vec![a, b, c]).unwrap();
        let ms: Vec<(usize, Option<f64>)> = out.rows.iter().map(|r| (r.m, r.ours_us)).collect();
        assert_eq!(ms, [(1024, Some(8.0)), (2048, Some(40.0)), (4096, Some(300.0))]);
        assert_eq!(out.copy_gbps, Some(4000.0));
        assert_eq!(out.cublas_version.as_deref(), Some("12.4"));
        assert_eq!(out.launch_overhead.as_ref().map(|l| l.bare_us), Some(2.5));
        assert_eq!(out.device_id, "cuda:0, cuda:1");
        assert_eq!(out.commit, "abc1234");
        assert_eq!(out.notes[..2], ["n1", "n2"]);
        assert!(out.notes[2].contains("abc1234, def5678"), "{:?}", out.notes);
    }

    #[test]
    fn combine_refuses_other_devices_and_nothing() {
        let a = report(vec![]);
        let mut b = report(vec![]);
        b.device = "NVIDIA A100".into();
        let e = Report::combine(vec![a, b]).unwrap_err();
        assert!(e.contains("NVIDIA H200") && e.contains("NVIDIA A100"), "{e}");
        assert!(Report::combine(vec![]).is_err());
        let single = report(vec![row(8, "f32", "none", 1.0)]);
        assert_eq!(Report::combine(vec![single.clone()]).unwrap(), single);
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        assert_eq!(utc_date(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29");
        assert_eq!(utc_date(UNIX_EPOCH + Duration::from_secs(1_735_689_599)), "2024-12-31");
        assert_eq!(utc_date(UNIX_EPOCH + Duration::from_secs(1_735_689_600)), "2025-01-01");
    }
}
