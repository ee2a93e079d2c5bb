//! `--sysroot DIR` (alias `-L DIR`, as in qemu-user): the guest's absolute
//! paths are looked up under DIR first, so a program built for another
//! distribution finds its own ld.so and libraries there.
//!
//! Symbolic links inside the sysroot are resolved *inside* it (an absolute
//! link target such as `/lib64/ld-linux-x86-64.so.2 ->
//! /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2` is taken relative to DIR, as
//! in a chroot). A path that does not exist under DIR falls back to the
//! host's own file, as qemu-user does (so `/proc`, `/dev` and `/tmp` work).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Symbolic links followed before giving up (the kernel's MAXSYMLINKS).
const MAX_LINKS: usize = 40;

/// `path` resolved inside `root` (links included); `None` when it does not
/// exist there.
pub fn resolve(root: &Path, path: &Path) -> Option<PathBuf> {
    let mut todo: Vec<PathBuf> = vec![path.to_path_buf()];
    let mut links = 0;
    // The resolved path relative to root, as components.
    let mut done: Vec<std::ffi::OsString> = Vec::new();
    while let Some(p) = todo.pop() {
        let mut comps: Vec<Component> = p.components().collect();
        if p.is_absolute() {
            done.clear();
        }
        comps.reverse();
        while let Some(c) = comps.pop() {
            match c {
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
                Component::ParentDir => {
                    done.pop();
                }
                Component::Normal(name) => {
                    let mut here = root.to_path_buf();
                    here.extend(done.iter());
                    here.push(name);
                    let meta = std::fs::symlink_metadata(&here).ok()?;
                    if meta.file_type().is_symlink() {
                        links += 1;
                        if links > MAX_LINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&here).ok()?;
                        // Rest of this path after the link target.
                        let rest: PathBuf = comps.iter().rev().collect();
                        if !rest.as_os_str().is_empty() {
                            todo.push(rest);
                        }
                        todo.push(target);
                        break;
                    }
                    done.push(name.to_os_string());
                }
            }
        }
    }
    let mut out = root.to_path_buf();
    out.extend(done.iter());
    Some(out)
}

/// The host path for a path the guest names: under the sysroot when it is
/// absolute and exists there, else the path itself.
pub fn host_path(root: Option<&Path>, guest: &[u8]) -> PathBuf {
    let p = Path::new(OsStr::from_bytes(guest));
    match root {
        Some(r) if p.is_absolute() => resolve(r, p).unwrap_or_else(|| p.to_path_buf()),
        _ => p.to_path_buf(),
    }
}

/// The path the guest sees for a host path (the sysroot prefix removed).
pub fn guest_path(root: Option<&Path>, host: &Path) -> PathBuf {
    match root.and_then(|r| host.strip_prefix(r).ok()) {
        Some(rel) => Path::new("/").join(rel),
        None => host.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_resolve_inside_the_root() {
        let root = std::env::temp_dir().join(format!("lard-sysroot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("lib/x86_64-linux-gnu")).unwrap();
        std::fs::create_dir_all(root.join("lib64")).unwrap();
        std::fs::write(root.join("lib/x86_64-linux-gnu/ld.so"), b"x").unwrap();
        std::os::unix::fs::symlink("/lib/x86_64-linux-gnu/ld.so", root.join("lib64/ld.so"))
            .unwrap();
        std::os::unix::fs::symlink("lib", root.join("usrlib")).unwrap();
        assert_eq!(
            resolve(&root, Path::new("/lib64/ld.so")),
            Some(root.join("lib/x86_64-linux-gnu/ld.so"))
        );
        assert_eq!(
            resolve(&root, Path::new("/usrlib/x86_64-linux-gnu/ld.so")),
            Some(root.join("lib/x86_64-linux-gnu/ld.so"))
        );
        assert_eq!(resolve(&root, Path::new("/lib64/missing")), None);
        assert_eq!(host_path(Some(&root), b"/nope"), PathBuf::from("/nope"));
        assert_eq!(
            guest_path(Some(&root), &root.join("lib/x")),
            PathBuf::from("/lib/x")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
