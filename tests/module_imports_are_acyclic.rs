//! No two modules of one crate import each other, directly or in a circle.
//!
//! Every `crates/*/src` tree is parsed (syn) into its file and inline
//! modules; every path that names an item of the same crate (`crate::`,
//! `super::`, `self::`, or a child module's name) is resolved through the
//! `use` re-exports it passes, down to the module that defines the item. A
//! reference between two modules counts between their two subtrees that
//! meet under one parent — so `a → b::c` and `b::d → a` form the cycle
//! `a ↔ b` — and within each parent the subtrees must form an acyclic
//! graph. A module's use of its own ancestors is not counted: a parent
//! declares its children and re-exports them, and the crate root is the
//! crate's table of contents.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module's path below its crate root, `[]` for the root.
type ModulePath = Vec<String>;

/// One crate's modules: which exist, what each re-exports by name, and the
/// paths each refers to (already made absolute).
#[derive(Default)]
struct Crate {
    modules: BTreeSet<ModulePath>,
    /// `use` items: (module, name it binds) → the absolute path it names.
    imports: BTreeMap<(ModulePath, String), ModulePath>,
    /// (module whose code refers, absolute path referred to).
    references: Vec<(ModulePath, ModulePath)>,
}

/// Walks one file, keeping the module it is in (file path plus inline
/// `mod x { … }` blocks).
struct FileWalker<'a> {
    krate: &'a mut Crate,
    module: ModulePath,
    /// Child modules declared in each module (`mod x;` or inline).
    children: &'a BTreeMap<ModulePath, BTreeSet<String>>,
}

impl FileWalker<'_> {
    /// The absolute path a path written in the current module names, or
    /// `None` when it leaves the crate (another crate, std, a local).
    fn absolute(&self, segments: &[String]) -> Option<ModulePath> {
        let first = segments.first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut parent = self.module.clone();
                parent.pop()?;
                parent
            }
            name if self
                .children
                .get(&self.module)
                .is_some_and(|c| c.contains(name)) =>
            {
                let mut child = self.module.clone();
                child.push(name.to_string());
                return Some(
                    child
                        .into_iter()
                        .chain(segments[1..].iter().cloned())
                        .collect(),
                );
            }
            _ => return None,
        };
        let mut rest = &segments[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.bind(prefix, &n.ident.to_string(), &n.ident.to_string()),
            syn::UseTree::Rename(r) => {
                self.bind(prefix, &r.ident.to_string(), &r.rename.to_string())
            }
            syn::UseTree::Glob(_) => {
                if let Some(path) = self.absolute(prefix) {
                    self.krate.references.push((self.module.clone(), path));
                }
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }

    fn bind(&mut self, prefix: &[String], name: &str, bound_as: &str) {
        let mut full = prefix.to_vec();
        if name != "self" {
            full.push(name.to_string());
        }
        if let Some(path) = self.absolute(&full) {
            self.krate
                .references
                .push((self.module.clone(), path.clone()));
            self.krate
                .imports
                .insert((self.module.clone(), bound_as.to_string()), path);
        }
    }
}

impl<'ast> Visit<'ast> for FileWalker<'_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if let Some((_, items)) = &item.content {
            self.module.push(item.ident.to_string());
            for i in items {
                self.visit_item(i);
            }
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            if let Some(absolute) = self.absolute(&segments) {
                self.krate.references.push((self.module.clone(), absolute));
            }
        }
        syn::visit::visit_path(self, path);
    }

    /// Macro arguments that parse as expressions (`assert!`, `format!`, …).
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(args) = mac.parse_body_with(parser) {
            for arg in &args {
                self.visit_expr(arg);
            }
        }
    }
}

/// The module a file defines, from its place under `src/`.
fn file_module(src: &Path, file: &Path) -> ModulePath {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] || parts == ["main"] {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Inline modules of a parsed file, declared and defined, by parent.
fn declared_modules(
    module: &ModulePath,
    items: &[syn::Item],
    children: &mut BTreeMap<ModulePath, BTreeSet<String>>,
    modules: &mut BTreeSet<ModulePath>,
) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            let name = m.ident.to_string();
            children
                .entry(module.clone())
                .or_default()
                .insert(name.clone());
            let mut child = module.clone();
            child.push(name);
            modules.insert(child.clone());
            if let Some((_, inner)) = &m.content {
                declared_modules(&child, inner, children, modules);
            }
        }
    }
}

/// Parses a crate's `src` tree.
fn parse_crate(src: &Path) -> Crate {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let parsed: Vec<(ModulePath, syn::File)> = files
        .iter()
        .map(|f| {
            let text = fs::read_to_string(f).unwrap();
            let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (file_module(src, f), ast)
        })
        .collect();
    let mut krate = Crate::default();
    let mut children = BTreeMap::new();
    for (module, ast) in &parsed {
        krate.modules.insert(module.clone());
        declared_modules(module, &ast.items, &mut children, &mut krate.modules);
    }
    for (module, ast) in &parsed {
        let mut walker = FileWalker {
            krate: &mut krate,
            module: module.clone(),
            children: &children,
        };
        walker.visit_file(ast);
    }
    krate
}

impl Crate {
    /// The module that defines what `path` names, following re-exports; the
    /// crate root when the item is the root's own.
    fn defining_module(&self, path: &[String]) -> ModulePath {
        let mut path = path.to_vec();
        for _ in 0..16 {
            let module_len = (0..=path.len())
                .rev()
                .find(|&k| self.modules.contains(&path[..k]))
                .unwrap_or(0);
            let module = path[..module_len].to_vec();
            let Some(name) = path.get(module_len) else {
                return module;
            };
            match self.imports.get(&(module.clone(), name.clone())) {
                Some(target) if *target != path => {
                    let mut next = target.clone();
                    next.extend(path[module_len + 1..].iter().cloned());
                    path = next;
                }
                _ => return module,
            }
        }
        path
    }

    /// Every cycle, as the sibling subtrees that form it under their parent.
    fn cycles(&self) -> Vec<(ModulePath, Vec<String>)> {
        let mut edges: BTreeMap<ModulePath, BTreeSet<(String, String)>> = BTreeMap::new();
        for (from, to) in &self.references {
            let to = self.defining_module(to);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // one is the other's ancestor
            }
            edges
                .entry(from[..common].to_vec())
                .or_default()
                .insert((from[common].clone(), to[common].clone()));
        }
        let mut cycles = Vec::new();
        for (parent, edges) in edges {
            for component in strongly_connected(&edges) {
                cycles.push((parent.clone(), component));
            }
        }
        cycles
    }
}

/// The strongly connected components of more than one node (Tarjan).
fn strongly_connected(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        edges: &'a BTreeSet<(String, String)>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        components: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for (_, w) in self.edges.iter().filter(|(a, _)| a == v) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|&x| x == v).unwrap();
                let component: Vec<String> = self.stack.drain(at..).map(str::to_string).collect();
                if component.len() > 1 {
                    self.components.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        components: Vec::new(),
    };
    for (v, _) in edges {
        if !tarjan.index.contains_key(v.as_str()) {
            tarjan.visit(v);
        }
    }
    tarjan.components
}

fn describe(cycles: &[(ModulePath, Vec<String>)]) -> Vec<String> {
    cycles
        .iter()
        .map(|(parent, modules)| {
            let prefix: String = parent.iter().map(|p| format!("{p}::")).collect();
            modules
                .iter()
                .map(|m| format!("{prefix}{m}"))
                .collect::<Vec<_>>()
                .join(" ↔ ")
        })
        .collect()
}

#[test]
fn no_crate_has_modules_that_import_each_other() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut found = Vec::new();
    let mut checked = 0;
    for entry in fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        checked += 1;
        for cycle in describe(&parse_crate(&src).cycles()) {
            found.push(format!("{}: {cycle}", src.display()));
        }
    }
    assert!(
        checked > 10,
        "found only {checked} crates under {}",
        crates.display()
    );
    assert!(
        found.is_empty(),
        "modules that import each other:\n{}",
        found.join("\n")
    );
}

/// Writes a small crate and returns the cycles found in it.
fn cycles_in(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    describe(&parse_crate(dir.path()).cycles())
}

#[test]
fn the_checker_finds_cycles_through_re_exports_and_nested_modules() {
    let root = "mod a; mod b; mod c; pub use a::Alpha; pub use b::Beta;";
    // Direct, through the crate root's re-export.
    let direct = cycles_in(&[
        ("lib.rs", root),
        ("a.rs", "pub struct Alpha; fn f(_: crate::Beta) {}"),
        ("b.rs", "pub struct Beta; use super::a::Alpha;"),
        ("c.rs", ""),
    ]);
    assert_eq!(direct, ["a ↔ b"]);
    // A circle of three, one leg inside a nested module.
    let circle = cycles_in(&[
        ("lib.rs", root),
        ("a.rs", "pub struct Alpha; use crate::b::inner::Gamma;"),
        ("b.rs", "pub struct Beta; pub mod inner;"),
        ("b/inner.rs", "pub struct Gamma; fn g() { crate::c::h(); }"),
        ("c.rs", "pub fn h() { let _ = crate::Alpha; }"),
    ]);
    assert_eq!(circle.len(), 1);
    assert!(
        ["a", "b", "c"].iter().all(|m| circle[0].contains(m)),
        "{circle:?}"
    );
    // A parent using its children, children using each other one way and
    // their parent's items, and a test module using `super::*`: no cycle.
    let clean = cycles_in(&[
        ("lib.rs", "mod a; mod b; pub struct Root; pub use a::Alpha;"),
        (
            "a.rs",
            "pub struct Alpha; use crate::b::Beta; use crate::Root;",
        ),
        (
            "b.rs",
            "pub struct Beta; #[cfg(test)] mod tests { use super::*; }",
        ),
    ]);
    assert!(clean.is_empty(), "{clean:?}");
}
