//! The code's shape, checked: no import cycle between the top-level modules of any crate
//! of the workspace (each layer uses only those below it, DESIGN.md "Architecture"), and
//! no source file over [`MAX_LINES`] lines before its unit tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be, not counting its `#[cfg(test)]` module.
const MAX_LINES: usize = 800;

/// The `src/` folder of every crate of the workspace.
fn crate_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["src", "gemm-core/src", "gemm-macros/src", "gemm-runtime/src"]
        .iter()
        .map(|d| root.join(d))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text of a file before its unit tests, without `//` comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let body = text.split("#[cfg(test)]").next().unwrap_or("");
    body.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers that follow `crate::` in `code`, including those of a braced group
/// (`crate::{a, b::c}` names `a` and `b`).
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    for (i, _) in code.match_indices("crate::") {
        if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` in a macro, or part of a longer path
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    refs.insert(name);
                }
            }
        } else {
            refs.insert(ident(rest));
        }
    }
    refs
}

/// Top-level module → the top-level modules it names, for the crate rooted at `src`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let top = |p: &Path| -> String {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        first.trim_end_matches(".rs").to_string()
    };
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = top(f);
        if m == "lib" || m == "main" {
            continue;
        }
        let refs = crate_refs(&code(f));
        g.entry(m.clone())
            .or_default()
            .extend(refs.into_iter().filter(|r| *r != m));
    }
    let names: BTreeSet<String> = g.keys().cloned().collect();
    for v in g.values_mut() {
        v.retain(|r| names.contains(r));
    }
    g
}

/// A cycle of `g` as a path `a -> b -> .. -> a`, if there is one.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        v: &str,
        mark: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        mark.insert(v.to_string(), Mark::Open);
        path.push(v.to_string());
        for w in &g[v] {
            match mark[w] {
                Mark::Open => {
                    let start = path.iter().position(|p| p == w).unwrap();
                    let mut cycle = path[start..].to_vec();
                    cycle.push(w.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(g, w, mark, path) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        mark.insert(v.to_string(), Mark::Done);
        None
    }
    let mut mark: BTreeMap<String, Mark> = g.keys().map(|k| (k.clone(), Mark::New)).collect();
    for v in g.keys() {
        if mark[v] == Mark::New {
            if let Some(c) = visit(g, v, &mut mark, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let mut cycles = Vec::new();
    for src in crate_sources() {
        let g = module_graph(&src);
        assert!(
            g.len() > 1 || src.ends_with("src"),
            "{}: no modules found",
            src.display()
        );
        if let Some(c) = find_cycle(&g) {
            cycles.push(format!("{}: {}", src.display(), c.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn no_source_file_is_too_long() {
    let mut long = Vec::new();
    for src in crate_sources() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let lines = text.split("#[cfg(test)]").next().unwrap_or("").lines().count();
            if lines > MAX_LINES {
                long.push(format!("{} ({lines} lines)", f.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines before their tests: {long:?}"
    );
}

/// The checker itself finds a cycle it is shown, and the references it reads.
#[test]
fn the_checker_sees_cycles() {
    assert_eq!(
        crate_refs("use crate::a::X;\nuse crate::{b, c::D};\nlet y = $crate::e::f;\n"),
        ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
    );
    let g: BTreeMap<String, BTreeSet<String>> = [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec![])]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    let mut acyclic = g.clone();
    acyclic.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&acyclic), None);
}
