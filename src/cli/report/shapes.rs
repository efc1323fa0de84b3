//! The benchmark's shape table (`bench/shapes.toml`) and the command-line filter over
//! it, turned into the ordered list of [`Case`]s that `bench` measures.
//!
//! The table has a `[run]` table naming the dtypes and epilogues every shape runs with,
//! and `[[shape]]` tables, each a `group` name and its shapes `mnk = [[m, n, k], ...]`.
//! Everything is checked when the table is parsed, so that a typo fails before a long
//! run starts rather than in the middle of it.

use super::{Row, RowKey};
use serde::Deserialize;
use std::fmt;
use std::path::Path;

/// The dtypes a case may name: "f32" is exact f32 math, "tf32" f32 operands on tf32
/// tensor cores, "tf32x3" f32 operands as three tf32 products of their split parts.
pub const DTYPES: &[&str] = &["f16", "bf16", "f32", "tf32", "tf32x3"];
/// The epilogues a case may name ([`crossgemm::bench::Epilogue`]'s names).
pub const EPILOGUES: &[&str] = &crossgemm::bench::Epilogue::NAMES;
/// The group of a command-line shape that the table does not list.
pub const CLI_GROUP: &str = "cli";

/// The file as written; `deny_unknown_fields` turns a misspelt key into an error
/// instead of a silently ignored setting.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    run: RawRun,
    #[serde(default)]
    shape: Vec<RawShape>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    dtypes: Vec<String>,
    epilogues: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShape {
    group: String,
    mnk: Vec<[usize; 3]>,
}

/// A parsed and checked shape table.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeTable {
    /// Where the table came from (its path, or `<inline>`), for error messages.
    pub source: String,
    /// `[run] dtypes`, in the file's order.
    pub dtypes: Vec<String>,
    /// `[run] epilogues`, in the file's order.
    pub epilogues: Vec<String>,
    /// The groups in the order they first appear; `[[shape]]` tables that repeat a
    /// group name add to that group.
    pub groups: Vec<ShapeGroup>,
}

/// One named group of shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeGroup {
    /// The group name ("square", "skinny", ...).
    pub name: String,
    /// Its shapes as (m, n, k), in the file's order.
    pub shapes: Vec<(usize, usize, usize)>,
}

/// What to run out of a table. `None` takes the table's setting; a list replaces it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Only these groups (each must be in the table). Cannot be combined with `shapes`.
    pub groups: Option<Vec<String>>,
    /// These dtypes instead of `[run] dtypes` (any of [`DTYPES`], listed in the table or
    /// not, so that e.g. "tf32" can be run on request).
    pub dtypes: Option<Vec<String>>,
    /// These epilogues instead of `[run] epilogues` (any of [`EPILOGUES`]).
    pub epilogues: Option<Vec<String>>,
    /// These shapes instead of the table's. Each gets the group of the table that lists
    /// it, else [`CLI_GROUP`], so that a re-run of one table shape reads the same in the
    /// report as the full run.
    pub shapes: Option<Vec<(usize, usize, usize)>>,
}

/// One (shape, dtype, epilogue) to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The shape's group.
    pub group: String,
    /// Rows of the output.
    pub m: usize,
    /// Columns of the output.
    pub n: usize,
    /// The reduction dimension.
    pub k: usize,
    /// One of [`DTYPES`].
    pub dtype: String,
    /// One of [`EPILOGUES`].
    pub epilogue: String,
}

impl Case {
    /// The [`RowKey`] of the row that measures this case.
    pub fn key(&self) -> RowKey {
        RowKey {
            m: self.m,
            n: self.n,
            k: self.k,
            batch: 1,
            dtype: self.dtype.clone(),
            epilogue: self.epilogue.clone(),
        }
    }

    /// A row for this case with nothing measured yet.
    pub fn row(&self) -> Row {
        Row {
            group: self.group.clone(),
            m: self.m,
            n: self.n,
            k: self.k,
            dtype: self.dtype.clone(),
            epilogue: self.epilogue.clone(),
            ..Row::default()
        }
    }
}

impl fmt::Display for Case {
    /// `MxNxK dtype epilogue (group)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.key(), self.group)
    }
}

fn known_list(known: &[&str]) -> String {
    known.join(", ")
}

/// `Err` unless `value` is one of `known`; `what` says which list it came from.
fn check_known(source: &str, what: &str, value: &str, known: &[&str]) -> Result<(), String> {
    if known.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{source}: unknown {what} \"{value}\" (known: {})",
            known_list(known)
        ))
    }
}

fn check_dims(source: &str, where_: &str, (m, n, k): (usize, usize, usize)) -> Result<(), String> {
    if m == 0 || n == 0 || k == 0 {
        Err(format!("{source}: shape {m}x{n}x{k} in {where_} has a zero dimension"))
    } else {
        Ok(())
    }
}

/// Drops repeats, keeping the first occurrence (a list given twice runs once).
fn dedup<T: PartialEq + Clone>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for it in items {
        if !out.contains(it) {
            out.push(it.clone());
        }
    }
    out
}

impl ShapeTable {
    /// Reads and checks the table at `path`.
    pub fn load(path: &Path) -> Result<ShapeTable, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        ShapeTable::parse_named(&text, &path.display().to_string())
    }

    /// Parses and checks a table given as text; errors name it `<inline>`.
    #[cfg(test)]
    pub fn parse(text: &str) -> Result<ShapeTable, String> {
        ShapeTable::parse_named(text, "<inline>")
    }

    /// Parses and checks a table given as text; errors name it `source`.
    pub fn parse_named(text: &str, source: &str) -> Result<ShapeTable, String> {
        let raw: RawTable = toml::from_str(text).map_err(|e| format!("{source}: {}", e.to_string().trim_end()))?;
        if raw.run.dtypes.is_empty() {
            return Err(format!("{source}: [run] dtypes is empty"));
        }
        if raw.run.epilogues.is_empty() {
            return Err(format!("{source}: [run] epilogues is empty"));
        }
        for d in &raw.run.dtypes {
            check_known(source, "dtype", d, DTYPES).map_err(|e| format!("{e} in [run] dtypes"))?;
        }
        for e in &raw.run.epilogues {
            check_known(source, "epilogue", e, EPILOGUES).map_err(|err| format!("{err} in [run] epilogues"))?;
        }
        let mut groups: Vec<ShapeGroup> = Vec::new();
        for s in raw.shape {
            let name = s.group.trim().to_string();
            if name.is_empty() {
                return Err(format!("{source}: a [[shape]] table has an empty group name"));
            }
            if s.mnk.is_empty() {
                return Err(format!("{source}: group \"{name}\" lists no shapes"));
            }
            for [m, n, k] in s.mnk {
                let mnk = (m, n, k);
                check_dims(source, &format!("group \"{name}\""), mnk)?;
                // A shape listed twice would be measured twice and then collapse to one
                // row in the report; that is a mistake in the table, not a request.
                if let Some(other) = groups.iter().find(|g| g.shapes.contains(&mnk)) {
                    return Err(format!(
                        "{source}: shape {m}x{n}x{k} is listed twice (groups \"{}\" and \"{name}\")",
                        other.name
                    ));
                }
                match groups.iter_mut().find(|g| g.name == name) {
                    Some(g) => g.shapes.push(mnk),
                    None => groups.push(ShapeGroup {
                        name: name.clone(),
                        shapes: vec![mnk],
                    }),
                }
            }
        }
        if groups.is_empty() {
            return Err(format!("{source}: no [[shape]] tables"));
        }
        Ok(ShapeTable {
            source: source.to_string(),
            dtypes: dedup(&raw.run.dtypes),
            epilogues: dedup(&raw.run.epilogues),
            groups,
        })
    }

    /// The group that lists `mnk`, if any.
    pub fn group_of(&self, mnk: (usize, usize, usize)) -> Option<&str> {
        self.groups
            .iter()
            .find(|g| g.shapes.contains(&mnk))
            .map(|g| g.name.as_str())
    }

    /// Every shape of the table with its group, in the file's order.
    pub fn shapes(&self) -> Vec<(String, (usize, usize, usize))> {
        self.groups
            .iter()
            .flat_map(|g| g.shapes.iter().map(move |s| (g.name.clone(), *s)))
            .collect()
    }

    /// The cases `filter` selects, ordered by shape (the table's order, or the order
    /// given), then dtype, then epilogue (each in the order of the table or filter).
    /// Repeats in the filter's lists are dropped. An unknown group, dtype or epilogue,
    /// a zero dimension, or groups together with explicit shapes is an error.
    pub fn cases(&self, filter: &Filter) -> Result<Vec<Case>, String> {
        let source = &self.source;
        let shapes: Vec<(String, (usize, usize, usize))> = match (&filter.shapes, &filter.groups) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{source}: give either groups or explicit shapes, not both (explicit shapes replace the table's)"
                ))
            }
            (Some(list), None) => {
                let mut out = Vec::new();
                for &mnk in &dedup(list) {
                    check_dims(source, "the shapes given", mnk)?;
                    let group = self.group_of(mnk).unwrap_or(CLI_GROUP).to_string();
                    out.push((group, mnk));
                }
                out
            }
            (None, Some(wanted)) => {
                let wanted = dedup(wanted);
                for w in &wanted {
                    if !self.groups.iter().any(|g| &g.name == w) {
                        let names: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
                        return Err(format!(
                            "{source}: no shape group \"{w}\" (groups: {})",
                            known_list(&names)
                        ));
                    }
                }
                // The table's order, not the filter's: groups are a selection, and the
                // report reads best in the order the table was written.
                self.shapes().into_iter().filter(|(g, _)| wanted.contains(g)).collect()
            }
            (None, None) => self.shapes(),
        };
        let dtypes = match &filter.dtypes {
            Some(list) => {
                for d in list {
                    check_known(source, "dtype", d, DTYPES).map_err(|e| format!("{e} in the dtypes asked for"))?;
                }
                dedup(list)
            }
            None => self.dtypes.clone(),
        };
        let epilogues = match &filter.epilogues {
            Some(list) => {
                for e in list {
                    check_known(source, "epilogue", e, EPILOGUES)
                        .map_err(|err| format!("{err} in the epilogues asked for"))?;
                }
                dedup(list)
            }
            None => self.epilogues.clone(),
        };
        let mut cases = Vec::with_capacity(shapes.len() * dtypes.len() * epilogues.len());
        for (group, (m, n, k)) in &shapes {
            for dtype in &dtypes {
                for epilogue in &epilogues {
                    cases.push(Case {
                        group: group.clone(),
                        m: *m,
                        n: *n,
                        k: *k,
                        dtype: dtype.clone(),
                        epilogue: epilogue.clone(),
                    });
                }
            }
        }
        Ok(cases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = r#"
        # a comment
        [run]
        dtypes = ["f16", "bf16"]
        epilogues = ["none", "bias_relu"]

        [[shape]]
        group = "square"
        mnk = [[1024, 1024, 1024], [2048, 2048, 2048]]

        [[shape]]
        group = "skinny"
        mnk = [[16, 4096, 4096]]
    "#;

    fn strings(xs: &[&str]) -> Option<Vec<String>> {
        Some(xs.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn parses_the_shipped_table() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/shapes.toml");
        let t = ShapeTable::load(&path).unwrap();
        assert_eq!(t.dtypes, ["f16", "bf16", "f32"]);
        assert_eq!(t.epilogues, ["none", "bias_relu", "bias_gelu"]);
        let names: Vec<&str> = t.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["square", "skinny", "short_k", "narrow_n", "odd", "llm"]);
        let cases = t.cases(&Filter::default()).unwrap();
        assert_eq!(cases.len(), t.shapes().len() * 3 * 3);
        assert_eq!(cases[0].to_string(), "1024x1024x1024 f16 none (square)");
        assert_eq!(t.group_of((1, 12288, 4096)), Some("llm"));
    }

    #[test]
    fn cases_are_ordered_by_shape_then_dtype_then_epilogue() {
        let t = ShapeTable::parse(TABLE).unwrap();
        let cases = t.cases(&Filter::default()).unwrap();
        let keys: Vec<String> = cases.iter().map(|c| c.key().to_string()).collect();
        assert_eq!(
            keys[..5],
            [
                "1024x1024x1024 f16 none",
                "1024x1024x1024 f16 bias_relu",
                "1024x1024x1024 bf16 none",
                "1024x1024x1024 bf16 bias_relu",
                "2048x2048x2048 f16 none",
            ]
        );
        assert_eq!(cases.len(), 12);
        assert_eq!(cases[11].group, "skinny");
        let row = cases[11].row();
        assert_eq!((row.m, row.n, row.k, row.group.as_str()), (16, 4096, 4096, "skinny"));
        assert_eq!(row.ours_us, None);
    }

    #[test]
    fn filter_selects_and_replaces() {
        let t = ShapeTable::parse(TABLE).unwrap();
        let f = Filter {
            groups: strings(&["skinny"]),
            dtypes: strings(&["tf32", "f16", "tf32"]),
            epilogues: strings(&["bias_gelu"]),
            shapes: None,
        };
        let keys: Vec<String> = t.cases(&f).unwrap().iter().map(|c| c.key().to_string()).collect();
        assert_eq!(keys, ["16x4096x4096 tf32 bias_gelu", "16x4096x4096 f16 bias_gelu"]);

        let f = Filter {
            shapes: Some(vec![(2048, 2048, 2048), (3, 5, 7), (3, 5, 7)]),
            dtypes: strings(&["f32"]),
            epilogues: strings(&["none"]),
            ..Filter::default()
        };
        let cases = t.cases(&f).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].group, "square");
        assert_eq!(cases[1].group, CLI_GROUP);
        assert_eq!((cases[1].m, cases[1].n, cases[1].k), (3, 5, 7));
    }

    #[test]
    fn filter_errors_name_the_file_and_value() {
        let t = ShapeTable::parse_named(TABLE, "bench/shapes.toml").unwrap();
        let err = |f: Filter| t.cases(&f).unwrap_err();
        let e = err(Filter {
            groups: strings(&["squares"]),
            ..Filter::default()
        });
        assert!(
            e.contains("bench/shapes.toml") && e.contains("\"squares\"") && e.contains("square, skinny"),
            "{e}"
        );
        let e = err(Filter {
            dtypes: strings(&["f64"]),
            ..Filter::default()
        });
        assert!(e.contains("\"f64\"") && e.contains("tf32"), "{e}");
        let e = err(Filter {
            epilogues: strings(&["relu"]),
            ..Filter::default()
        });
        assert!(e.contains("\"relu\"") && e.contains("bias_relu"), "{e}");
        let e = err(Filter {
            shapes: Some(vec![(4, 0, 4)]),
            ..Filter::default()
        });
        assert!(e.contains("4x0x4") && e.contains("zero"), "{e}");
        let e = err(Filter {
            shapes: Some(vec![(4, 4, 4)]),
            groups: strings(&["square"]),
            ..Filter::default()
        });
        assert!(e.contains("not both"), "{e}");
    }

    #[test]
    fn table_errors_name_the_file_and_value() {
        let bad = |text: &str| ShapeTable::parse_named(text, "t.toml").unwrap_err();
        let run = "[run]\ndtypes = [\"f16\"]\nepilogues = [\"none\"]\n";
        let e = bad(&TABLE.replace("\"bf16\"", "\"fp8\""));
        assert!(
            e.starts_with("t.toml: ") && e.contains("\"fp8\"") && e.contains("[run] dtypes"),
            "{e}"
        );
        let e = bad(&TABLE.replace("\"bias_relu\"", "\"gelu\""));
        assert!(e.contains("\"gelu\"") && e.contains("epilogue"), "{e}");
        let e = bad(&TABLE.replace("[16, 4096, 4096]", "[16, 0, 4096]"));
        assert!(e.contains("16x0x4096") && e.contains("\"skinny\""), "{e}");
        let e = bad(&TABLE.replace("[16, 4096, 4096]", "[1024, 1024, 1024]"));
        assert!(e.contains("listed twice") && e.contains("\"square\""), "{e}");
        let e = bad(&TABLE.replace("[16, 4096, 4096]", "[16, -1, 4096]"));
        assert!(e.starts_with("t.toml: ") && e.contains("line"), "{e}");
        let e = bad(&TABLE.replace("mnk =", "mkn ="));
        assert!(e.contains("mkn"), "{e}");
        let e = bad(&format!("{run}[[shape]]\ngroup = \"g\"\nmnk = [[1, 2]]\n"));
        assert!(e.starts_with("t.toml: "), "{e}");
        let e = bad(run);
        assert!(e.contains("no [[shape]]"), "{e}");
        let e = bad(&format!("{run}[[shape]]\ngroup = \"g\"\nmnk = []\n"));
        assert!(e.contains("\"g\" lists no shapes"), "{e}");
        let e = ShapeTable::load(Path::new("/nonexistent/shapes.toml")).unwrap_err();
        assert!(e.contains("/nonexistent/shapes.toml"), "{e}");
    }

    #[test]
    fn repeated_group_names_add_to_one_group() {
        let text = format!("{TABLE}\n[[shape]]\ngroup = \"square\"\nmnk = [[8, 8, 8]]\n");
        let t = ShapeTable::parse(&text).unwrap();
        assert_eq!(t.groups.len(), 2);
        assert_eq!(t.groups[0].shapes, [(1024, 1024, 1024), (2048, 2048, 2048), (8, 8, 8)]);
    }
}
