//! Setting up the process and the machine for a run.

use super::Emulator;
use super::RunLimits;
use crate::binary::elf::ElfError;
use crate::binary::elf::ElfFile;
use crate::binary::objects::LoadedObject;
use crate::binary::objects::ObjectKind;
use crate::binary::objects::ObjectRegistry;
use crate::cpu::code::CodeMap;
use crate::cpu::memory::page_ceil;
use crate::cpu::memory::page_floor;
use crate::cpu::memory::Memory;
use crate::cpu::sched::Scheduler;
use crate::cpu::sched::SplitMix64;
use crate::cpu::stacks::StackMap;
use crate::cpu::uc::Context;
use crate::cpu::uc::Reg;
use crate::cpu::uc::Uc;
use crate::cpu::uc::UcError;
use crate::cpu::vclock::VcFile;
use crate::intercept::runtime::BinaryRuntime;
use crate::intercept::InterceptTable;
use crate::linux::loader;
use crate::linux::loader::LoadError;
use crate::linux::loader::ProcessArgs;
use crate::linux::signals;
use crate::linux::sysroot;
use crate::machine::Config;
use crate::machine::Cpu;
use crate::machine::Machine;
use crate::machine::Observation;
use crate::machine::Process;
use crate::machine::RunMode;
use crate::machine::Thread;
use crate::machine::ThreadState;
use crate::observe::callstack;
use crate::observe::observation::Policy;
use crate::observe::observer::AccessMode;
use crate::observe::observer::Observer;
use crate::observe::repeats::RepeatFilter;
use crate::observe::stats::Stats;
use goblin::elf::program_header::PF_X;
use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

/// Why a process could not be set up.
#[derive(Debug)]
pub enum SetupError {
    /// Loading the ELF failed.
    Load(loader::LoadError),
    /// Unicorn refused something.
    Uc(UcError),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Load(e) => write!(f, "{e}"),
            SetupError::Uc(e) => write!(f, "emulator error: {e}"),
        }
    }
}

impl std::error::Error for SetupError {}

impl SetupError {
    /// True when a file the program needs does not exist or cannot be read
    /// (its interpreter): `lard run` exits with 127 then, as a shell does.
    pub fn is_missing_file(&self) -> bool {
        matches!(
            self,
            SetupError::Load(LoadError::Interpreter(ElfError::Io(..)))
        )
    }
}

impl From<UcError> for SetupError {
    fn from(e: UcError) -> Self {
        SetupError::Uc(e)
    }
}

/// AT_HWCAP for the emulated CPU (CPUID.1:EDX of unicorn's qemu64 model).
const HWCAP: u64 = 0x078b_fbff;

impl Emulator {
    /// Loads `file` with `argv` and `envp` under `config`, delivering events to `observer`.
    pub fn new(
        file: &ElfFile,
        argv: &[Vec<u8>],
        envp: &[Vec<u8>],
        config: Config,
        observer: Box<dyn Observer>,
    ) -> Result<Emulator, SetupError> {
        let uc = Uc::new_x86_64()?;
        let r = uc.r();
        // Before anything is translated: every block counts itself.
        let clock = r.clock();
        let mut mem = Memory::new(r, config.direct_memory);
        let image = loader::load(&mut mem, file).map_err(SetupError::Load)?;
        mem.init_brk(image.end);
        let root = config.sysroot.as_deref();
        let mut objects = ObjectRegistry::default();
        let exe_name = file.path.to_string_lossy().into_owned();
        let exe = objects.add(LoadedObject::with_file(
            file,
            exe_name,
            ObjectKind::Executable,
            image.bias,
            (image.start, image.end),
            config.sysroot.clone(),
        ));
        // A dynamically linked program starts in its interpreter, which
        // finds and maps the libraries itself (through mmap of their files).
        let mut interp = None;
        if let Some(name) = &file.interp {
            // Under --sysroot the interpreter must come from the sysroot: a
            // host ld.so with the sysroot's libraries would be a mismatch.
            let path = match root {
                Some(r) => sysroot::resolve(r, Path::new(name))
                    .unwrap_or_else(|| r.join(name.trim_start_matches('/'))),
                None => PathBuf::from(name),
            };
            let ld =
                ElfFile::open(&path).map_err(|e| SetupError::Load(LoadError::Interpreter(e)))?;
            let ld_image = loader::load_interpreter(&mut mem, &ld)
                .map_err(|e| SetupError::Load(LoadError::Interpreter(elf_error(&ld, e))))?;
            let id = objects.add(LoadedObject::with_file(
                &ld,
                name.clone(),
                ObjectKind::Interpreter,
                ld_image.bias,
                (ld_image.start, ld_image.end),
                config.sysroot.clone(),
            ));
            interp = Some((id, ld_image, ld));
        }
        let mut rng = SplitMix64(config.seed);
        let mut random = [0u8; 16];
        random[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        random[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
        let args = ProcessArgs {
            argv,
            envp,
            random,
            hwcap: HWCAP,
            interp_base: interp.as_ref().map_or(0, |(_, i, _)| i.bias),
        };
        let rsp = loader::build_stack(&mut mem, &image, &args).map_err(SetupError::Load)?;
        r.set_reg(Reg::RSP, rsp);
        let entry = interp.as_ref().map_or(image.entry, |(_, i, _)| i.entry);
        r.set_reg(Reg::RIP, entry);
        r.set_reg(Reg::RDX, 0);
        // The FPU and SSE control words a Linux process starts with
        // (unicorn's reset leaves both 0: x87 at single precision with
        // every exception unmasked).
        r.set_reg(Reg::FPCW, 0x37f);
        r.set_reg(Reg::MXCSR, 0x1f80);
        let mut ctx = Context::new(r)?;
        ctx.save(r)?;
        let mode = observer.access_mode();
        let report_sync = observer.wants_sync();
        let report_objects = observer.wants_objects();
        let floors = observer.accepts_floors() && config.clock_floors;
        let realtime_base = config.realtime_start.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        let exe_path = std::fs::canonicalize(&file.path)
            .unwrap_or_else(|_| file.path.clone())
            .into_os_string()
            .into_encoded_bytes();
        let adversary = config
            .adversarial
            .clone()
            .map(|c| Box::new(crate::machine::adversarial::Adversary::new(c)));
        let pid = config.process.pid;
        let mut machine = Box::new(Machine {
            cpu: Cpu {
                uc: r,
                mem,
                threads: vec![Thread {
                    tid: pid,
                    ctx,
                    state: ThreadState::Runnable,
                    clear_child_tid: 0,
                    lthread: None,
                    core: 0,
                    insns: 0,
                    parent: None,
                    restart_deadline: None,
                    partial_write: None,
                    ctx_changed: false,
                    sig: signals::ThreadSignals {
                        mask: {
                            let host = signals::host::inherited_mask();
                            config.sigmask.unwrap_or(host) & !signals::UNBLOCKABLE
                        },
                        ..Default::default()
                    },
                    name: crate::machine::thread_name(
                        file.path
                            .file_name()
                            .map(|n| n.as_encoded_bytes())
                            .unwrap_or_default(),
                    ),
                }],
                cur: 0,
                sched: Scheduler::new(config.sched, config.seed, config.quantum),
                vc: VcFile::default(),
                endings: Default::default(),
                stop: None,
                vtime: 0,
                clock,
                clock_seen: 0,
                bad_access: None,
                insn_limit: u64::MAX,
                interrupt: None,
                timed_out: Default::default(),
                sets: Default::default(),
            },
            process: Process {
                warned: HashSet::new(),
                next_tid: pid + 1,
                futex_seq: 0,
                sigactions: inherited_sigactions(),
                signals: Default::default(),
                realtime_base,
                exe_path,
                last_exit_status: 0,
                load_bias: image.bias,
                host_retry_rounds: 0,
                quiet_output: false,
            },
            obs: Observation {
                code: CodeMap::default(),
                observer,
                // (LARD mode until binary mode is decided, below.)
                policy: Policy::choose(mode, false, adversary.is_some()),
                report_sync,
                report_objects,
                floors,
                stats: Stats::default(),
                objects,
                stacks: StackMap::default(),
                intercepts: InterceptTable::default(),
                lang_units: Default::default(),
                caller_pc_range: file.section("lard_caller_pc").map_or((0, 0), |(a, b)| {
                    let a = a.wrapping_add(image.bias);
                    (a, a + b.len() as u64)
                }),
                call_stacks: file
                    .symbols
                    .iter()
                    .find(|s| !s.is_func && s.name == callstack::TABLE_SYMBOL)
                    .map_or(0, |s| s.addr.wrapping_add(image.bias)),
                adversary,
                unchecked_go: false,
                printed_races: Default::default(),
                locals: Default::default(),
                binary: None,
                calls: Default::default(),
                access_buffer: None,
                repeats: RepeatFilter::off(),
            },
            config,
        });
        machine.cpu.sets = crate::cpu::thread_sets::ThreadSets::of(&machine.cpu.threads);
        machine.add_stack(rsp);
        // The loader's objects are the first to appear executable.
        let mut loaded = vec![(exe, image.clone(), file)];
        if let Some((id, ld_image, ld)) = &interp {
            loaded.push((*id, ld_image.clone(), ld));
        }
        for (id, img, f) in loaded {
            for s in f.segments.iter().filter(|s| s.flags & PF_X != 0) {
                let start = page_floor(s.vaddr.wrapping_add(img.bias));
                let end = page_ceil(s.vaddr.wrapping_add(img.bias) + s.memsz);
                machine.object_mapped(id, start, end - start)?;
            }
        }
        // Binary mode (docs/binary-mode.md) when the program carries no
        // LARDx86 code — decided once the loader's objects are scanned;
        // with no observer of accesses there is nothing to check.
        // A Go program without LARDx86 is left unchecked: its runtime is
        // no program code, and `lard go build` checks it exactly.
        let lard_code = machine.obs.code.has_lard_code();
        machine.obs.unchecked_go =
            machine.config.mode == RunMode::Auto && !lard_code && file.is_go();
        let binary = match machine.config.mode {
            RunMode::Auto => !lard_code && !machine.obs.unchecked_go,
            RunMode::Lard => false,
            RunMode::Binary => true,
        };
        if binary && mode != AccessMode::None {
            let patterns = machine.config.program_code.clone();
            let mut rt =
                BinaryRuntime::new(patterns, machine.config.prune, mode == AccessMode::All);
            if machine.config.skip_single_threaded {
                rt.skip_single_threaded();
            }
            machine.obs.binary = Some(Box::new(rt));
            if machine.config.repeat_filter && machine.obs.adversary.is_none() {
                machine.obs.repeats = RepeatFilter::on();
            }
            // Every access is seen (binary mode's runtime classifies
            // them); atomics are hooked as sync.
            machine.obs.policy = Policy::choose(mode, true, machine.obs.adversary.is_some());
            if !machine.obs.report_sync {
                let atomics = machine.obs.code.atomic_sites();
                machine.hook_sites(&atomics)?;
            }
            let mapped: Vec<(usize, u64, u64)> = machine
                .obs
                .objects
                .all()
                .iter()
                .enumerate()
                .flat_map(|(id, o)| o.exec.iter().map(move |&(s, e)| (id, s, e - s)))
                .collect();
            for (id, start, len) in mapped {
                let new = machine.binary_object_mapped(id, start, len);
                machine.hook_intercepts(&new)?;
            }
            machine.binary_start(entry);
        }
        machine.install_hooks()?;
        Ok(Emulator {
            machine,
            _uc: uc,
            started: None,
            wall: Duration::ZERO,
            limits: RunLimits::default(),
            live: 0,
            rotate: false,
            paused_quantum: None,
            signal_stops: false,
            signal_reported: None,
            watchdog: None,
        })
    }
}

/// A layout error while mapping the interpreter, as an error about its file.
fn elf_error(ld: &ElfFile, e: LoadError) -> ElfError {
    match e {
        LoadError::Elf(e) | LoadError::Interpreter(e) => e,
        LoadError::Layout(why) => ElfError::Corrupt(ld.path.clone(), why),
    }
}

/// The dispositions a new program starts with: `SIG_DFL`, but a signal the
/// host ignores across `execve` is ignored (signals::host).
fn inherited_sigactions() -> Vec<[u8; 32]> {
    let ignored = signals::host::inherited_ignored();
    let mut acts = vec![[0u8; 32]; 65];
    for (sig, act) in acts.iter_mut().enumerate().skip(1) {
        if ignored & signals::bit(sig as i32) != 0 {
            act[0] = 1;
        }
    }
    acts
}
