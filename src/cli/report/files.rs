//! Where a report's files go (`<dir>/<name or device-date>.<ext>`) and writing them.

use super::{write_svg, Report};
use std::path::{Path, PathBuf};

/// `<dir>/<name or device-date>.<ext>`.
pub fn output_path(rep: &Report, dir: &Path, name: Option<&str>, ext: &str) -> PathBuf {
    let stem = match name {
        Some(n) => n.to_string(),
        None => format!("{}-{}", slug(&rep.device), rep.date),
    };
    dir.join(format!("{stem}.{ext}"))
}

/// The report as JSON, markdown (with `extra_md` appended) and an SVG chart, side by side.
pub fn write_files(rep: &Report, dir: &Path, name: Option<&str>, extra_md: Option<&str>) -> Result<(), String> {
    let json = output_path(rep, dir, name, "json");
    rep.write_json(&json)?;
    let md = output_path(rep, dir, name, "md");
    let text = rep.to_markdown() + extra_md.unwrap_or("");
    std::fs::write(&md, text).map_err(|e| format!("writing {}: {e}", md.display()))?;
    let svg = output_path(rep, dir, name, "svg");
    write_svg(rep, &svg)?;
    println!("wrote {}, {} and {}", json.display(), md.display(), svg.display());
    Ok(())
}

/// "NVIDIA H200" → "nvidia-h200".
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("NVIDIA H200"), "nvidia-h200");
        assert_eq!(slug("pthread-Intel(R) Xeon(R)  CPU"), "pthread-intel-r-xeon-r-cpu");
    }
}
