//! Finding and opening a vendor's driver library at run time: the search
//! order every run-time-loaded backend shares, and the list of paths tried
//! that its error shows when none opens.

use std::path::{Path, PathBuf};

/// Where a library is looked for, in order: `configured` (a library file,
/// or a directory holding one of `names`), then each of `sdk_dirs`, then
/// the bare `names` for the dynamic linker's own search (`LD_LIBRARY_PATH`,
/// `ld.so.cache`, `/lib`, `/usr/lib`), then each of `system_dirs`.
pub fn search_paths(
    names: &[&str],
    configured: Option<&Path>,
    sdk_dirs: &[PathBuf],
    system_dirs: &[&Path],
) -> Vec<PathBuf> {
    let in_dir = |dir: &Path| names.iter().map(|name| dir.join(name)).collect::<Vec<_>>();
    let mut paths = Vec::new();
    if let Some(path) = configured {
        if path.is_dir() {
            paths.extend(in_dir(path));
        } else {
            paths.push(path.to_owned());
        }
    }
    for dir in sdk_dirs {
        paths.extend(in_dir(dir));
    }
    paths.extend(names.iter().map(PathBuf::from));
    for dir in system_dirs {
        paths.extend(in_dir(dir));
    }
    paths
}

/// A path tried and why it did not open.
pub type Tried = (String, String);

/// Opens the first of `paths` the dynamic linker loads; else every path
/// tried with the reason. A path with a directory that does not exist is
/// "no such file"; a bare name is marked as the dynamic linker's search.
///
/// # Safety
/// Loading a library runs its initialisers: the caller vouches for the
/// libraries `paths` may name.
pub unsafe fn open_first(
    paths: impl IntoIterator<Item = PathBuf>,
) -> Result<(libloading::Library, PathBuf), Vec<Tried>> {
    let mut tried = Vec::new();
    for path in paths {
        let explicit = path.components().count() > 1;
        if explicit && !path.exists() {
            tried.push((path.display().to_string(), "no such file".to_owned()));
            continue;
        }
        // SAFETY: the caller's.
        match unsafe { libloading::Library::new(&path) } {
            Ok(library) => return Ok((library, path)),
            Err(error) => {
                let why = std::error::Error::source(&error)
                    .map_or_else(|| error.to_string(), |s| s.to_string());
                let shown = if explicit {
                    path.display().to_string()
                } else {
                    format!(
                        "{} (dynamic linker search: LD_LIBRARY_PATH, ld.so.cache, /lib, /usr/lib)",
                        path.display()
                    )
                };
                tried.push((shown, why));
            }
        }
    }
    Err(tried)
}

/// `tried` as an error's indented list, one path per line.
pub fn tried_list(tried: &[Tried]) -> String {
    tried
        .iter()
        .map(|(path, why)| format!("\n  {path}: {why}"))
        .collect()
}

/// The function `name` in `library` as the pointer type the caller
/// expects; `None` when the library has no such symbol.
///
/// # Safety
/// `T` must be the symbol's true type.
pub unsafe fn symbol<T: Copy>(library: &libloading::Library, name: &str) -> Option<T> {
    // SAFETY: the caller's.
    unsafe { library.get::<T>(name.as_bytes()) }
        .ok()
        .map(|s| *s)
}

/// `file_name` beside the running executable: in its directory or its
/// `deps` (a test binary's), or in `../deps` (an example's) — where cargo
/// builds a dev-dependency's shared library, such as a simulated vendor
/// library for tests.
pub fn beside_current_exe(file_name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let mut dirs = vec![dir.to_owned(), dir.join("deps")];
    dirs.extend(dir.parent().map(|p| p.join("deps")));
    dirs.into_iter()
        .map(|d| d.join(file_name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_then_sdk_dirs_then_linker_then_system_dirs() {
        let list = search_paths(
            &["liba.so", "liba.so.1"],
            Some(Path::new("/opt/x/liba.so.1.2")),
            &[PathBuf::from("/sdk"), PathBuf::from("/sdk/lib")],
            &[Path::new("/usr/local/lib")],
        );
        let expected = [
            "/opt/x/liba.so.1.2",
            "/sdk/liba.so",
            "/sdk/liba.so.1",
            "/sdk/lib/liba.so",
            "/sdk/lib/liba.so.1",
            "liba.so",
            "liba.so.1",
            "/usr/local/lib/liba.so",
            "/usr/local/lib/liba.so.1",
        ];
        assert_eq!(list, expected.map(PathBuf::from));
    }

    #[test]
    fn the_running_executable_is_found_beside_itself() {
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_str().unwrap();
        assert_eq!(beside_current_exe(name), Some(exe));
        assert_eq!(beside_current_exe("no-such-file-here.so"), None);
    }

    #[test]
    fn nothing_opens_and_every_path_is_listed() {
        let paths = search_paths(
            &["libno-such-library-here.so"],
            None,
            &[],
            &[Path::new("/nope")],
        );
        // SAFETY: nothing here exists to be loaded.
        let tried = unsafe { open_first(paths) }.err().unwrap();
        assert_eq!(tried.len(), 2);
        assert!(tried[0].0.contains("dynamic linker search"), "{tried:?}");
        assert_eq!(
            tried[1],
            (
                "/nope/libno-such-library-here.so".to_owned(),
                "no such file".to_owned()
            )
        );
        assert!(tried_list(&tried).starts_with("\n  libno-such-library-here.so"));
    }
}
