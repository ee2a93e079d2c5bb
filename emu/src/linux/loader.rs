//! Loading an ELF executable (and, for a dynamically linked one, its program
//! interpreter) and building the initial process stack the way the Linux
//! kernel does (System V x86-64 ABI §3.4.1; fs/binfmt_elf.c).

use crate::binary::elf::{ElfError, ElfFile};
use crate::cpu::memory::{page_ceil, page_floor, MemError, Memory, PAGE};
use crate::cpu::uc::prot;
use goblin::elf::program_header::{PF_R, PF_W, PF_X};

/// Load address of PIE executables: the kernel's ELF_ET_DYN_BASE
/// (0x555555554000) scaled into the direct window (cpu/memory.rs).
pub const PIE_BASE: u64 = 0x1555_5555_4000;
/// Top of the main thread's stack.
pub const STACK_TOP: u64 = 0x1fff_ffff_f000;
/// Size of the main thread's stack mapping.
pub const STACK_SIZE: u64 = 8 << 20;

/// A loaded program image.
#[derive(Clone, Debug)]
pub struct Image {
    /// First mapped byte (page-aligned).
    pub start: u64,
    /// Entry point (relocated).
    pub entry: u64,
    /// Load bias (0 for ET_EXEC).
    pub bias: u64,
    /// Address of the program headers in memory.
    pub phdr: u64,
    /// Size of one program header.
    pub phent: u64,
    /// Number of program headers.
    pub phnum: u64,
    /// One past the highest loaded byte.
    pub end: u64,
}

/// Why a program could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file is unusable.
    Elf(ElfError),
    /// Segments overlap, are misaligned, or memory ran out.
    Layout(String),
    /// The program interpreter (PT_INTERP) cannot be used.
    Interpreter(ElfError),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Elf(e) => write!(f, "{e}"),
            LoadError::Layout(why) => write!(f, "cannot load: {why}"),
            LoadError::Interpreter(e) => write!(f, "cannot load its interpreter: {e}"),
        }
    }
}

impl std::error::Error for LoadError {}

fn perms_of(flags: u32) -> u32 {
    let mut p = 0;
    if flags & PF_R != 0 {
        p |= prot::READ;
    }
    if flags & PF_W != 0 {
        p |= prot::WRITE;
    }
    if flags & PF_X != 0 {
        p |= prot::EXEC;
    }
    p
}

/// Maps the PT_LOAD segments of the executable `file` (position-independent
/// ones at [`PIE_BASE`], as the kernel does) and copies their contents.
pub fn load(mem: &mut Memory, file: &ElfFile) -> Result<Image, LoadError> {
    let bias = if file.is_pie() { PIE_BASE } else { 0 };
    load_at(mem, file, bias, "[program]")
}

/// Maps the program interpreter `file` (ld.so) where the top-down mmap
/// allocator puts it, as the kernel does.
pub fn load_interpreter(mem: &mut Memory, file: &ElfFile) -> Result<Image, LoadError> {
    let lo = file.segments.iter().map(|s| page_floor(s.vaddr)).min();
    let hi = file
        .segments
        .iter()
        .map(|s| page_ceil(s.vaddr.saturating_add(s.memsz)))
        .max();
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Err(LoadError::Interpreter(ElfError::Corrupt(
            file.path.clone(),
            "no loadable segments".into(),
        )));
    };
    if !file.is_pie() {
        return load_at(mem, file, 0, "[ld.so]");
    }
    let at = mem
        .find_free(hi - lo)
        .ok_or_else(|| LoadError::Layout("no room for the interpreter".into()))?;
    load_at(mem, file, at.wrapping_sub(lo), "[ld.so]")
}

fn load_at(
    mem: &mut Memory,
    file: &ElfFile,
    bias: u64,
    name: &'static str,
) -> Result<Image, LoadError> {
    if file.segments.is_empty() {
        return Err(LoadError::Layout("no loadable segments".into()));
    }
    // Page ranges with the union of the permissions of the segments in them.
    let mut pages: Vec<(u64, u64, u32)> = Vec::new();
    for s in &file.segments {
        if s.memsz == 0 {
            continue;
        }
        let start = page_floor(s.vaddr.wrapping_add(bias));
        let end = page_ceil(s.vaddr.wrapping_add(bias).saturating_add(s.memsz));
        if end <= start {
            return Err(LoadError::Layout("segment wraps the address space".into()));
        }
        let perms = perms_of(s.flags);
        match pages.last_mut() {
            Some(last) if start < last.1 => {
                if start < last.0 {
                    return Err(LoadError::Layout(
                        "segments are not in address order".into(),
                    ));
                }
                // Shared boundary page: give it both segments' permissions.
                if start < last.1 - PAGE || end < last.1 {
                    return Err(LoadError::Layout("overlapping segments".into()));
                }
                let shared = last.1 - PAGE;
                last.1 = shared;
                let merged = last.2 | perms;
                if last.0 == last.1 {
                    pages.pop();
                }
                pages.push((shared, shared + PAGE, merged));
                if end > shared + PAGE {
                    pages.push((shared + PAGE, end, perms));
                }
            }
            _ => pages.push((start, end, perms)),
        }
    }
    for &(start, end, perms) in &pages {
        mem.map(start, end - start, perms, name)
            .map_err(|e| match e {
                MemError::NoMemory => LoadError::Layout("out of memory".into()),
                other => LoadError::Layout(format!("cannot map {start:#x}..{end:#x}: {other:?}")),
            })?;
    }
    let mut phdr = 0;
    for s in &file.segments {
        let data = &file.bytes[s.offset as usize..(s.offset + s.filesz) as usize];
        mem.poke(s.vaddr + bias, data)
            .ok_or_else(|| LoadError::Layout("segment outside its mapping".into()))?;
        let (phoff, _, _) = file.phdr;
        if phoff >= s.offset && phoff < s.offset + s.filesz {
            phdr = s.vaddr + bias + (phoff - s.offset);
        }
    }
    let end = pages.iter().map(|p| p.1).max().unwrap_or(0);
    let start = pages.iter().map(|p| p.0).min().unwrap_or(0);
    Ok(Image {
        start,
        entry: file.entry.wrapping_add(bias),
        bias,
        phdr,
        phent: u64::from(file.phdr.1),
        phnum: u64::from(file.phdr.2),
        end,
    })
}

/// Auxiliary-vector keys (linux/auxvec.h).
mod at {
    pub const NULL: u64 = 0;
    pub const PHDR: u64 = 3;
    pub const PHENT: u64 = 4;
    pub const PHNUM: u64 = 5;
    pub const PAGESZ: u64 = 6;
    pub const BASE: u64 = 7;
    pub const FLAGS: u64 = 8;
    pub const ENTRY: u64 = 9;
    pub const UID: u64 = 11;
    pub const EUID: u64 = 12;
    pub const GID: u64 = 13;
    pub const EGID: u64 = 14;
    pub const PLATFORM: u64 = 15;
    pub const HWCAP: u64 = 16;
    pub const CLKTCK: u64 = 17;
    pub const SECURE: u64 = 23;
    pub const RANDOM: u64 = 25;
    pub const HWCAP2: u64 = 26;
    pub const EXECFN: u64 = 31;
}

/// What the process is started with.
pub struct ProcessArgs<'a> {
    /// argv, argv[0] first.
    pub argv: &'a [Vec<u8>],
    /// Environment strings `NAME=value`.
    pub envp: &'a [Vec<u8>],
    /// The 16 bytes AT_RANDOM points to.
    pub random: [u8; 16],
    /// AT_HWCAP: CPUID.1:EDX of the emulated CPU.
    pub hwcap: u64,
    /// AT_BASE: where the interpreter was loaded (0 without one).
    pub interp_base: u64,
}

/// Maps the main stack and writes argc/argv/envp/auxv; returns the initial RSP.
pub fn build_stack(
    mem: &mut Memory,
    image: &Image,
    args: &ProcessArgs<'_>,
) -> Result<u64, LoadError> {
    let base = STACK_TOP - STACK_SIZE;
    mem.map(base, STACK_SIZE, prot::READ | prot::WRITE, "[stack]")
        .map_err(|e| LoadError::Layout(format!("cannot map the stack: {e:?}")))?;
    // Strings and blobs at the top, the pointer vectors below them.
    let mut sp = STACK_TOP;
    let mut push_bytes = |mem: &mut Memory, bytes: &[u8], nul: bool| -> Option<u64> {
        sp -= bytes.len() as u64 + u64::from(nul);
        mem.poke(sp, bytes)?;
        if nul {
            mem.poke(sp + bytes.len() as u64, &[0])?;
        }
        Some(sp)
    };
    let overflow = || LoadError::Layout("arguments do not fit on the stack".into());
    let execfn =
        push_bytes(mem, args.argv.first().map_or(&b""[..], |a| a), true).ok_or_else(overflow)?;
    let mut envp = Vec::new();
    for e in args.envp.iter().rev() {
        envp.push(push_bytes(mem, e, true).ok_or_else(overflow)?);
    }
    envp.reverse();
    let mut argv = Vec::new();
    for a in args.argv.iter().rev() {
        argv.push(push_bytes(mem, a, true).ok_or_else(overflow)?);
    }
    argv.reverse();
    let platform = push_bytes(mem, b"x86_64", true).ok_or_else(overflow)?;
    let random = push_bytes(mem, &args.random, false).ok_or_else(overflow)?;
    let auxv: [(u64, u64); 18] = [
        (at::PHDR, image.phdr),
        (at::PHENT, image.phent),
        (at::PHNUM, image.phnum),
        (at::PAGESZ, PAGE),
        (at::BASE, args.interp_base),
        (at::FLAGS, 0),
        (at::ENTRY, image.entry),
        (at::UID, host_id(libc::getuid)),
        (at::EUID, host_id(libc::geteuid)),
        (at::GID, host_id(libc::getgid)),
        (at::EGID, host_id(libc::getegid)),
        (at::SECURE, 0),
        (at::RANDOM, random),
        (at::HWCAP, args.hwcap),
        (at::HWCAP2, 0),
        (at::CLKTCK, 100),
        (at::PLATFORM, platform),
        (at::EXECFN, execfn),
    ];
    let mut words: Vec<u64> = vec![args.argv.len() as u64];
    words.extend(&argv);
    words.push(0);
    words.extend(&envp);
    words.push(0);
    for (k, v) in auxv {
        words.push(k);
        words.push(v);
    }
    words.push(at::NULL);
    words.push(0);
    let mut rsp = (sp - 8 * words.len() as u64) & !15;
    if rsp < base + PAGE {
        return Err(overflow());
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(rsp, &bytes).ok_or_else(overflow)?;
    rsp &= !15;
    Ok(rsp)
}

/// The host's user/group ids, so `id`-printing guests match their native runs.
fn host_id(f: unsafe extern "C" fn() -> u32) -> u64 {
    // SAFETY: getuid and friends cannot fail and have no preconditions.
    u64::from(unsafe { f() })
}
