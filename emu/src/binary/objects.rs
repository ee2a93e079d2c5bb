//! The loaded-object registry: every ELF object mapped into the guest.
//!
//! The executable and its interpreter (ld.so) are registered by the loader;
//! every shared object ld.so (or `dlopen`) maps from a file descriptor is
//! registered by `mmap` when a file mapping at offset 0 starts with an ELF
//! header. Each [`LoadedObject`] knows its path, load bias and the address
//! span it occupies; its symbols, function ranges and DWARF lines are read
//! the first time something asks for them (a report, a fault message, or the
//! code scan when the object is first mapped executable). DWARF comes from
//! the object itself or, when it is stripped, from the separate debug file
//! found by build-id (or `.gnu_debuglink`) under `/usr/lib/debug`.
//!
//! Nothing here is on the per-access path: lookups walk a short vector.
//! docs/dynamic.md describes the registry and its notification point,
//! `Machine::object_mapped`.

use crate::binary::dwarf::lines::{Frame, SourceLines};
use crate::binary::elf::{ElfFile, Symbol};
use crate::binary::functions::function_ranges;
use crate::binary::symbols::Symbolizer;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};

/// What role an object plays in the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// The main executable (`lard run PROG`).
    Executable,
    /// The program interpreter named by PT_INTERP (ld.so).
    Interpreter,
    /// A shared object mapped by the guest (a `DT_NEEDED` library or a plugin
    /// loaded with `dlopen`).
    Library,
}

/// Index of an object in the [`ObjectRegistry`] (stable for the run: objects
/// that are unmapped stay in the registry, marked unmapped).
pub type ObjectId = usize;

/// What is read from an object's file on first use.
struct ObjectInfo {
    symbols: Symbolizer,
    /// Function ranges (from `.eh_frame` or sized symbols), relocated.
    functions: Vec<(u64, u64)>,
    /// The GNU build-id, hex.
    build_id: Option<String>,
    /// The file DWARF is read from (the object or its separate debug file).
    debug_file: PathBuf,
}

/// One ELF object in the guest address space.
pub struct LoadedObject {
    /// The host file it was read from (under the sysroot, if one is used).
    pub path: PathBuf,
    /// The path as the guest named it (what reports print).
    pub name: String,
    /// Its role.
    pub kind: ObjectKind,
    /// Load bias: run-time address minus link-time address.
    pub bias: u64,
    /// The address span `[start, end)` it was mapped into.
    pub span: (u64, u64),
    /// Executable ranges `[start, end)` mapped so far.
    pub exec: Vec<(u64, u64)>,
    /// False once the guest unmapped the whole span (`dlclose`).
    pub mapped: bool,
    sysroot: Option<PathBuf>,
    info: OnceCell<Option<ObjectInfo>>,
    lines: OnceCell<SourceLines>,
    /// The file itself and its debug file, read whole (for unwinding and
    /// variables: only when a race is on a stack).
    files: OnceCell<Option<(ElfFile, Option<ElfFile>)>>,
}

impl LoadedObject {
    /// A new object; nothing is read from `path` until it is needed.
    pub fn new(
        path: PathBuf,
        name: String,
        kind: ObjectKind,
        bias: u64,
        span: (u64, u64),
        sysroot: Option<PathBuf>,
    ) -> LoadedObject {
        LoadedObject {
            path,
            name,
            kind,
            bias,
            span,
            exec: Vec::new(),
            mapped: true,
            sysroot,
            info: OnceCell::new(),
            lines: OnceCell::new(),
            files: OnceCell::new(),
        }
    }

    /// An object whose ELF file is already parsed (the executable).
    pub fn with_file(
        file: &ElfFile,
        name: String,
        kind: ObjectKind,
        bias: u64,
        span: (u64, u64),
        sysroot: Option<PathBuf>,
    ) -> LoadedObject {
        let o = LoadedObject::new(file.path.clone(), name, kind, bias, span, sysroot);
        let _ = o
            .info
            .set(Some(ObjectInfo::of(file, bias, o.sysroot.as_deref())));
        o
    }

    /// True when `addr` lies in the object's span.
    pub fn contains(&self, addr: u64) -> bool {
        self.mapped && addr >= self.span.0 && addr < self.span.1
    }

    /// The last path component of [`LoadedObject::name`] (`libc.so.6`).
    pub fn short_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    fn info(&self) -> Option<&ObjectInfo> {
        self.info
            .get_or_init(|| {
                let file = ElfFile::open(&self.path).ok()?;
                Some(ObjectInfo::of(&file, self.bias, self.sysroot.as_deref()))
            })
            .as_ref()
    }

    /// Symbols of the object, relocated (empty if its file cannot be read).
    pub fn symbols(&self) -> Option<&Symbolizer> {
        self.info().map(|i| &i.symbols)
    }

    /// Function ranges `[start, end)`, relocated: where instructions begin,
    /// for the LARD-site scan.
    pub fn functions(&self) -> &[(u64, u64)] {
        self.info().map_or(&[], |i| &i.functions)
    }

    /// The GNU build-id in hex, if the object has one.
    pub fn build_id(&self) -> Option<&str> {
        self.info().and_then(|i| i.build_id.as_deref())
    }

    /// The file DWARF lines are read from.
    pub fn debug_file(&self) -> &Path {
        self.info().map_or(&self.path, |i| &i.debug_file)
    }

    /// The object's ELF file (its `.eh_frame`) and the file with its DWARF
    /// (itself, or a separate debug file), read on first use.
    pub fn elf_files(&self) -> Option<(&ElfFile, &ElfFile)> {
        let (file, debug) = self
            .files
            .get_or_init(|| {
                let file = ElfFile::open(&self.path).ok()?;
                let debug = (self.debug_file() != self.path)
                    .then(|| ElfFile::open(self.debug_file()).ok())
                    .flatten();
                Some((file, debug))
            })
            .as_ref()?;
        Some((file, debug.as_ref().unwrap_or(file)))
    }

    /// DWARF lines of the object (read on first use).
    pub fn lines(&self) -> &SourceLines {
        self.lines
            .get_or_init(|| SourceLines::open(self.debug_file(), self.bias))
    }
}

impl ObjectInfo {
    fn of(file: &ElfFile, bias: u64, sysroot: Option<&Path>) -> ObjectInfo {
        let (ranges, _) = function_ranges(file);
        let functions = ranges
            .iter()
            .map(|&(s, e)| (s.wrapping_add(bias), e.wrapping_add(bias)))
            .collect();
        let build_id = file.build_id.as_ref().map(|b| hex(b));
        let debug_file = separate_debug_file(file, build_id.as_deref(), sysroot)
            .unwrap_or_else(|| file.path.clone());
        ObjectInfo {
            symbols: Symbolizer::new(&file.symbols, bias),
            functions,
            build_id,
            debug_file,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The separate debug file of a file without DWARF: by build-id
/// (`/usr/lib/debug/.build-id/ab/cdef….debug`), then by `.gnu_debuglink`
/// (`/usr/lib/debug/<dir>/<name>`, `<dir>/.debug/<name>`), as gdb looks.
fn separate_debug_file(
    file: &ElfFile,
    build_id: Option<&str>,
    sysroot: Option<&Path>,
) -> Option<PathBuf> {
    if file.section(".debug_info").is_some() {
        return None;
    }
    let root = |p: PathBuf| match sysroot {
        Some(r) => r.join(p.strip_prefix("/").unwrap_or(&p)),
        None => p,
    };
    let mut candidates = Vec::new();
    if let Some(id) = build_id.filter(|id| id.len() > 2) {
        candidates.push(root(PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &id[..2],
            &id[2..]
        ))));
    }
    if let Some(link) = &file.debuglink {
        let dir = file.path.parent().unwrap_or(Path::new("/"));
        let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let rel = abs.strip_prefix("/").unwrap_or(&abs);
        candidates.push(root(Path::new("/usr/lib/debug").join(rel).join(link)));
        candidates.push(dir.join(".debug").join(link));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// Every ELF object of the process, in the order they were mapped.
#[derive(Default)]
pub struct ObjectRegistry {
    objects: Vec<LoadedObject>,
}

impl ObjectRegistry {
    /// Adds an object; returns its id.
    pub fn add(&mut self, o: LoadedObject) -> ObjectId {
        // A new mapping over a stale object's span replaces it.
        for old in &mut self.objects {
            if old.mapped && old.span.0 < o.span.1 && o.span.0 < old.span.1 {
                old.mapped = false;
            }
        }
        self.objects.push(o);
        self.objects.len() - 1
    }

    /// All objects ever registered (including unmapped ones).
    pub fn all(&self) -> &[LoadedObject] {
        &self.objects
    }

    /// The object with this id.
    pub fn get(&self, id: ObjectId) -> &LoadedObject {
        &self.objects[id]
    }

    /// The mapped object whose span contains `addr`.
    pub fn id_at(&self, addr: u64) -> Option<ObjectId> {
        self.objects.iter().rposition(|o| o.contains(addr))
    }

    /// The mapped object whose span contains `addr`.
    pub fn at(&self, addr: u64) -> Option<&LoadedObject> {
        self.id_at(addr).map(|i| &self.objects[i])
    }

    /// The main executable, if registered.
    pub fn executable(&self) -> Option<&LoadedObject> {
        self.objects
            .iter()
            .find(|o| o.kind == ObjectKind::Executable)
    }

    /// Records that `[start, start+len)` of object `id` became executable.
    pub fn add_exec(&mut self, id: ObjectId, start: u64, len: u64) {
        let o = &mut self.objects[id];
        let r = (start, start.saturating_add(len));
        if !o.exec.contains(&r) {
            o.exec.push(r);
        }
    }

    /// The guest unmapped `[start, start+len)`: objects whose whole span is
    /// gone are marked unmapped (their names stay for reports on old PCs).
    pub fn unmapped(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        for o in &mut self.objects {
            if o.mapped && start <= o.span.0 && o.span.1 <= end {
                o.mapped = false;
            }
            o.exec.retain(|&(s, e)| e <= start || s >= end);
        }
    }

    /// The function containing `pc`, in whichever object holds it.
    pub fn function(&self, pc: u64) -> Option<(&Symbol, u64)> {
        self.at(pc)?.symbols()?.function(pc)
    }

    /// The data object (symbol) containing `addr`.
    pub fn object(&self, addr: u64) -> Option<(&Symbol, u64)> {
        self.at(addr)?.symbols()?.object(addr)
    }

    /// `name+0xoff` for a code address. In an object without a covering
    /// symbol (a library, or a stripped executable), `file+0xoff` (offset
    /// from the load bias), so every PC in a mapped object gets a name a
    /// person can look up.
    pub fn describe_pc(&self, pc: u64) -> Option<String> {
        let o = self.at(pc)?;
        if let Some(s) = o.symbols().and_then(|s| s.describe_pc(pc)) {
            return Some(match o.kind {
                ObjectKind::Executable => s,
                _ => format!("{s} in {}", o.short_name()),
            });
        }
        // No symbol (a stripped executable or library): the object and the
        // offset `objdump -d` of the file shows.
        Some(format!("{}+{:#x}", o.short_name(), pc.wrapping_sub(o.bias)))
    }

    /// A name for a data address: `symbol+0xoff` (a Rust name demangled;
    /// with the library for data outside the executable) or
    /// `libfoo.so+0xoff`; `None` outside objects.
    pub fn describe_data(&self, addr: u64) -> Option<String> {
        let o = self.at(addr)?;
        if let Some((s, off)) = o.symbols().and_then(|s| s.object(addr)) {
            let name = super::demangle::display(&s.name);
            return Some(match o.kind {
                ObjectKind::Executable => format!("{name}+{off:#x}"),
                _ => format!("{name}+{off:#x} in {}", o.short_name()),
            });
        }
        (o.kind != ObjectKind::Executable)
            .then(|| format!("{}+{:#x}", o.short_name(), addr.wrapping_sub(o.bias)))
    }

    /// The inline chain at `pc` (innermost first) from the DWARF of the
    /// object containing it; empty without line information.
    pub fn frames(&self, pc: u64) -> Vec<Frame> {
        self.at(pc).map_or_else(Vec::new, |o| o.lines().frames(pc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(name: &str, start: u64, end: u64) -> LoadedObject {
        // A path that does not exist: no symbols, names fall back to offsets.
        LoadedObject::new(
            PathBuf::from(format!("/nonexistent/{name}")),
            format!("/usr/lib/{name}"),
            ObjectKind::Library,
            start,
            (start, end),
            None,
        )
    }

    #[test]
    fn addresses_are_named_by_the_object_that_holds_them() {
        let mut r = ObjectRegistry::default();
        let a = r.add(lib("liba.so.1", 0x7000_0000, 0x7000_4000));
        let b = r.add(lib("libb.so.2", 0x7100_0000, 0x7100_2000));
        assert_eq!(r.id_at(0x7000_0010), Some(a));
        assert_eq!(r.id_at(0x7100_1fff), Some(b));
        assert_eq!(r.id_at(0x7100_2000), None);
        assert_eq!(
            r.describe_pc(0x7000_0123).as_deref(),
            Some("liba.so.1+0x123")
        );
        assert_eq!(
            r.describe_data(0x7100_0040).as_deref(),
            Some("libb.so.2+0x40")
        );
        assert_eq!(r.describe_pc(0x1234), None);
        assert!(r.frames(0x7000_0123).is_empty());
    }

    #[test]
    fn unmapping_a_whole_span_retires_the_object_and_a_new_one_replaces_it() {
        let mut r = ObjectRegistry::default();
        let a = r.add(lib("liba.so.1", 0x7000_0000, 0x7000_4000));
        r.add_exec(a, 0x7000_1000, 0x1000);
        // Part of the span: the object stays, its code range there goes.
        r.unmapped(0x7000_1000, 0x1000);
        assert_eq!(r.id_at(0x7000_0000), Some(a));
        assert!(r.get(a).exec.is_empty());
        r.unmapped(0x7000_0000, 0x4000);
        assert_eq!(r.id_at(0x7000_0000), None);
        assert!(!r.get(a).mapped);
        // dlopen again at the same place: the new object answers.
        let c = r.add(lib("libc2.so", 0x7000_0000, 0x7000_8000));
        assert_eq!(r.at(0x7000_0000).map(|o| o.short_name()), Some("libc2.so"));
        assert_eq!(r.id_at(0x7000_7000), Some(c));
        assert_eq!(r.all().len(), 2);
    }
}
