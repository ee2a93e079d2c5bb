//! The per-PC observation decision.

use super::Machine;
use super::IN_HELPER_SITES;
use crate::cpu::code::Site;
use crate::cpu::uc::observe;
use crate::observe::observation::Policy;
use iced_x86::OpAccess;
use iced_x86::Register;

/// What translated code does at one guest instruction, decided when the
/// instruction is translated ([`Machine::observes`]; unicorn patch 0004).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Observe {
    /// Call the emulator before the instruction ([`Machine::call_at`]:
    /// LARD sites, intercepted entries, return addresses).
    pub call: bool,
    /// Deliver each of its memory accesses, before it happens.
    pub mem: bool,
    /// What its accesses are ([`Observe::TRACKED`], ...), handed back with each.
    pub tag: u16,
    /// With `mem`: append the accesses to the access buffer (delivered
    /// after they happened, [`Machine::flush_accesses`]) instead of calling
    /// the emulator before each.
    pub buffered: bool,
    /// With `mem`: each access is made inside its observation call rather
    /// than by translated code (unicorn patch 0009). That keeps ~60 bytes of
    /// inline TLB lookup per access out of the translated code, so that a
    /// program with 100,000 Tracked sites runs them from the host caches
    /// about as fast as one with 10; it costs ~2 ns per access
    /// where the code fits anyway. Chosen for Tracked sites once there are
    /// [`IN_HELPER_SITES`]; not for `--observe all` or binary mode, where it
    /// made pigz slower (docs/performance-design.md, "Tracked sites in one call").
    pub in_helper: bool,
    /// With `mem`: the accesses only add 1 to a counter, inline (unicorn
    /// patch 0011; the slot is the tag's high byte): binary mode's pruned
    /// instructions whose accesses need nothing else
    /// ([`BinaryRuntime::decide`](crate::intercept::runtime::BinaryRuntime::decide)).
    pub count: bool,
    /// The instruction adds 1 to a counter before it runs, inline (unicorn
    /// patch 0011; the slot is the tag's high byte): binary mode's system
    /// code atomic instructions, whose instruction call would only count
    /// a sync event ([`Machine::counted_atomic`]).
    pub count_insn: bool,
}

impl Observe {
    /// Accesses are Tracked (LARD), or program code's (binary mode: checked
    /// unless [`BinaryRuntime::classify`](crate::intercept::runtime::BinaryRuntime::classify)
    /// drops them).
    pub const TRACKED: u16 = 1;
    /// A Tracked site delivered under `--observe tracked`: reported under
    /// [`Machine::attributed_pc`] (with [`Observe::TRACKED`]).
    pub const SITE: u16 = 8;
    /// Binary mode, with [`Observe::TRACKED`]: a program-code instruction
    /// static pruning kept (decided at translation, as pruning is fixed
    /// when the code's object is loaded), so its accesses are checked
    /// without looking the PC up in the pruning table again
    /// ([`BinaryRuntime::classify`](crate::intercept::runtime::BinaryRuntime::classify)).
    pub const UNPRUNED: u16 = 2;
    /// Binary mode, with [`Observe::TRACKED`]: a program-code instruction
    /// inside an inlined atomic operation (DWARF), so its accesses are
    /// atomic; decided at translation, so that the accesses of other
    /// instructions need no look-up
    /// ([`BinaryRuntime::classify`](crate::intercept::runtime::BinaryRuntime::classify)).
    pub const INLINED_ATOMIC: u16 = 4;

    /// The flags unicorn's decision callback returns.
    #[inline]
    pub fn flags(self) -> u32 {
        let mut f = u32::from(self.tag) << observe::TAG_SHIFT;
        if self.call {
            f |= observe::INSN_CALL;
        }
        if self.mem {
            f |= observe::MEM;
            if self.in_helper {
                f |= observe::IN_HELPER;
            }
            if self.count {
                f |= observe::COUNT;
            }
        }
        if self.count_insn {
            f |= observe::INSN_COUNT;
        }
        if self.buffered {
            f |= observe::BUFFERED;
        }
        f
    }
}

/// What the instruction call at a PC does ([`Machine::call_at`]): bits.
pub mod call {
    /// A LARD site, or the instruction after a Tracked site that settles
    /// adversarial memory.
    pub const SITE: u8 = 1;
    /// The entry of an intercepted function.
    pub const INTERCEPT: u8 = 2;
    /// The return address of an intercepted call (binary mode).
    pub const RETURN: u8 = 4;
}

impl Machine {
    /// What translated code does at `pc` — the one per-PC decision every
    /// observation mechanism goes through (unicorn asks once per
    /// translation; [`Machine::call_at`] and the mapping paths flush
    /// translations whose decision changes), by the run's [`Policy`]:
    /// * an instruction call where [`Machine::call_at`] registered one;
    /// * LARD mode: Tracked accesses, or every access under `--observe
    ///   all` with Tracked ones tagged; with adversarial memory, none
    ///   (a Tracked site's instruction call delivers its accesses);
    /// * binary mode: [`BinaryRuntime::decide`](crate::intercept::runtime::BinaryRuntime::decide).
    pub fn observes(&self, pc: u64) -> Observe {
        let call = self.obs.calls.contains_key(&pc);
        match self.obs.policy {
            Policy::LardTracked => {
                let tracked = self.obs.code.is_tracked(pc);
                Observe {
                    call,
                    mem: tracked,
                    tag: if tracked {
                        Observe::TRACKED | Observe::SITE
                    } else {
                        0
                    },
                    buffered: false,
                    in_helper: self.obs.code.tracked_sites() >= IN_HELPER_SITES,
                    ..Observe::default()
                }
            }
            Policy::Calls | Policy::Adversarial { .. } => Observe {
                call,
                ..Observe::default()
            },
            Policy::LardAll => Observe {
                call,
                mem: true,
                tag: if self.obs.code.is_tracked(pc) {
                    Observe::TRACKED
                } else {
                    0
                },
                buffered: self.obs.access_buffer.is_some(),
                ..Observe::default()
            },
            Policy::Binary => {
                let atomic = matches!(self.obs.code.site(pc).map(|s| &**s), Some(Site::Atomic(_)));
                match &self.obs.binary {
                    Some(rt) => rt.decide(pc, call, atomic, atomic && self.counted_atomic(pc)),
                    None => Observe {
                        call,
                        ..Observe::default()
                    },
                }
            }
        }
    }

    /// True when the atomic instruction at `pc` is translated counted
    /// instead of with its instruction call: binary mode, no observer of
    /// low-level sync, no adversarial memory, system code (program code's
    /// atomics are synchronization), no other instruction call there, and
    /// exactly one written memory operand whose address the call could
    /// compute — the call would then only add 1 to the sync events.
    pub fn counted_atomic(&self, pc: u64) -> bool {
        let Some(rt) = &self.obs.binary else {
            return false;
        };
        if rt.counted.is_none()
            || self.obs.report_sync
            || self.obs.adversary.is_some()
            || self.obs.calls.get(&pc) != Some(&call::SITE)
            || rt.program.contains(pc)
        {
            return false;
        }
        let Some(Site::Atomic(i)) = self.obs.code.site(pc).map(|s| &**s) else {
            return false;
        };
        let plain = |r: Register| {
            r == Register::None
                || r == Register::RIP
                || r == Register::EIP
                || lard_isa_ext::Gpr::from_iced(r.full_register()).is_some()
        };
        let writes = i.mem.iter().filter(|m| {
            matches!(
                m.access(),
                OpAccess::Write
                    | OpAccess::CondWrite
                    | OpAccess::ReadWrite
                    | OpAccess::ReadCondWrite
            )
        });
        !i.rep_string
            && writes.clone().count() == 1
            && writes
                .into_iter()
                .all(|m| plain(m.base()) && plain(m.index()))
            && i.mem.iter().all(|m| plain(m.base()) && plain(m.index()))
    }

    /// Registers an instruction call (`what`, [`call`] bits) at `pc` and
    /// drops translations that were made without it.
    pub fn call_at(&mut self, pc: u64, what: u8) {
        let e = self.obs.calls.entry(pc).or_insert(0);
        if *e & what != what {
            *e |= what;
            self.cpu.uc.remove_cache(pc, pc + 1);
        }
    }
}
