//! The SVG chart of speed-ups, drawn with plotters' SVG backend (text as SVG `<text>`
//! elements, laid out with plotters' built-in font metrics: no font files needed).
//!
//! Layout: one file, a title band (device, date, legend) and below it one panel per
//! dtype (f16, bf16, f32, tf32, in that order), stacked vertically. A panel is a
//! horizontal grouped bar chart: one group per row of the report (labelled with the
//! shape and epilogue, e.g. `4096³ bias_relu`, in the report's order, alternate
//! shapes on a shaded band), a bar per baseline that ran (×cuBLAS, ×cuBLASLt, ×Triton).
//! The speed-up axis is logarithmic and the bars start at parity (1.0, a bold line):
//! a bar to the right is crossgemm faster, to the left slower, and 2x and 0.5x are
//! equally long. The canvas grows with the number of rows (about 26 px per row with
//! three baselines), so all ~230 rows of the full table stay legible; a
//! [`ChartFilter`] narrows the chart to some dtypes or epilogues. Rows without any
//! speed-up are left out (the panel's caption counts them); a chart with nothing to
//! show says "no speed-ups measured".

use super::json::write_atomic;
use super::shapes::DTYPES;
use super::{ordered, Report, Row};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;
use std::path::Path;

/// Which rows a chart shows; `None` shows all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChartFilter {
    /// Only rows of these dtypes.
    pub dtypes: Option<Vec<String>>,
    /// Only rows with these epilogues (e.g. `none` and `bias_relu` for a shorter chart).
    pub epilogues: Option<Vec<String>>,
}

impl ChartFilter {
    fn keeps(&self, r: &Row) -> bool {
        let within = |list: &Option<Vec<String>>, v: &str| list.as_ref().is_none_or(|l| l.iter().any(|x| x == v));
        within(&self.dtypes, &r.dtype) && within(&self.epilogues, &r.epilogue)
    }
}

/// A linear f64 axis with ticks exactly at `keys`. plotters' own `with_key_points` on
/// an f64 range cannot take a label formatter (f64 ranges have no default
/// formatting), and both axes here need one: row labels and "1.5x" ticks.
struct Axis {
    range: Range<f64>,
    keys: Vec<f64>,
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        if span <= 0.0 || !v.is_finite() {
            return (limit.0 + limit.1) / 2;
        }
        let t = (v - self.range.start) / span;
        limit.0 + ((limit.1 - limit.0) as f64 * t + 1e-3).floor() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Only bold points: light mesh lines between the ticks would be noise.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// One baseline: its legend text, colour and speed-up.
struct Series {
    name: &'static str,
    color: RGBColor,
    get: fn(&Row) -> Option<f64>,
}

const SERIES: [Series; 3] = [
    Series {
        name: "×cuBLAS",
        color: RGBColor(31, 119, 180),
        get: |r| r.speedup_vs_cublas,
    },
    Series {
        name: "×cuBLASLt",
        color: RGBColor(255, 127, 14),
        get: |r| r.speedup_vs_cublaslt,
    },
    Series {
        name: "×Triton",
        color: RGBColor(44, 160, 44),
        get: |r| r.speedup_vs_triton,
    },
];

/// A speed-up that can be drawn: positive and finite.
fn value(s: &Series, r: &Row) -> Option<f64> {
    (s.get)(r).filter(|v| v.is_finite() && *v > 0.0)
}

const WIDTH: u32 = 1200;
const TITLE_H: u32 = 80;
const BAR_H: u32 = 6;
const ROW_GAP: u32 = 8;
/// A row label is about 12 px high.
const MIN_ROW_H: u32 = 20;
/// Caption, the two x-axis label areas and margins of one panel.
const PANEL_EXTRA_H: u32 = 155;
/// Bars never reach past 64x either way, so one outlier cannot flatten the others.
const CLAMP_LOG2: f64 = 6.0;
const FONT: &str = "sans-serif";
// plotters draws text at 1/1.24 of the size asked for; the sizes below are what is
// asked for (28 → a 22.6 px title).
const AXIS_LABEL: &str = "speed-up (>1: crossgemm faster), log scale";

/// Writes the speed-up chart of every row of `report` to `path` as SVG (see the module
/// documentation for the layout), creating the folder and replacing the file
/// atomically. An empty report gives a valid chart saying so.
pub fn write_svg(report: &Report, path: &Path) -> Result<(), String> {
    write_svg_filtered(report, path, &ChartFilter::default())
}

/// [`write_svg`] for the rows `filter` keeps.
pub fn write_svg_filtered(report: &Report, path: &Path, filter: &ChartFilter) -> Result<(), String> {
    let svg = render_svg(report, filter)?;
    write_atomic(path, svg.as_bytes())
}

/// The chart as SVG text.
pub fn render_svg(report: &Report, filter: &ChartFilter) -> Result<String, String> {
    let rows: Vec<&Row> = report.rows.iter().filter(|r| filter.keeps(r)).collect();
    let drawn = |r: &&Row| SERIES.iter().any(|s| value(s, r).is_some());
    // Only the baselines that ran somewhere take room in a group.
    let series: Vec<&Series> = SERIES
        .iter()
        .filter(|s| rows.iter().any(|r| value(s, r).is_some()))
        .collect();
    let dtypes = ordered(rows.iter().map(|r| r.dtype.as_str()), DTYPES);
    let panels: Vec<(String, Vec<&Row>, usize)> = dtypes
        .iter()
        .map(|d| {
            let of_dtype: Vec<&Row> = rows.iter().copied().filter(|r| &r.dtype == d).collect();
            let shown: Vec<&Row> = of_dtype.iter().copied().filter(drawn).collect();
            let hidden = of_dtype.len() - shown.len();
            (d.clone(), shown, hidden)
        })
        .filter(|(_, shown, _)| !shown.is_empty())
        .collect();

    let height = if panels.is_empty() {
        TITLE_H + 120
    } else {
        TITLE_H
            + panels
                .iter()
                .map(|(_, shown, _)| panel_height(shown, &series))
                .sum::<u32>()
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let (title_area, mut rest) = root.split_vertically(TITLE_H);
        draw_title(&title_area, report, &series)?;
        if panels.is_empty() {
            let style = TextStyle::from((FONT, 24).into_font()).color(&BLACK);
            rest.draw_text("no speed-ups measured", &style, (40, 40))
                .map_err(draw_err)?;
        }
        let (lo, hi) = x_range(panels.iter().flat_map(|(_, shown, _)| shown.iter()), &series);
        for (dtype, shown, hidden) in &panels {
            let (area, below) = rest.split_vertically(panel_height(shown, &series));
            draw_panel(&area, dtype, shown, *hidden, &panel_series(shown, &series), (lo, hi))?;
            rest = below;
        }
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

/// The baselines with a bar in `rows`: a panel gives its groups room only for those
/// (f32 has no cuBLASLt or Triton bars), in the legend's order.
fn panel_series<'a>(rows: &[&Row], series: &[&'a Series]) -> Vec<&'a Series> {
    series
        .iter()
        .copied()
        .filter(|s| rows.iter().any(|r| value(s, r).is_some()))
        .collect()
}

/// Height of a panel: its fixed parts and a row height that fits its bars and a label.
fn panel_height(rows: &[&Row], series: &[&Series]) -> u32 {
    let bars = panel_series(rows, series).len().max(1) as u32;
    let row_h = (bars * BAR_H + ROW_GAP).max(MIN_ROW_H);
    PANEL_EXTRA_H + rows.len() as u32 * row_h
}

fn draw_err<E: std::fmt::Display>(e: E) -> String {
    format!("cannot draw the chart: {e}")
}

/// Title, subtitle and the legend (one for all panels, so that none hides a bar).
fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    report: &Report,
    series: &[&Series],
) -> Result<(), String> {
    let device = if report.device.is_empty() {
        "unknown device"
    } else {
        &report.device
    };
    let date = if report.date.is_empty() {
        "undated"
    } else {
        &report.date
    };
    let title = format!("crossgemm speed-ups on {device}, {date}");
    let big = TextStyle::from((FONT, 28).into_font()).color(&BLACK);
    let small = TextStyle::from((FONT, 16).into_font()).color(&BLACK);
    area.draw_text(&title, &big, (20, 12)).map_err(draw_err)?;
    let sub = format!(
        "time of the baseline / time of crossgemm; commit {}",
        if report.commit.is_empty() {
            "unknown"
        } else {
            &report.commit
        }
    );
    area.draw_text(&sub, &small, (20, 42)).map_err(draw_err)?;
    let mut x = 620;
    for s in series {
        area.draw(&Rectangle::new([(x, 44), (x + 14, 56)], s.color.filled()))
            .map_err(draw_err)?;
        area.draw_text(s.name, &small, (x + 20, 43)).map_err(draw_err)?;
        x += 130;
    }
    Ok(())
}

/// The speed-up axis in log2 units: the values' range with parity inside it, at least
/// 0.5x..2x, padded, and clamped to ±[`CLAMP_LOG2`].
fn x_range<'a>(rows: impl Iterator<Item = &'a &'a Row>, series: &[&Series]) -> (f64, f64) {
    let (mut lo, mut hi) = (-1.0f64, 1.0f64);
    for r in rows {
        for s in series {
            if let Some(v) = value(s, r) {
                let l = v.log2().clamp(-CLAMP_LOG2, CLAMP_LOG2);
                lo = lo.min(l);
                hi = hi.max(l);
            }
        }
    }
    let pad = 0.08 * (hi - lo);
    (lo - pad, hi + pad)
}

/// Tick values (as speed-ups) for the log2 range `lo..hi`: round numbers, thinned to
/// about a dozen.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    const FINE: [f64; 29] = [
        1.0 / 64.0,
        1.0 / 32.0,
        1.0 / 16.0,
        0.1,
        0.125,
        0.2,
        0.25,
        0.33,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
        1.0,
        1.1,
        1.25,
        1.5,
        1.75,
        2.0,
        2.5,
        3.0,
        4.0,
        5.0,
        8.0,
        10.0,
        16.0,
        32.0,
        64.0,
    ];
    const COARSE: [f64; 13] = [
        1.0 / 64.0,
        1.0 / 16.0,
        0.125,
        0.25,
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        16.0,
        32.0,
        64.0,
        0.1,
    ];
    let inside = |v: &f64| (lo..=hi).contains(&v.log2());
    let fine: Vec<f64> = FINE.iter().copied().filter(inside).collect();
    if fine.len() <= 14 {
        return fine;
    }
    let mut coarse: Vec<f64> = COARSE.iter().copied().filter(inside).collect();
    coarse.sort_by(f64::total_cmp);
    coarse
}

fn tick_label(log2: f64) -> String {
    let v = log2.exp2();
    let text = if v >= 1.0 || (v * 100.0).fract().abs() < 1e-6 {
        format!("{v:.2}")
    } else {
        format!("1/{:.0}", 1.0 / v)
    };
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}x")
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    dtype: &str,
    rows: &[&Row],
    hidden: usize,
    series: &[&Series],
    (lo, hi): (f64, f64),
) -> Result<(), String> {
    let n = rows.len();
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.shape_label(), r.epilogue))
        .collect();
    let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32 * 7 + 16;
    let rows_text = |n: usize| {
        if n == 1 {
            "1 row".to_string()
        } else {
            format!("{n} rows")
        }
    };
    let caption = if hidden == 0 {
        format!("{dtype}: {}", rows_text(n))
    } else {
        format!(
            "{dtype}: {} ({} without any speed-up not shown)",
            rows_text(n),
            rows_text(hidden)
        )
    };
    let x_ticks: Vec<f64> = ticks(lo, hi).iter().map(|v| v.log2()).collect();
    // Row i is drawn at the top of the panel first: y runs upwards in plotters.
    let center = |i: usize| n as f64 - i as f64 - 0.5;
    let centers: Vec<f64> = (0..n).map(center).collect();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 22))
        .margin(10)
        .margin_right(30)
        .x_label_area_size(45)
        // Tick labels on top as well: a panel of the full table is ~2000 px tall.
        .set_label_area_size(LabelAreaPosition::Top, 45)
        .y_label_area_size(label_w.min(400))
        .build_cartesian_2d(
            Axis {
                range: lo..hi,
                keys: x_ticks,
            },
            Axis {
                range: 0.0..n as f64,
                keys: centers,
            },
        )
        .map_err(draw_err)?;
    let y_label = |y: &f64| {
        let i = (n as f64 - 0.5 - y).round();
        if i >= 0.0 && (i as usize) < n {
            labels[i as usize].clone()
        } else {
            String::new()
        }
    };
    let x_label = |x: &f64| tick_label(*x);
    // Shade every other shape, so that a shape's epilogue rows read as one block.
    let mut shade = false;
    let mut bands = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if i > 0 && (r.m, r.n, r.k) != (rows[i - 1].m, rows[i - 1].n, rows[i - 1].k) {
            shade = !shade;
        }
        if shade {
            let c = center(i);
            bands.push(Rectangle::new(
                [(lo, c - 0.5), (hi, c + 0.5)],
                RGBColor(243, 243, 243).filled(),
            ));
        }
    }
    chart.draw_series(bands).map_err(draw_err)?;

    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(AXIS_LABEL)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(draw_err)?;

    let bar = 0.8 / series.len().max(1) as f64;
    for (j, s) in series.iter().enumerate() {
        let bars = rows.iter().enumerate().filter_map(|(i, r)| {
            let v = value(s, r)?.log2().clamp(lo, hi);
            let top = center(i) + 0.4 - j as f64 * bar;
            Some(Rectangle::new([(0.0, top), (v, top - bar)], s.color.filled()))
        });
        chart.draw_series(bars).map_err(draw_err)?;
    }
    let parity = PathElement::new(vec![(0.0, 0.0), (0.0, n as f64)], BLACK.stroke_width(2));
    chart.draw_series(std::iter::once(parity)).map_err(draw_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{report, row};
    use super::*;

    fn temp_svg(test: &str) -> std::path::PathBuf {
        std::env::temp_dir()
            .join(format!("crossgemm-report-{}-{test}", std::process::id()))
            .join("chart.svg")
    }

    #[test]
    fn chart_is_valid_svg_with_title_labels_and_text() {
        let rep = report(vec![
            row(
                4096,
                4096,
                4096,
                "f16",
                "none",
                [Some(200.0), Some(300.0), Some(250.0), Some(180.0)],
            ),
            row(
                4096,
                4096,
                4096,
                "f16",
                "bias_relu",
                [Some(200.0), Some(260.0), Some(210.0), None],
            ),
            row(
                16,
                4096,
                4096,
                "bf16",
                "none",
                [Some(10.0), Some(5.0), None, Some(40.0)],
            ),
            row(8, 8, 8, "f32", "none", [Some(1.0), None, None, None]),
        ]);
        let path = temp_svg("chart");
        write_svg(&rep, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        for s in [
            "crossgemm speed-ups on NVIDIA H200, 2025-01-02",
            "4096³ bias_relu",
            "16×4096×4096 none",
            "×cuBLASLt",
            "×Triton",
            "speed-up (&gt;1: crossgemm faster)",
            "f16: 2 rows",
            "bf16: 1 row",
            "\n1x\n",
            "\n0.5x\n",
        ] {
            assert!(svg.contains(s), "missing {s:?}");
        }
        assert!(svg.contains("<text"), "text must be rendered without font files");
        // The f32 row has no speed-up: no panel for it.
        assert!(!svg.contains("f32:"));
        // Rows make the canvas taller.
        let many = report(
            (1..=40)
                .map(|i| row(64 * i, 64, 64, "f16", "none", [Some(1.0), Some(1.5), None, None]))
                .collect(),
        );
        let tall = render_svg(&many, &ChartFilter::default()).unwrap();
        assert!(tall.len() > svg.len() / 2 && height_of(&tall) > height_of(&svg));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    fn height_of(svg: &str) -> u32 {
        let at = svg.find("height=\"").unwrap() + "height=\"".len();
        svg[at..].split('"').next().unwrap().parse().unwrap()
    }

    #[test]
    fn chart_of_nothing_says_so() {
        for rep in [
            report(vec![]),
            report(vec![row(8, 8, 8, "f16", "none", [Some(1.0), None, None, None])]),
        ] {
            let path = temp_svg("empty");
            write_svg(&rep, &path).unwrap();
            let svg = std::fs::read_to_string(&path).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("no speed-ups measured"));
            assert!(svg.contains("crossgemm speed-ups on NVIDIA H200"));
            std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        }
        let svg = render_svg(&Report::default(), &ChartFilter::default()).unwrap();
        assert!(svg.contains("unknown device"));
    }

    #[test]
    fn chart_filter_and_extreme_values() {
        let rep = report(vec![
            row(
                1024,
                1024,
                1024,
                "f16",
                "none",
                [Some(1.0), Some(1e6), Some(1e-6), None],
            ),
            row(1024, 1024, 1024, "f16", "bias_gelu", [Some(2.0), Some(3.0), None, None]),
        ]);
        let filter = ChartFilter {
            epilogues: Some(vec!["none".into()]),
            ..ChartFilter::default()
        };
        let svg = render_svg(&rep, &filter).unwrap();
        assert!(svg.contains("1024³ none") && !svg.contains("bias_gelu"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        let only_f32 = ChartFilter {
            dtypes: Some(vec!["f32".into()]),
            ..ChartFilter::default()
        };
        assert!(render_svg(&rep, &only_f32).unwrap().contains("no speed-ups measured"));
    }

    #[test]
    fn tick_labels() {
        assert_eq!(tick_label(0.0), "1x");
        assert_eq!(tick_label(1.0), "2x");
        assert_eq!(tick_label(-1.0), "0.5x");
        assert_eq!(tick_label(1.25f64.log2()), "1.25x");
        assert_eq!(tick_label(-4.0), "1/16x");
        let t = ticks(-1.2, 1.2);
        assert!(
            t.contains(&1.0) && t.contains(&0.5) && t.contains(&2.0) && t.len() <= 14,
            "{t:?}"
        );
        let wide = ticks(-6.5, 6.5);
        assert!(wide.len() <= 14 && wide.contains(&1.0), "{wide:?}");
    }
}
