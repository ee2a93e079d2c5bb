//! The emulator's side of adversarial memory (`lard run --adversarial`):
//! it only *applies* the values the model in
//! [`lard_detector_hw::adversarial`] chooses.
//!
//! A Tracked read of a monitored location is delivered by the instruction
//! call (with adversarial memory on, every Tracked site gets one and its
//! accesses are computed from its operands there, not observed by
//! translated code) *before* the instruction executes. [`Machine::adversarial_access`] asks
//! the model for the value the read returns; if it differs from memory's,
//! it writes the chosen value into guest memory and leaves a *pending
//! restore*; the instruction then reads it as its architectural result.
//! Right after the instruction — at the code hook of the next instruction
//! (hooked for every Tracked site while adversarial memory is on) or, if the
//! quantum ended there, when `uc_emu_start` returns — [`Machine::settle_adversarial`]
//! puts memory's real value back. The emulator is single-threaded, so no
//! other guest thread and no untracked code runs in between: non-Tracked
//! code always sees memory as it is. A Tracked write leaves a *pending
//! commit* instead: after it executes, the location's new contents are
//! appended to its write buffer at the writer's clock (for a read-modify-
//! write, the commit replaces the restore: memory keeps what the instruction
//! computed from the adversarial value).
//!
//! A plain `mov` store needs no commit: its value is known before it runs
//! and is recorded at once.
//!
//! Only Tracked sites that can return adversarial values need the settle
//! call on their next instruction (one on every site's successor would tax
//! all Tracked accesses): the trigger PCs get it when code is scanned, any other
//! site the first time it touches a monitored location; that first time its
//! read sees memory as it is (the latest value, always allowed).
//!
//! With adversarial memory off, `Machine::adversary` is `None`: no extra
//! hooks are installed and the Tracked path pays one `is_some` test.

use super::{gpr_reg, Machine};
use crate::cpu::code::MemInsn;
use iced_x86::{Mnemonic, OpKind, Register};
use lard_detector_hw::adversarial::{AdversarialConfig, AdversarialMemory};
use lard_detector_hw::event::{AccessKind, LardOp};

/// What must happen to guest memory right after the current instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// Put `value` back into `[addr, addr+size)` (a read saw another value).
    Restore { addr: u64, size: u64, value: u64 },
    /// Append the location's new contents (a write happened).
    Commit { addr: u64, size: u64 },
}

/// Adversarial memory state of one run.
pub struct Adversary {
    /// The model.
    pub memory: AdversarialMemory,
    /// Work left for right after the current instruction (at most a few
    /// entries; the vector keeps its capacity).
    pending: Vec<Pending>,
    /// Tracked sites whose next instruction is hooked to settle memory.
    pub settle_hooked: std::collections::HashSet<u64>,
}

impl Adversary {
    /// Adversarial memory with `config`.
    pub fn new(config: AdversarialConfig) -> Adversary {
        Adversary {
            memory: AdversarialMemory::new(config),
            pending: Vec::with_capacity(4),
            settle_hooked: std::collections::HashSet::new(),
        }
    }

    /// True when memory must be settled after the current instruction.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// Little-endian value of `size` (1..=8) bytes at `addr`.
fn load(m: &Machine, addr: u64, size: u64) -> Option<u64> {
    let bytes = m.cpu.mem.slice(addr, size)?;
    let mut v = [0u8; 8];
    v[..bytes.len()].copy_from_slice(bytes);
    Some(u64::from_le_bytes(v))
}

/// The value a plain `mov` store writes (register or immediate source),
/// known before it executes; `None` for any other instruction.
fn store_value(m: &Machine, site: &MemInsn) -> Option<u64> {
    let i = &site.insn;
    if i.mnemonic() != Mnemonic::Mov || i.op0_kind() != OpKind::Memory {
        return None;
    }
    match i.op1_kind() {
        OpKind::Register => {
            let r = i.op1_register();
            let high = matches!(r, Register::AH | Register::CH | Register::DH | Register::BH);
            let g = lard_isa_ext::Gpr::from_iced(r.full_register())?;
            let v = m.cpu.uc.reg(gpr_reg(g));
            Some(if high { v >> 8 } else { v })
        }
        OpKind::Immediate8 | OpKind::Immediate16 | OpKind::Immediate32 => Some(i.immediate(1)),
        OpKind::Immediate32to64 | OpKind::Immediate8to64 => Some(i.immediate(1)),
        _ => None,
    }
}

impl Machine {
    /// One Tracked access of the current instruction `site` at `pc` (before
    /// it executes): lets the adversarial memory choose a read's value or
    /// record a write. Does nothing unless adversarial memory is on and the
    /// access involves a monitored location or a trigger.
    pub fn adversarial_access(
        &mut self,
        pc: u64,
        site: &MemInsn,
        addr: u64,
        size: u64,
        kind: AccessKind,
    ) {
        let Some(adv) = self.obs.adversary.as_deref() else {
            return;
        };
        if !adv.memory.involves(pc, addr, size) {
            return;
        }
        let hooked = adv.settle_hooked.contains(&pc);
        let next = pc + site.insn.len() as u64;
        let origin = self.origin();
        let current = if size <= 8 {
            load(self, addr, size)
        } else {
            None
        };
        let stored = store_value(self, site);
        let Some(adv) = self.obs.adversary.as_deref_mut() else {
            return;
        };
        let mut needs_hook = false;
        match kind {
            AccessKind::Read => {
                let Some(current) = current else { return };
                let chosen = adv.memory.read_as(&origin, pc, addr, size, current, hooked);
                needs_hook = !hooked && adv.memory.buffer(addr).is_some();
                if let Some(v) = chosen.filter(|v| *v != current) {
                    let bytes = v.to_le_bytes();
                    if self.cpu.mem.write(addr, &bytes[..size as usize]).is_some() {
                        adv.pending.push(Pending::Restore {
                            addr,
                            size,
                            value: current,
                        });
                    }
                }
            }
            AccessKind::Write => {
                if adv
                    .memory
                    .before_write(pc, addr, size, current.unwrap_or(0))
                {
                    match stored {
                        // A plain store: its value is known before it runs.
                        Some(v) => {
                            let (mem, adv) = (&self.cpu.mem, &mut *adv);
                            adv.memory.after_write(&origin, addr, size, |a, s| {
                                let s = u64::from(s);
                                let mut bytes = [0u8; 8];
                                bytes[..s as usize].copy_from_slice(mem.slice(a, s)?);
                                let w = v.to_le_bytes();
                                for (i, b) in bytes.iter_mut().enumerate().take(s as usize) {
                                    let at = a + i as u64;
                                    if at >= addr && at < addr + size {
                                        *b = w[(at - addr) as usize];
                                    }
                                }
                                Some(u64::from_le_bytes(bytes))
                            });
                        }
                        None => {
                            adv.pending.push(Pending::Commit { addr, size });
                            needs_hook = !hooked;
                        }
                    }
                }
            }
        }
        if needs_hook {
            // From the next execution of this site on, memory settles right
            // after it; this time reads saw memory as it is, and a pending
            // commit settles at the next hook or the end of the quantum.
            if let Err(e) = self.hook_settle(pc, next) {
                log::warn!("adversarial memory: cannot hook {next:#x}: {e}");
            }
        }
    }

    /// Right after an instruction with adversarial accesses: restores the
    /// real values reads were shown instead, and records writes.
    pub fn settle_adversarial(&mut self) {
        let Some(mut adv) = self.obs.adversary.take() else {
            return;
        };
        let origin = self.origin();
        let pending = std::mem::take(&mut adv.pending);
        for p in &pending {
            match *p {
                Pending::Commit { addr, size } => {
                    adv.memory
                        .after_write(&origin, addr, size, |a, s| load(self, a, u64::from(s)));
                }
                Pending::Restore { addr, size, value } => {
                    // A read-modify-write keeps what it wrote.
                    let written = pending.iter().any(|q| {
                        matches!(*q, Pending::Commit { addr: a, size: s }
                            if a < addr + size && addr < a + s)
                    });
                    if !written {
                        let bytes = value.to_le_bytes();
                        let _ = self.cpu.mem.write(addr, &bytes[..size as usize]);
                    }
                }
            }
        }
        adv.pending = pending;
        adv.pending.clear();
        self.obs.adversary = Some(adv);
    }

    /// A LARDx86 op, for the adversarial memory's clocks and buffers.
    pub fn adversarial_lard(&mut self, op: &LardOp) {
        let Some(mut adv) = self.obs.adversary.take() else {
            return;
        };
        let origin = self.origin();
        adv.memory
            .lard(&origin, op, |a, s| load(self, a, u64::from(s)));
        self.obs.adversary = Some(adv);
    }
}
