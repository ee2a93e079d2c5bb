//! A Go tree whose race runtime is lard's: every entry of the installed
//! GOROOT as a symbolic link, but for `src/runtime/race/race_linux_amd64.syso`,
//! which links to lard's runtime object. Go builds its standard library
//! from this tree exactly as from the installed one (nothing there
//! changes), and its build cache keeps the two race runtimes apart by
//! their contents.

use super::{cache_dir, stable_hash, GoError};
use std::path::{Path, PathBuf};

/// The race runtime's path inside a GOROOT.
const RACE_SYSO: [&str; 4] = ["src", "runtime", "race", "race_linux_amd64.syso"];

/// The lard GOROOT for the installed tree at `goroot` and the runtime
/// object `syso`, made if the cache does not hold it yet.
pub fn shadow(goroot: &Path, syso: &Path) -> Result<PathBuf, GoError> {
    let key = format!("{}\0{}", goroot.display(), syso.display());
    let dir = cache_dir()?.join(format!("goroot-{:016x}", stable_hash(&key)));
    if dir.join(RACE_SYSO.iter().collect::<PathBuf>()).exists() {
        return Ok(dir);
    }
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let made = mirror(goroot, &tmp, &RACE_SYSO, syso);
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(dir)
}

/// Makes `to` a directory of links to the entries of `from`, but along
/// `path` (relative, at least one component), whose directories are made
/// anew and whose last component links to `target`.
fn mirror(from: &Path, to: &Path, path: &[&str], target: &Path) -> Result<(), GoError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e| GoError::Io(p, e)
    };
    std::fs::create_dir_all(to).map_err(io(to))?;
    let entries = std::fs::read_dir(from).map_err(io(from))?;
    for e in entries {
        let e = e.map_err(io(from))?;
        let name = e.file_name();
        if name.to_str() == Some(path[0]) {
            continue;
        }
        std::os::unix::fs::symlink(e.path(), to.join(&name)).map_err(io(to))?;
    }
    match path {
        [last] => std::os::unix::fs::symlink(target, to.join(last)).map_err(io(to)),
        [dir, rest @ ..] => mirror(&from.join(dir), &to.join(dir), rest, target),
        [] => Ok(()),
    }
}
