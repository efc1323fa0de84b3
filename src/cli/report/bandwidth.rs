//! The decode-size rows' bytes over their times, as a share of the device-to-device copy
//! measured in the same run: issue 10's measure for the LLM rows (M = 1, 16 and 128),
//! which stream their large operand once, so that bandwidth and not arithmetic is what
//! they are held to.

use super::markdown::{case_cells, us, MISSING};
use super::{Report, Row};
use std::fmt::Write;

/// Rows whose smaller output side is at most this are decode-size.
pub const DECODE_SIDE: usize = 128;

/// Bytes a row's product moves at the least: A, B and C once each (per product of a
/// batch), in the row's element size (f16 and bf16 2 bytes; f32 and tf32, whose outputs
/// are f32 too, 4). The epilogue's vectors are left out.
pub fn min_bytes(r: &Row) -> f64 {
    let esz = if matches!(r.dtype.as_str(), "f16" | "bf16") {
        2.0
    } else {
        4.0
    };
    let (m, n, k) = (r.m as f64, r.n as f64, r.k as f64);
    r.batch.max(1) as f64 * esz * (m * k + k * n + m * n)
}

impl Report {
    /// Per decode-size row (`min(M, N) <= DECODE_SIDE`): the bytes its product moves at
    /// the least ([`min_bytes`]), and for ours and cuBLAS those bytes over the time in
    /// GB/s and as a share of the run's copy bandwidth. Empty without such rows or
    /// without a measured copy.
    pub fn bandwidth_markdown(&self) -> String {
        let Some(copy) = self.copy_gbps.filter(|g| g.is_finite() && *g > 0.0) else {
            return String::new();
        };
        let rows: Vec<&Row> = self.rows.iter().filter(|r| r.m.min(r.n) <= DECODE_SIDE).collect();
        if rows.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "\n## Decode-size rows against the copy bandwidth\n\nBytes of A, B and C once each over the time, as GB/s and as a share of this run's device-to-device copy ({copy:.0} GB/s).\n\n"
        );
        out.push_str("| shape (MxNxK) | dtype | epilogue | MB | ours µs | ours GB/s | ours % of copy | cuBLAS µs | cuBLAS GB/s | cuBLAS % of copy |\n");
        out.push_str("|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|\n");
        let rate = |t: Option<f64>, bytes: f64, wrong: bool| match t.filter(|&t| t > 0.0 && !wrong) {
            Some(t) => {
                let gbps = bytes / (t * 1e-6) / 1e9;
                (format!("{gbps:.0}"), format!("{:.0}%", 100.0 * gbps / copy))
            }
            None => (MISSING.to_string(), MISSING.to_string()),
        };
        for r in rows {
            let bytes = min_bytes(r);
            let (ours, ours_share) = rate(r.ours_us, bytes, r.is_wrong("ours"));
            let (cublas, cublas_share) = rate(r.cublas_us, bytes, r.is_wrong("cublas"));
            let _ = writeln!(
                out,
                "{} {:.1} | {} | {ours} | {ours_share} | {} | {cublas} | {cublas_share} |",
                case_cells(r),
                bytes / 1e6,
                us(r.ours_us),
                us(r.cublas_us),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// 1x12288x4096 f16 moves 100.7 MB: in 31.4 µs that is 3207 GB/s, 78% of a
    /// 4136 GB/s copy; the 4096³ row is not decode-size and stays out.
    #[test]
    fn decode_rows_against_the_copy() {
        let mut rep = testing::report(vec![
            testing::row(1, 12288, 4096, "f16", "none", [Some(31.4), Some(36.8), None, None]),
            testing::row(4096, 4096, 4096, "f16", "none", [Some(180.0), Some(181.0), None, None]),
        ]);
        assert_eq!(rep.bandwidth_markdown(), "", "no copy measured");
        rep.copy_gbps = Some(4136.0);
        let md = rep.bandwidth_markdown();
        assert!(
            md.contains("| 1x12288x4096 | f16 | none | 100.7 | 31.4 | 3207 | 78% | 36.8 | 2736 | 66% |"),
            "{md}"
        );
        assert!(!md.contains("4096x4096x4096"), "{md}");
        assert!(rep.to_markdown().contains("## Decode-size rows"));
        // A batch moves each product's bytes; tf32 rows move 4-byte elements.
        let mut b = testing::row(128, 4096, 128, "tf32", "none", [Some(10.0), None, None, None]);
        b.batch = 64;
        assert_eq!(
            min_bytes(&b),
            64.0 * 4.0 * (128.0 * 128.0 + 128.0 * 4096.0 + 128.0 * 4096.0)
        );
        let md = testing::report(vec![b]).bandwidth_markdown();
        assert_eq!(md, "", "no copy in that report");
    }
}
