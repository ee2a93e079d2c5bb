//! The signal frame: a handler runs on a kernel-layout frame — on the
//! alternate stack when it asked for it — and `rt_sigreturn` resumes at
//! whatever the handler left in the frame's `ucontext`, with the signal
//! mask it left there. A fault (`SIGSEGV`, `SIGBUS`, `SIGFPE`, `SIGILL`)
//! in a thread whose process installed a handler runs that handler at the
//! faulting instruction: this is how the JVM's implicit null checks and
//! safepoint polls work (the handler moves the faulting thread's RIP to a
//! stub). Asynchronous signals use the same frame (super::deliver).
//!
//! The frame is the kernel's `rt_sigframe` for x86-64: the return address
//! (`sa_restorer`), a `ucontext` (flags, link, `stack_t`, `sigcontext`
//! with the general registers in `mcontext_t` order, the signal mask),
//! a `siginfo`, and a 512-byte FXSAVE area the `sigcontext` points to.
//! The FPU and vector registers are kept by lard (the thread's whole
//! register context, restored by `rt_sigreturn`); the FXSAVE area the
//! handler sees holds only the control words.

use super::{FaultInfo, SigInfo, UNBLOCKABLE};
use crate::cpu::uc::{Context, Reg};
use crate::linux::kernel::Kernel;
use crate::linux::syscalls::Ret::{self, NoReturn, Val};

/// `sa_flags`: run on the alternate signal stack.
const SA_ONSTACK: u64 = 0x0800_0000;
/// `sa_flags`: reset to the default action once delivered.
const SA_RESETHAND: u64 = 0x8000_0000;
/// `sa_flags`: do not block the signal while its handler runs.
const SA_NODEFER: u64 = 0x4000_0000;
/// Offset of `uc_sigmask` in the `ucontext`.
const UC_SIGMASK: u64 = 8 + 8 + 24 + 256;
/// The x86-64 red zone below a thread's stack pointer: a function's own
/// data may lie there (a signal frame must skip it).
pub(crate) const RED_ZONE: u64 = 128;
/// `sizeof(struct ucontext)` (kernel): flags, link, stack_t (24),
/// sigcontext (256), sigmask (8).
const UCONTEXT: u64 = 8 + 8 + 24 + 256 + 8;
/// `sizeof(siginfo_t)`.
const SIGINFO: u64 = 128;
/// The FXSAVE area.
const FPSTATE: u64 = 512;
/// `SS_ONSTACK`, `SS_DISABLE` (`stack_t.ss_flags`).
const SS_ONSTACK: u64 = 1;
const SS_DISABLE: u64 = 2;

/// The general registers of `mcontext_t`, in order (`REG_R8` …
/// `REG_EFL`).
const GREGS: [Reg; 18] = [
    Reg::R8,
    Reg::R9,
    Reg::R10,
    Reg::R11,
    Reg::R12,
    Reg::R13,
    Reg::R14,
    Reg::R15,
    Reg::RDI,
    Reg::RSI,
    Reg::RBP,
    Reg::RBX,
    Reg::RDX,
    Reg::RAX,
    Reg::RCX,
    Reg::RSP,
    Reg::RIP,
    Reg::EFLAGS,
];

impl Kernel<'_> {
    /// The guest's `sigaction` of `sig`: (handler, flags, restorer, mask);
    /// handler 0 is `SIG_DFL`, 1 `SIG_IGN`.
    pub(super) fn sigaction(&self, sig: i32) -> (u64, u64, u64, u64) {
        let Some(act) = usize::try_from(sig)
            .ok()
            .and_then(|s| self.process.sigactions.get(s))
        else {
            return (0, 0, 0, 0);
        };
        let word =
            |i: usize| u64::from_le_bytes(act[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        (word(0), word(1), word(2), word(3))
    }

    /// The handler of `sig` and its flags, if the guest installed one (not
    /// `SIG_DFL` or `SIG_IGN`), with its `sa_restorer`.
    fn handler(&self, sig: i32) -> Option<(u64, u64, u64)> {
        let (handler, flags, restorer, _) = self.sigaction(sig);
        (handler > 1).then_some((handler, flags, restorer))
    }

    /// Delivers a fault of the current thread to the guest's handler, if it
    /// has one: builds the signal frame and points the thread at the
    /// handler. Returns false (nothing changed) when the fault takes its
    /// default action or the frame cannot be written.
    pub fn deliver_fault(&mut self, f: FaultInfo) -> bool {
        self.push_frame(SigInfo {
            signal: f.signal,
            code: f.code,
            word16: f.addr,
            word24: 0,
        })
    }

    /// Runs the handler of `info.signal` in the current thread (whose
    /// registers are in the CPU): writes the signal frame, blocks the
    /// handler's mask, and points the thread at the handler. Returns false
    /// (nothing changed) when the signal has no handler or the frame
    /// cannot be written.
    pub(super) fn push_frame(&mut self, info: SigInfo) -> bool {
        let f = info;
        let Some((handler, flags, restorer)) = self.handler(f.signal) else {
            return false;
        };
        let sa_mask = self.sigaction(f.signal).3;
        let uc = self.cpu.uc;
        let tid = self.cpu.threads[self.cpu.cur].tid;
        let rsp = uc.reg(Reg::RSP);
        let alt = self
            .process
            .signals
            .altstacks
            .iter()
            .find(|a| a.0 == tid)
            .map(|&(_, base, size)| (base, size));
        let on_alt = alt.is_some_and(|(b, s)| rsp > b && rsp <= b + s);
        let top = match alt {
            Some((base, size)) if flags & SA_ONSTACK != 0 && !on_alt => base + size,
            _ => rsp - RED_ZONE,
        };
        let fpstate = (top - FPSTATE) & !63;
        let frame = ((fpstate - 8 - UCONTEXT - SIGINFO) & !15) - 8;
        let ucontext = frame + 8;
        let siginfo = ucontext + UCONTEXT;
        // The frame's bytes, little-endian words at their offsets.
        let mut bytes = vec![0u8; (fpstate + FPSTATE - frame) as usize];
        let mut put = |off: u64, v: u64| {
            let o = off as usize;
            bytes[o..o + 8].copy_from_slice(&v.to_le_bytes());
        };
        put(0, restorer);
        let uc_off = 8;
        // uc_stack: the alternate stack, with SS_ONSTACK when in use.
        if let Some((base, size)) = alt {
            put(uc_off + 16, base);
            put(uc_off + 24, if on_alt { SS_ONSTACK } else { 0 });
            put(uc_off + 32, size);
        } else {
            put(uc_off + 24, SS_DISABLE);
        }
        let mc = uc_off + 40;
        for (i, r) in GREGS.iter().enumerate() {
            put(mc + 8 * i as u64, uc.reg(*r));
        }
        // cs = 0x33, gs = fs = 0, ss = 0x2b.
        put(mc + 8 * 18, 0x33 | (0x2b << 48));
        // err (a user-mode access; a write when it was one), trapno, oldmask, cr2.
        let (trapno, err) = match f.signal {
            libc::SIGSEGV | libc::SIGBUS => (14, 4),
            libc::SIGFPE => (0, 0),
            _ => (6, 0),
        };
        let fault = f.code > 0 && f.code < 0x80;
        if fault {
            put(mc + 8 * 19, err);
            put(mc + 8 * 20, trapno);
            put(mc + 8 * 22, f.word16);
        }
        put(mc + 8 * 23, fpstate);
        // The mask to restore: the thread's, or the one rt_sigsuspend
        // replaced for the wait.
        let thread = &mut self.cpu.threads[self.cpu.cur].sig;
        let old_mask = thread.saved_mask.take().unwrap_or(thread.mask);
        put(uc_off + UC_SIGMASK, old_mask);
        // siginfo: signo, errno, code, then the fields of the code.
        let si = siginfo - frame;
        put(si, u64::from(f.signal as u32));
        put(si + 8, u64::from(f.code as u32));
        put(si + 16, f.word16);
        put(si + 24, f.word24);
        // FXSAVE: fcw 0x37f, mxcsr 0x1f80 and its mask.
        let fp = fpstate - frame;
        put(fp, 0x37f);
        put(fp + 24, 0x1f80 | (0xffff << 32));
        if self.cpu.mem.write(frame, &bytes).is_none() {
            return false;
        }
        let Ok(mut saved) = Context::new(uc) else {
            return false;
        };
        if saved.save(uc).is_err() {
            return false;
        }
        self.process.signals.frames.push((tid, ucontext, saved));
        let bit = if flags & SA_NODEFER != 0 {
            0
        } else {
            super::bit(f.signal)
        };
        let thread = &mut self.cpu.threads[self.cpu.cur].sig;
        thread.mask = (old_mask | sa_mask | bit) & !UNBLOCKABLE;
        if flags & SA_RESETHAND != 0 {
            if let Some(act) = self.process.sigactions.get_mut(f.signal as usize) {
                *act = [0; 32];
            }
        }
        // The handler starts with the initial x87 and SSE controls and no
        // x87 flag, tag or pending exception, as Linux gives it (the
        // context at the fault comes back with rt_sigreturn): a pending
        // unmasked x87 exception (patch 0030) would otherwise raise SIGFPE
        // again at the handler's first x87 instruction.
        uc.set_reg(Reg::FPCW, 0x37f);
        uc.set_reg(Reg::FPSW, 0);
        uc.set_reg(Reg::FPTAG, 0xffff);
        uc.set_reg(Reg::MXCSR, 0x1f80);
        uc.set_reg(Reg::RSP, frame);
        uc.set_reg(Reg::RIP, handler);
        uc.set_reg(Reg::RDI, f.signal as u64);
        uc.set_reg(Reg::RSI, siginfo);
        uc.set_reg(Reg::RDX, ucontext);
        uc.set_reg(Reg::RAX, 0);
        // Direction and trap flags clear, as the kernel enters a handler.
        uc.set_reg(Reg::EFLAGS, uc.reg(Reg::EFLAGS) & !0x500);
        true
    }

    /// `rt_sigreturn`: resumes the thread with the registers the handler
    /// left in the frame's `ucontext` (at the stack pointer), and the FPU
    /// and vector registers it had at the fault. Registers are not changed
    /// inside the system call hook: the CPU stops after this call and
    /// [`Kernel::finish_sigreturn`] loads them.
    pub(in crate::linux) fn sys_rt_sigreturn(&mut self) -> Ret {
        let uc = self.cpu.uc;
        let tid = self.cpu.threads[self.cpu.cur].tid;
        let ucontext = uc.reg(Reg::RSP);
        let Some(pos) = self
            .process
            .signals
            .frames
            .iter()
            .rposition(|f| f.0 == tid && f.1 == ucontext)
        else {
            return self.kill_self(libc::SIGSEGV);
        };
        let (_, _, saved) = self.process.signals.frames.remove(pos);
        // Frames of handlers left by longjmp are gone with this one.
        self.process
            .signals
            .frames
            .retain(|f| f.0 != tid || f.1 > ucontext);
        self.process.signals.pending_return = Some((saved, ucontext));
        if self.cpu.stop.is_none() {
            self.cpu.stop = Some(crate::machine::Stop::Preempt);
        }
        uc.stop();
        NoReturn
    }

    /// Finishes an `rt_sigreturn` once the CPU has stopped: the context at
    /// the fault, with the general registers and the signal mask of the
    /// frame's `ucontext`.
    /// Returns false when the frame cannot be read (the thread then dies of
    /// SIGSEGV, as natively).
    pub fn finish_sigreturn(&mut self) -> bool {
        let Some((saved, ucontext)) = self.process.signals.pending_return.take() else {
            return true;
        };
        let uc = self.cpu.uc;
        let Some(gregs) = self
            .cpu
            .mem
            .slice(ucontext + 40, 8 * GREGS.len() as u64)
            .map(<[u8]>::to_vec)
        else {
            return false;
        };
        if saved.restore(uc).is_err() {
            return false;
        }
        if let Some(mask) = self.cpu.mem.read_u64(ucontext + UC_SIGMASK) {
            self.cpu.threads[self.cpu.cur].sig.mask = mask & !UNBLOCKABLE;
        }
        for (i, r) in GREGS.iter().enumerate() {
            let v = u64::from_le_bytes(gregs[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
            uc.set_reg(*r, v);
        }
        true
    }

    /// `sigaltstack(ss, old_ss)` for the current thread.
    pub(in crate::linux) fn sys_sigaltstack(&mut self, ss: u64, old: u64) -> Ret {
        let tid = self.cpu.threads[self.cpu.cur].tid;
        let cur = self
            .process
            .signals
            .altstacks
            .iter()
            .position(|a| a.0 == tid);
        if old != 0 {
            let rsp = self.cpu.uc.reg(Reg::RSP);
            let mut b = [0u8; 24];
            match cur.map(|i| self.process.signals.altstacks[i]) {
                Some((_, base, size)) => {
                    b[..8].copy_from_slice(&base.to_le_bytes());
                    let on = rsp > base && rsp <= base + size;
                    b[8..12]
                        .copy_from_slice(&(if on { SS_ONSTACK } else { 0 } as u32).to_le_bytes());
                    b[16..].copy_from_slice(&size.to_le_bytes());
                }
                None => b[8..12].copy_from_slice(&(SS_DISABLE as u32).to_le_bytes()),
            }
            if self.cpu.mem.write(old, &b).is_none() {
                return Val(-i64::from(libc::EFAULT));
            }
        }
        if ss != 0 {
            let Some(s) = self.cpu.mem.slice(ss, 24).map(<[u8]>::to_vec) else {
                return Val(-i64::from(libc::EFAULT));
            };
            let word = |o: usize| u64::from_le_bytes(s[o..o + 8].try_into().unwrap_or([0; 8]));
            let (base, flags, size) = (word(0), word(8) & 0xffff_ffff, word(16));
            if let Some(i) = cur {
                self.process.signals.altstacks.remove(i);
            }
            if flags & SS_DISABLE == 0 {
                if size < 2048 {
                    return Val(-i64::from(libc::ENOMEM));
                }
                self.process.signals.altstacks.push((tid, base, size));
            }
        }
        Val(0)
    }
}
