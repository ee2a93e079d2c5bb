//! Reading ELF files: validation, executable sections and symbols.
//!
//! Everything that parses a file the user names goes through [`ElfFile`], so
//! bad input (not an ELF, truncated, wrong architecture) becomes one
//! [`ElfError`] with a one-line message, never a panic.

use goblin::elf::header::{EM_X86_64, ET_DYN, ET_EXEC};
use goblin::elf::program_header::{PT_INTERP, PT_LOAD, PT_TLS};
use goblin::elf::section_header::SHF_EXECINSTR;
use goblin::elf::Elf;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a file cannot be used.
#[derive(Debug)]
pub enum ElfError {
    /// The file could not be read.
    Io(PathBuf, std::io::Error),
    /// Not an ELF file at all.
    NotElf(PathBuf),
    /// An ELF file that is truncated or malformed.
    Corrupt(PathBuf, String),
    /// An ELF file for another architecture or class.
    WrongArch(PathBuf, String),
    /// An ELF file of a type that cannot be run (relocatable, core, …).
    NotExecutable(PathBuf, String),
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfError::Io(p, e) => write!(f, "{}: cannot read: {e}", p.display()),
            ElfError::NotElf(p) => write!(f, "{}: not an ELF file", p.display()),
            ElfError::Corrupt(p, why) => write!(f, "{}: corrupt ELF file: {why}", p.display()),
            ElfError::WrongArch(p, what) => {
                write!(f, "{}: not an x86-64 ELF file ({what})", p.display())
            }
            ElfError::NotExecutable(p, what) => {
                write!(f, "{}: not an executable ({what})", p.display())
            }
        }
    }
}

impl std::error::Error for ElfError {}

/// A function or object symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Start address.
    pub addr: u64,
    /// Size in bytes (0 when the ELF does not say).
    pub size: u64,
    /// Name as in the symbol table.
    pub name: String,
    /// True for functions, false for data objects.
    pub is_func: bool,
}

/// A section whose contents are code.
#[derive(Clone, Debug)]
pub struct CodeSection {
    /// Section name, e.g. `.text`.
    pub name: String,
    /// Virtual address of the first byte.
    pub addr: u64,
    /// File offset of the first byte.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// A loadable segment (PT_LOAD).
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// Virtual address.
    pub vaddr: u64,
    /// Size in memory.
    pub memsz: u64,
    /// File offset.
    pub offset: u64,
    /// Size in the file.
    pub filesz: u64,
    /// PF_R | PF_W | PF_X flags.
    pub flags: u32,
}

/// The contents of an ELF file: the file mapped read-only (what
/// [`ElfFile::open`] gives), or bytes already in memory.
///
/// Mapping instead of reading: the analyses touch a small part of a large
/// file (headers, symbol tables, `.eh_frame`, some DWARF), and several of
/// them open the same object (the object registry, binary mode's pruning),
/// so reading copied each whole file into fresh memory every time (a
/// tenth of the CPU time of a short pigz run, mostly in the kernel). The
/// mapping is private; a file the guest runs is mapped by a native run of
/// it too.
pub enum FileBytes {
    /// A read-only private mapping of the file.
    Mapped(memmap2::Mmap),
    /// Bytes read or built in memory.
    Owned(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Owned(v) => v,
        }
    }
}

impl fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileBytes({} bytes)", self.len())
    }
}

impl FileBytes {
    /// Maps `path` read-only, or reads it when it cannot be mapped (an
    /// empty or special file): the errors are `std::fs::read`'s.
    fn open(path: &Path) -> std::io::Result<FileBytes> {
        let file = std::fs::File::open(path)?;
        let is_file = file.metadata().is_ok_and(|m| m.is_file() && m.len() > 0);
        if is_file {
            // SAFETY: the mapping is read-only and private; its bytes change
            // only if the file is modified in place while lard runs, as
            // the guest's own mapping of it would.
            if let Ok(m) = unsafe { memmap2::Mmap::map(&file) } {
                return Ok(FileBytes::Mapped(m));
            }
        }
        std::fs::read(path).map(FileBytes::Owned)
    }
}

/// A validated x86-64 ELF file held in memory.
pub struct ElfFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// The whole file.
    pub bytes: FileBytes,
    /// ET_EXEC or ET_DYN.
    pub elf_type: u16,
    /// Entry point (unrelocated).
    pub entry: u64,
    /// Program header table: file offset, entry size and count.
    pub phdr: (u64, u16, u16),
    /// The interpreter, for dynamically linked files.
    pub interp: Option<String>,
    /// Loadable segments.
    pub segments: Vec<Segment>,
    /// The thread-local storage template (PT_TLS): address, size in
    /// memory, alignment.
    pub tls: Option<(u64, u64, u64)>,
    /// Code sections (SHF_EXECINSTR).
    pub code_sections: Vec<CodeSection>,
    /// Function and object symbols, sorted by address.
    pub symbols: Vec<Symbol>,
    /// Every section with contents in the file, by name: (address, file offset, size).
    pub sections: Vec<(String, u64, usize, usize)>,
    /// The GNU build-id note (NT_GNU_BUILD_ID), for separate debug files.
    pub build_id: Option<Vec<u8>>,
    /// The file name in `.gnu_debuglink`, if any.
    pub debuglink: Option<String>,
}

impl ElfFile {
    /// True for a Go program (a `.go.buildinfo` section, which every Go
    /// linker since 1.13 writes, stripped or not).
    pub fn is_go(&self) -> bool {
        self.sections.iter().any(|(n, ..)| n == ".go.buildinfo")
    }

    /// Reads and validates `path`.
    pub fn open(path: &Path) -> Result<ElfFile, ElfError> {
        let bytes = FileBytes::open(path).map_err(|e| ElfError::Io(path.to_owned(), e))?;
        ElfFile::parse_bytes(path, bytes)
    }

    /// Validates an ELF image already in memory; `path` is used in messages.
    pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<ElfFile, ElfError> {
        ElfFile::parse_bytes(path, FileBytes::Owned(bytes))
    }

    fn parse_bytes(path: &Path, bytes: FileBytes) -> Result<ElfFile, ElfError> {
        let p = path.to_owned();
        if bytes.len() < 4 || bytes[..4] != *b"\x7fELF" {
            return Err(ElfError::NotElf(p));
        }
        if bytes.len() < 64 {
            return Err(ElfError::Corrupt(p, "truncated header".into()));
        }
        if bytes[4] != 2 {
            return Err(ElfError::WrongArch(p, "32-bit".into()));
        }
        // goblin reports malformed files as errors; a panic inside it on some
        // hostile input would still be a bug, so it is caught and reported.
        let parsed = std::panic::catch_unwind(|| Self::extract(&p, &bytes));
        let mut file = match parsed {
            Ok(r) => r?,
            Err(_) => return Err(ElfError::Corrupt(p, "unparseable headers".into())),
        };
        file.bytes = bytes;
        Ok(file)
    }

    fn extract(p: &Path, bytes: &[u8]) -> Result<ElfFile, ElfError> {
        let p = p.to_owned();
        let elf = Elf::parse(bytes).map_err(|e| ElfError::Corrupt(p.clone(), e.to_string()))?;
        if elf.header.e_machine != EM_X86_64 {
            let m = goblin::elf::header::machine_to_str(elf.header.e_machine);
            return Err(ElfError::WrongArch(p, format!("machine {m}")));
        }
        let elf_type = elf.header.e_type;
        if elf_type != ET_EXEC && elf_type != ET_DYN {
            let t = goblin::elf::header::et_to_str(elf_type);
            return Err(ElfError::NotExecutable(p, format!("type {t}")));
        }
        let file_len = bytes.len() as u64;
        let mut segments = Vec::new();
        let mut interp = None;
        let mut tls = None;
        for ph in &elf.program_headers {
            if ph.p_type == PT_TLS {
                tls = Some((ph.p_vaddr, ph.p_memsz, ph.p_align.max(1)));
            }
            let end = ph.p_offset.checked_add(ph.p_filesz);
            if matches!(ph.p_type, PT_LOAD | PT_INTERP) && end.is_none_or(|e| e > file_len) {
                return Err(ElfError::Corrupt(
                    p,
                    "segment extends past end of file".into(),
                ));
            }
            if ph.p_type == PT_INTERP {
                let raw = &bytes[ph.p_offset as usize..(ph.p_offset + ph.p_filesz) as usize];
                let s = String::from_utf8_lossy(raw);
                interp = Some(s.trim_end_matches('\0').to_string());
            }
            if ph.p_type == PT_LOAD {
                if ph.p_memsz < ph.p_filesz {
                    return Err(ElfError::Corrupt(
                        p,
                        "segment smaller in memory than in file".into(),
                    ));
                }
                segments.push(Segment {
                    vaddr: ph.p_vaddr,
                    memsz: ph.p_memsz,
                    offset: ph.p_offset,
                    filesz: ph.p_filesz,
                    flags: ph.p_flags,
                });
            }
        }
        let mut code_sections = Vec::new();
        let mut sections = Vec::new();
        for sh in &elf.section_headers {
            let name = elf
                .shdr_strtab
                .get_at(sh.sh_name)
                .unwrap_or("?")
                .to_string();
            let fits = sh
                .sh_offset
                .checked_add(sh.sh_size)
                .is_some_and(|e| e <= file_len);
            if sh.sh_type != goblin::elf::section_header::SHT_NOBITS && fits {
                sections.push((name, sh.sh_addr, sh.sh_offset as usize, sh.sh_size as usize));
            }
            let executable = sh.sh_flags & u64::from(SHF_EXECINSTR) != 0;
            let in_file = sh.sh_type != goblin::elf::section_header::SHT_NOBITS;
            if !executable || !in_file || sh.sh_size == 0 {
                continue;
            }
            if sh
                .sh_offset
                .checked_add(sh.sh_size)
                .is_none_or(|e| e > file_len)
            {
                return Err(ElfError::Corrupt(
                    p,
                    "section extends past end of file".into(),
                ));
            }
            let name = elf
                .shdr_strtab
                .get_at(sh.sh_name)
                .unwrap_or("?")
                .to_string();
            code_sections.push(CodeSection {
                name,
                addr: sh.sh_addr,
                offset: sh.sh_offset as usize,
                size: sh.sh_size as usize,
            });
        }
        let mut symbols: Vec<Symbol> = elf
            .syms
            .iter()
            .filter(|s| {
                (s.is_function() || s.st_type() == goblin::elf::sym::STT_OBJECT) && s.st_value != 0
            })
            .filter_map(|s| {
                let name = elf.strtab.get_at(s.st_name)?;
                (!name.is_empty()).then(|| Symbol {
                    addr: s.st_value,
                    size: s.st_size,
                    name: name.to_string(),
                    is_func: s.is_function(),
                })
            })
            .collect();
        // A stripped shared object still names its exported functions and
        // data in .dynsym; use them when .symtab has no functions.
        if !symbols.iter().any(|s| s.is_func) {
            symbols.extend(
                elf.dynsyms
                    .iter()
                    .filter(|s| {
                        (s.is_function() || s.st_type() == goblin::elf::sym::STT_OBJECT)
                            && s.st_value != 0
                    })
                    .filter_map(|s| {
                        let name = elf.dynstrtab.get_at(s.st_name)?;
                        (!name.is_empty()).then(|| Symbol {
                            addr: s.st_value,
                            size: s.st_size,
                            name: name.to_string(),
                            is_func: s.is_function(),
                        })
                    }),
            );
        }
        symbols.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        symbols.dedup_by(|a, b| a.addr == b.addr && a.is_func == b.is_func);
        let build_id = elf.iter_note_headers(bytes).and_then(|notes| {
            notes
                .filter_map(Result::ok)
                .find(|n| n.n_type == goblin::elf::note::NT_GNU_BUILD_ID && n.name == "GNU")
                .map(|n| n.desc.to_vec())
        });
        let debuglink =
            sections
                .iter()
                .find(|s| s.0 == ".gnu_debuglink")
                .and_then(|&(_, _, off, size)| {
                    let raw = &bytes[off..off + size];
                    let name = raw.split(|&b| b == 0).next()?;
                    (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned())
                });
        Ok(ElfFile {
            build_id,
            debuglink,
            path: p,
            bytes: FileBytes::Owned(Vec::new()),
            elf_type,
            entry: elf.header.e_entry,
            phdr: (
                elf.header.e_phoff,
                elf.header.e_phentsize,
                elf.header.e_phnum,
            ),
            interp,
            segments,
            tls,
            code_sections,
            symbols,
            sections,
        })
    }

    /// The bytes of a code section.
    pub fn section_bytes(&self, s: &CodeSection) -> &[u8] {
        &self.bytes[s.offset..s.offset + s.size]
    }

    /// The contents and address of the section called `name`, if present.
    pub fn section(&self, name: &str) -> Option<(u64, &[u8])> {
        let (_, addr, off, size) = self.sections.iter().find(|s| s.0 == name)?;
        Some((*addr, &self.bytes[*off..*off + *size]))
    }

    /// The file's DWARF sections for gimli (absent sections read as empty;
    /// None if gimli cannot load them).
    pub fn dwarf(&self) -> Option<gimli::Dwarf<gimli::EndianSlice<'_, gimli::LittleEndian>>> {
        let load = |id: gimli::SectionId| -> Result<_, gimli::Error> {
            Ok(gimli::EndianSlice::new(
                self.section(id.name()).map_or(&[][..], |(_, b)| b),
                gimli::LittleEndian,
            ))
        };
        gimli::Dwarf::load(load).ok()
    }

    /// True for static-PIE (and other position-independent) executables.
    pub fn is_pie(&self) -> bool {
        self.elf_type == ET_DYN
    }
}
