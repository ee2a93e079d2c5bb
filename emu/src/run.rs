//! Setting up a process and running it to completion: `lard run`.

use crate::binary::elf::{ElfError, ElfFile};
use crate::binary::objects::{LoadedObject, ObjectKind, ObjectRegistry};
use crate::cpu::code::CodeMap;
use crate::cpu::memory::{page_ceil, page_floor, Memory};
use crate::cpu::sched::{Scheduler, SplitMix64};
use crate::cpu::stacks::StackMap;
use crate::cpu::uc::{Context, Reg, Uc, UcError};
use crate::cpu::vclock::VcFile;
use crate::intercept::runtime::BinaryRuntime;
use crate::intercept::InterceptTable;
use crate::linux::loader::{self, LoadError, ProcessArgs};
use crate::linux::signals::{self, Delivery};
use crate::linux::sysroot;
use crate::machine::{
    Config, Cpu, GuestFault, Machine, Observation, Process, RunMode, Stop, Thread, ThreadState,
    Wait,
};
use crate::observe::callstack;
use crate::observe::observation::Policy;
use crate::observe::observer::{AccessMode, Observer};
use crate::observe::stats::{Report, Stats};
use goblin::elf::program_header::PF_X;
use lard_detector_hw::event::EventKind;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The process exited with this status.
    Exited(i32),
    /// The process was killed by a signal (abort) or faulted.
    Signaled {
        /// The signal.
        signal: i32,
        /// The fault, if the CPU raised one.
        fault: Option<GuestFault>,
    },
    /// Every live thread was blocked with no timeout pending.
    Deadlock(String),
    /// An unknown system call under `--strict-syscalls`.
    UnsupportedSyscall {
        /// System call number.
        nr: u64,
        /// Where it was made.
        pc: u64,
    },
    /// An observer stopped the guest before the instruction at `pc`.
    ObserverStop {
        /// The instruction that did not execute.
        pc: u64,
    },
    /// The process called `execve`: the caller runs the new program in
    /// this process's place ([`crate::linux::process`]).
    Exec(Box<crate::linux::process::ExecRequest>),
    /// lard stopped the guest from outside (a limit or a signal to lard);
    /// everything observed up to that point is reported.
    Stopped(StopReason),
    /// A debugger paused the guest (`lard run --gdb`): [`Emulator::resume`]
    /// continues it exactly where it stopped.
    Paused,
}

/// Why lard stopped a guest that had not ended by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `--max-insns`: this many instructions had retired.
    MaxInsns(u64),
    /// `--timeout`: the wall-clock limit passed.
    Timeout(Duration),
    /// lard received this signal (SIGINT or SIGTERM).
    Signal(i32),
}

/// Limits on a run, checked between quanta (wall clock, signals) and at
/// every basic block (instructions).
#[derive(Clone, Debug, Default)]
pub struct RunLimits {
    /// Stop after this many instructions (all threads).
    pub max_insns: Option<u64>,
    /// Stop after this much wall-clock time.
    pub timeout: Option<Duration>,
    /// Stop when this becomes non-zero (a signal number set by a signal
    /// handler the caller installed, e.g. with `signal_hook::flag`).
    pub interrupt: Option<Arc<AtomicUsize>>,
}

/// A loaded process, ready to run.
pub struct Emulator {
    // Field order matters: the machine (which holds contexts and host memory)
    // must be dropped before the engine is closed.
    machine: Box<Machine>,
    _uc: Uc,
    started: Option<Instant>,
    wall: Duration,
    limits: RunLimits,
    /// The thread whose registers are in the CPU (kept across a pause).
    live: usize,
    /// The scheduler must pick the next thread (kept across a pause).
    rotate: bool,
    /// Blocks left of the quantum a debugger's pause interrupted: the
    /// resumed quantum continues it rather than drawing a new one.
    paused_quantum: Option<i64>,
}

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
                binary: None,
                calls: Default::default(),
                access_buffer: None,
            },
            config,
        });
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
        let binary = match machine.config.mode {
            RunMode::Auto => !machine.obs.code.has_lard_code(),
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
        })
    }

    /// The machine (statistics, symbols, observer) after or during a run.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The machine, mutably (to take the observer back, for instance).
    pub fn machine_mut(&mut self) -> &mut Machine {
        &mut self.machine
    }

    /// Sets the limits of the next [`Emulator::run`].
    pub fn set_limits(&mut self, limits: RunLimits) {
        self.machine.cpu.insn_limit = limits.max_insns.unwrap_or(u64::MAX);
        self.limits = limits;
    }

    /// The signal lard received (SIGINT, SIGTERM), if one arrived since the
    /// limits were set (a caller waiting outside [`Emulator::resume`]).
    pub fn interrupted(&self) -> Option<i32> {
        let sig = self.limits.interrupt.as_ref()?.load(Ordering::Relaxed);
        (sig != 0).then_some(sig as i32)
    }

    /// The reason to stop now, if a wall-clock or signal limit was hit.
    fn external_stop(&self, start: Instant) -> Option<StopReason> {
        if let Some(flag) = &self.limits.interrupt {
            let sig = flag.load(Ordering::Relaxed);
            if sig != 0 {
                return Some(StopReason::Signal(sig as i32));
            }
        }
        match self.limits.timeout {
            Some(t) if start.elapsed() >= t => Some(StopReason::Timeout(t)),
            _ => None,
        }
    }

    /// Runs until the process ends, deadlocks, faults or is stopped.
    pub fn run(&mut self) -> Outcome {
        let out = self.resume();
        self.finish();
        out
    }

    /// Runs until the process ends, deadlocks, faults, is stopped or a
    /// debugger pauses it ([`Outcome::Paused`]: call again to continue);
    /// [`Emulator::finish`] ends the run.
    pub fn resume(&mut self) -> Outcome {
        let start = *self.started.get_or_insert_with(Instant::now);
        let out = self.run_loop();
        self.wall = start.elapsed();
        out
    }

    /// Ends the run: the observer finishes (a detector thread drains).
    pub fn finish(&mut self) {
        self.machine.obs.observer.finish();
    }

    /// The index of the thread whose registers are in the CPU (the others'
    /// are in their saved contexts).
    pub fn live_thread(&self) -> usize {
        self.live
    }

    fn run_loop(&mut self) -> Outcome {
        let start = self.started.unwrap_or_else(Instant::now);
        let uc = self.machine.cpu.uc;
        let mut live = self.live; // whose registers are in the CPU
        let mut rotate = self.rotate;
        let mut rounds = 0u32;
        loop {
            if let Some(why) = self.external_stop(start) {
                return Outcome::Stopped(why);
            }
            let m = &mut *self.machine;
            m.expire_timeouts();
            if let Delivery::Terminate(signal) = m.route_signals() {
                return Outcome::Signaled {
                    signal,
                    fault: None,
                };
            }
            // Host waits that ended while other threads ran.
            rounds = rounds.wrapping_add(1);
            if rounds.is_multiple_of(16) && m.has_host_waits() {
                m.poll_host(Some(Duration::ZERO));
            }
            let runnable: Vec<usize> = (0..m.cpu.threads.len())
                .filter(|&i| m.cpu.threads[i].state == ThreadState::Runnable)
                .collect();
            if runnable.is_empty() {
                if m.cpu.threads.iter().all(|t| t.state == ThreadState::Exited) {
                    return Outcome::Exited(m.process.last_exit_status);
                }
                // Advance virtual time to the earliest timeout, if any.
                let next = m
                    .cpu
                    .threads
                    .iter()
                    .filter_map(|t| match t.state {
                        ThreadState::Blocked(Wait::Futex { deadline, .. }) => deadline,
                        ThreadState::Blocked(Wait::Sleep { deadline }) => Some(deadline),
                        ThreadState::Blocked(Wait::SigWait { deadline, .. }) => deadline,
                        ThreadState::Blocked(
                            Wait::Io { deadline, .. } | Wait::Retry { deadline, .. },
                        ) => deadline,
                        _ => None,
                    })
                    .chain(m.next_timer_deadline())
                    .min();
                // Threads waiting on the host: wait for it (virtual time
                // advances by the real time waited).
                if m.has_host_waits() {
                    let left = next.map(|d| Duration::from_nanos(d.saturating_sub(m.cpu.vtime)));
                    m.poll_host(left);
                    if let Some(d) = next {
                        if left.is_some_and(|l| l.is_zero()) {
                            m.cpu.vtime = m.cpu.vtime.max(d);
                        }
                    }
                    continue;
                }
                match next {
                    // In a tree of processes, the others run in real time:
                    // a process waits for its deadline in real time, and a
                    // signal (a child's SIGCHLD, a parent's kill) may come
                    // first (`timeout 1 sleep 5`).
                    Some(d) if m.config.process.labelled => {
                        wait_for_host_signal(m, Some(d));
                        continue;
                    }
                    Some(d) => {
                        m.cpu.vtime = m.cpu.vtime.max(d);
                        continue;
                    }
                    // The guest handles a signal another process may send:
                    // wait for one (virtual time advances by the real time
                    // waited).
                    None if signals::host::handled() => {
                        wait_for_host_signal(m, None);
                        continue;
                    }
                    None => return Outcome::Deadlock(deadlock_report(m)),
                }
            }
            // A paused quantum continues in the thread that was running.
            let paused = self.paused_quantum.take();
            let next = if paused.is_some()
                || (!rotate && m.cpu.threads[m.cpu.cur].state == ThreadState::Runnable)
            {
                m.cpu.cur
            } else {
                m.cpu.sched.pick(&runnable, m.cpu.cur)
            };
            // A thread whose saved registers changed while it waited (a
            // wake's return value) is loaded even if the CPU holds it.
            if next != live || m.cpu.threads[next].ctx_changed {
                if let Err(e) = m.cpu.threads[next].ctx.restore(uc) {
                    return internal(m, &format!("cannot switch threads: {e}"));
                }
                if next != live {
                    m.obs.stats.switches += 1;
                }
                live = next;
            }
            m.cpu.threads[next].ctx_changed = false;
            // (Resuming a paused quantum is no new quantum: no event.)
            if paused.is_none() && (next != m.cpu.cur || m.obs.stats.switches == 0) {
                m.cpu.cur = next;
                let pc = uc.reg(Reg::RIP);
                m.emit(pc, EventKind::ContextSwitch);
            }
            m.cpu.cur = next;
            // A signal the thread has to take runs its handler first.
            if let Delivery::Terminate(signal) = m.deliver_pending() {
                return Outcome::Signaled {
                    signal,
                    fault: None,
                };
            }
            // The block hook this replaces stopped at the entry of the
            // quantum-th block, so quantum - 1 blocks ran: keep those
            // interleavings (but always make progress).
            // (A debugger's pause left the block it stopped in counted; the
            // block re-entered on resuming is given back: gdb/hook.rs.)
            let contended = runnable.len() >= 2;
            let blocks = match paused {
                Some(left) => u64::try_from(left + 1).unwrap_or(1).max(1),
                None => m.cpu.sched.next_quantum(contended).saturating_sub(1).max(1),
            };
            // Blocks test the instruction limit only while one is in force.
            m.cpu.uc.clock_limit(m.cpu.insn_limit != u64::MAX);
            m.cpu.clock.set_budget(blocks, m.cpu.insn_limit);
            m.cpu.stop = None;
            m.cpu.bad_access = None;
            let rip = uc.reg(Reg::RIP);
            let mut result = uc.start(rip);
            if !m.finish_sigreturn() {
                result = Err(UcError(unicorn_engine_sys::uc_error::READ_UNMAPPED));
            }
            // Scheduling steps: the blocks this quantum ran, if it had
            // competition (emu/src/cpu/sched.rs).
            let ran = blocks.saturating_sub(u64::try_from(m.cpu.clock.blocks_left()).unwrap_or(0));
            m.cpu.sched.ran(ran, contended);
            if contended {
                m.obs.stats.steps += ran;
            }
            // Accesses still buffered come before anything that follows.
            m.flush_accesses();
            // The quantum may end right after a Tracked instruction whose
            // adversarial read or write is not settled yet.
            m.settle_adversarial();
            m.sync_clock();
            if m.cpu.stop.is_none() {
                m.cpu.stop = m.clock_stop();
            }
            if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                return internal(m, &format!("cannot save thread state: {e}"));
            }
            rotate = false;
            match (m.cpu.stop.take(), result) {
                (Some(Stop::ExitGroup(code)), _) => return Outcome::Exited(code),
                (Some(Stop::Killed(signal)), _) => {
                    return Outcome::Signaled {
                        signal,
                        fault: None,
                    }
                }
                (Some(Stop::Fault(f)), _) if deliver_stop_fault(m, &f) => {
                    if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                        return internal(m, &format!("cannot save thread state: {e}"));
                    }
                }
                (Some(Stop::Fault(f)), _) => {
                    return Outcome::Signaled {
                        signal: f.signal,
                        fault: Some(f),
                    }
                }
                (Some(Stop::StrictSyscall(nr)), _) => {
                    return Outcome::UnsupportedSyscall {
                        nr,
                        pc: uc.reg(Reg::RIP),
                    }
                }
                (Some(Stop::ObserverStop(pc)), _) => return Outcome::ObserverStop { pc },
                (Some(Stop::Exec(req)), _) => return Outcome::Exec(req),
                (Some(Stop::InsnLimit), _) => {
                    return Outcome::Stopped(StopReason::MaxInsns(m.obs.stats.insns))
                }
                (Some(Stop::Debug), _) => {
                    self.paused_quantum = Some(m.cpu.clock.blocks_left());
                    self.live = live;
                    self.rotate = false;
                    return Outcome::Paused;
                }
                (_, Err(e)) if deliver_fault(m, e) => {
                    if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                        return internal(m, &format!("cannot save thread state: {e}"));
                    }
                }
                (_, Err(_)) if vsyscall(m) => {
                    if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                        return internal(m, &format!("cannot save thread state: {e}"));
                    }
                }
                (_, Err(e)) => {
                    return Outcome::Signaled {
                        signal: signal_of(e),
                        fault: Some(cpu_fault(m, e)),
                    }
                }
                (Some(Stop::Preempt), Ok(())) => rotate = true,
                (Some(Stop::Blocked), Ok(())) | (Some(Stop::ThreadExit), Ok(())) => {}
                (None, Ok(())) => {
                    let pc = uc.reg(Reg::RIP);
                    return internal(m, &format!("emulation stopped unexpectedly at {pc:#x}"));
                }
            }
        }
    }

    /// The statistics report of the finished run.
    pub fn report(&self) -> Report<'_> {
        let m = &self.machine;
        Report {
            stats: &m.obs.stats,
            threads: m
                .cpu
                .threads
                .iter()
                .map(|t| (t.tid, t.lthread, t.insns))
                .collect(),
            wall: self.wall,
            observed: match m.obs.policy.observed() {
                AccessMode::None => "none",
                AccessMode::Tracked => "tracked",
                AccessMode::All => "all",
            },
            event_hash: m.obs.observer.stream_hash(),
        }
    }

    /// Describes a code address: `symbol+off` and the disassembled instruction.
    pub fn describe(&self, pc: u64) -> String {
        describe_pc(&self.machine, pc)
    }
}

/// A layout error while mapping the interpreter, as an error about its file.
fn elf_error(ld: &ElfFile, e: LoadError) -> ElfError {
    match e {
        LoadError::Elf(e) | LoadError::Interpreter(e) => e,
        LoadError::Layout(why) => ElfError::Corrupt(ld.path.clone(), why),
    }
}

fn internal(m: &Machine, why: &str) -> Outcome {
    Outcome::Signaled {
        signal: libc::SIGABRT,
        fault: Some(GuestFault {
            signal: libc::SIGABRT,
            pc: m.cpu.uc.reg(Reg::RIP),
            addr: None,
            what: format!("internal emulator error: {why}"),
        }),
    }
}

/// The legacy vsyscall page's entry points (`gettimeofday`, `time`,
/// `getcpu` at 0xffffffffff600000, +0x400, +0x800), by their address's low
/// 47 bits: the CPU reports a fetch there truncated.
const VSYSCALLS: [(u64, u64); 3] = [
    (0x7fff_ff60_0000, 96),
    (0x7fff_ff60_0400, 201),
    (0x7fff_ff60_0800, 309),
];

/// If the thread faulted fetching a vsyscall entry point (old binaries
/// and the JVM call `time` there), makes the call as the kernel's
/// vsyscall emulation does — the system call, then a return to the caller
/// — and returns true.
fn vsyscall(m: &mut Machine) -> bool {
    const LOW47: u64 = (1 << 47) - 1;
    let Some((addr, what)) = m.cpu.bad_access else {
        return false;
    };
    let Some(&(_, nr)) = VSYSCALLS.iter().find(|(a, _)| addr & LOW47 == *a) else {
        return false;
    };
    if what != "execution of unmapped memory" {
        return false;
    }
    let uc = m.cpu.uc;
    let rsp = uc.reg(Reg::RSP);
    let Some(ret) = m
        .cpu
        .mem
        .slice(rsp, 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    else {
        return false;
    };
    uc.set_reg(Reg::RAX, nr);
    m.syscall();
    uc.set_reg(Reg::RSP, rsp + 8);
    uc.set_reg(Reg::RIP, ret);
    m.cpu.bad_access = None;
    true
}

/// A CPU fault of the current thread to the guest's handler, if it
/// installed one (linux::signals): SIGSEGV for a memory fault, SIGILL for
/// an invalid instruction or another exception.
fn deliver_fault(m: &mut Machine, e: UcError) -> bool {
    use crate::linux::signals::FaultInfo;
    let signal = signal_of(e);
    let (code, addr) = match m.cpu.bad_access {
        Some((a, what)) => {
            // SEGV_MAPERR for an unmapped address, SEGV_ACCERR for a
            // protection fault.
            let code = if what.contains("unmapped") { 1 } else { 2 };
            (code, a)
        }
        // ILL_ILLOPN at the instruction.
        None => (2, m.cpu.uc.reg(Reg::RIP)),
    };
    if m.deliver_fault(FaultInfo { signal, code, addr }) {
        m.cpu.bad_access = None;
        true
    } else {
        false
    }
}

/// A fault lard found itself (an invalid instruction, a LARD fault) to the
/// guest's handler, at the faulting instruction, if it installed one.
fn deliver_stop_fault(m: &mut Machine, f: &GuestFault) -> bool {
    use crate::linux::signals::FaultInfo;
    let code = match (f.signal, &m.cpu.bad_access) {
        (libc::SIGSEGV, Some((_, what))) if what.contains("unmapped") => 1,
        _ => 2,
    };
    let rip = m.cpu.uc.reg(Reg::RIP);
    m.cpu.uc.set_reg(Reg::RIP, f.pc);
    let info = FaultInfo {
        signal: f.signal,
        code,
        addr: f.addr.unwrap_or(f.pc),
    };
    if m.deliver_fault(info) {
        true
    } else {
        m.cpu.uc.set_reg(Reg::RIP, rip);
        false
    }
}

fn signal_of(e: UcError) -> i32 {
    use unicorn_engine_sys::uc_error as E;
    match e.0 {
        E::INSN_INVALID | E::EXCEPTION => libc::SIGILL,
        // A locked access across a page boundary of shared memory (patch
        // 0012), as Linux's split-lock detection reports it.
        E::READ_UNALIGNED | E::WRITE_UNALIGNED | E::FETCH_UNALIGNED => libc::SIGBUS,
        _ => libc::SIGSEGV,
    }
}

fn cpu_fault(m: &Machine, e: UcError) -> GuestFault {
    let pc = m.cpu.uc.reg(Reg::RIP);
    let (addr, what) = match m.cpu.bad_access {
        Some((a, w)) => (Some(a), w.to_string()),
        None if e.0 == unicorn_engine_sys::uc_error::WRITE_UNALIGNED => (
            None,
            "locked access across a page boundary of shared memory (a split lock)".to_string(),
        ),
        None => (None, format!("CPU exception: {e}")),
    };
    GuestFault {
        signal: signal_of(e),
        pc,
        addr,
        what,
    }
}

/// `symbol+off: instruction` for a guest code address.
/// `pc` may be a site (observe::callstack): its PC is described.
pub fn describe_pc(m: &Machine, pc: u64) -> String {
    let pc = callstack::pc(pc);
    let sym = m.obs.objects.describe_pc(pc).unwrap_or_else(|| "??".into());
    let insn = match m.cpu.mem.slice(pc, 1) {
        Some(_) => {
            let avail = (1..=15u64)
                .rev()
                .find(|&n| m.cpu.mem.slice(pc, n).is_some())
                .unwrap_or(0);
            let bytes = m.cpu.mem.slice(pc, avail).unwrap_or(&[]);
            CodeMap::describe(bytes, pc)
        }
        None => "(unmapped)".into(),
    };
    format!("{pc:#x} <{sym}>: {insn}")
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

/// Waits in the host for a signal (the host handler's, which interrupts
/// the wait), up to the virtual-time `deadline` (at most 10 ms without
/// one); virtual time advances by the real time waited, to the deadline
/// when it passed.
fn wait_for_host_signal(m: &mut Machine, deadline: Option<u64>) {
    let t = Instant::now();
    let ms = deadline.map_or(10, |d| d.saturating_sub(m.cpu.vtime).div_ceil(1_000_000));
    if !signals::host::any() && ms > 0 {
        let ms = i32::try_from(ms).unwrap_or(i32::MAX);
        // SAFETY: poll on no descriptors is a sleep a signal interrupts.
        unsafe { libc::poll(std::ptr::null_mut(), 0, ms) };
    }
    m.cpu.vtime += u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    if let Some(d) = deadline {
        if !signals::host::any() {
            m.cpu.vtime = m.cpu.vtime.max(d);
        }
    }
}

fn deadlock_report(m: &Machine) -> String {
    let mut s = String::from("deadlock: every live thread is blocked");
    for t in &m.cpu.threads {
        let what = match t.state {
            ThreadState::Blocked(Wait::Futex { addr, .. }) => {
                let obj = m
                    .obs
                    .objects
                    .describe_data(addr)
                    .map_or(String::new(), |d| format!(" ({d})"));
                format!("futex wait on {addr:#x}{obj}")
            }
            ThreadState::Blocked(Wait::Sleep { .. }) => "sleep".into(),
            ThreadState::Blocked(Wait::Io { fd, .. }) => format!("waits on descriptor {fd}"),
            ThreadState::Blocked(Wait::Retry { .. }) => "waits on the host".into(),
            ThreadState::Blocked(Wait::Signal | Wait::SigWait { .. }) => {
                "waits for a signal".into()
            }
            ThreadState::Runnable => "runnable".into(),
            ThreadState::Exited => continue,
        };
        // A blocked thread's saved RIP is just past its `syscall`.
        let pc = t.ctx.reg(Reg::RIP).wrapping_sub(2);
        let lang = t
            .lthread
            .map_or(String::new(), |l| format!(" (language thread {l})"));
        let _ = write!(
            s,
            "\n  thread {}{lang}: {what} at {}",
            t.tid,
            describe_pc(m, pc)
        );
    }
    s
}
