//! Delivering events to the observer: the one way events leave the machine.

use super::Machine;
use super::Stop;
use crate::binary::objects::ObjectId;
use crate::cpu::uc::AccessBuffer;
use crate::cpu::uc::Reg;
use crate::observe::observer::AccessBatch;
use crate::observe::observer::AccessRecord;
use crate::observe::observer::Control;
use lard_detector_hw::event::Access;
use lard_detector_hw::event::AccessKind;
use lard_detector_hw::event::Event;
use lard_detector_hw::event::EventKind;
use lard_detector_hw::event::LardOp as EvOp;
use lard_detector_hw::event::LowLevelSync;
use lard_detector_hw::event::ObjectKind;
use lard_detector_hw::event::Origin;
use lard_detector_hw::event::ProgramEvent;

impl Machine {
    /// Delivers an event made by `origin` (the running thread, or one being
    /// created or woken): the one way an event reaches the observer
    /// (accesses made by translated code aside: `Machine::emit_access`,
    /// the access buffer's batches). Whether a stop the observer asks for
    /// is honoured is the caller's ([`Machine::emit`]).
    #[inline]
    pub fn emit_from(&mut self, origin: Origin, pc: u64, kind: EventKind) -> Control {
        debug_assert!(self.no_buffered_accesses());
        let e = Event { pc, origin, kind };
        if !matches!(e.kind, EventKind::ContextSwitch) {
            self.obs.repeats.forget_all();
        }
        self.note_endings(&e);
        self.obs.observer.event(&e)
    }

    /// Delivers an event of the running thread; records the stop if the
    /// observer asks for one.
    #[inline]
    pub fn emit(&mut self, pc: u64, kind: EventKind) -> Control {
        let c = self.emit_from(self.origin(), pc, kind);
        if c == Control::Stop && self.cpu.stop.is_none() {
            self.cpu.stop = Some(Stop::ObserverStop(pc));
            self.cpu.uc.set_reg(Reg::RIP, pc);
            self.cpu.uc.stop();
        }
        c
    }

    /// Delivers an access from translated code's access callback; on
    /// `Stop` asks unicorn to stop, and the caller leaves the CPU loop with
    /// the state restored to the instruction's start (patch 0004), so RIP is
    /// not written here (the callback must not write registers).
    #[inline]
    pub(super) fn emit_access(&mut self, pc: u64, a: Access) -> Control {
        if a.tracked {
            self.obs.repeats.touched(a.addr, a.size);
        }
        let c = self.obs.observer.access(pc, &a);
        self.access_delivered(pc, c)
    }

    /// [`Machine::emit_access`] of a checked access of the running thread
    /// that binary mode may skip when repeated (observe::repeats):
    /// remembered when the observer says a repeat would change nothing.
    pub(super) fn emit_repeatable_access(&mut self, pc: u64, a: Access) -> Control {
        let (c, repeatable) = self.obs.observer.access_repeatable(pc, &a);
        let (cur, repeats) = (self.cpu.cur, &mut self.obs.repeats);
        if repeatable {
            repeats.touched_by(cur, a.addr, a.size);
            let write = a.kind == AccessKind::Write;
            repeats.remember(cur, pc, a.addr, a.size, write);
        } else {
            repeats.touched(a.addr, a.size);
        }
        self.access_delivered(pc, c)
    }

    /// A repeat (observe::repeats) of a checked access by program code,
    /// counted as its delivery would have been.
    #[inline]
    pub(super) fn count_repeat(&mut self, kind: AccessKind) {
        if let Some(rt) = self.obs.binary.as_mut() {
            rt.checked_accesses += 1;
            rt.repeated_accesses += 1;
        }
        self.obs.stats.count_access(true, false, kind);
    }

    /// Asks unicorn to stop after an access the observer stopped on.
    #[inline]
    fn access_delivered(&mut self, pc: u64, c: Control) -> Control {
        if c == Control::Stop {
            if self.cpu.stop.is_none() {
                self.cpu.stop = Some(Stop::ObserverStop(pc));
            }
            self.cpu.uc.stop();
        }
        c
    }

    /// Reports every sized data symbol of ELF object `id` as a static object
    /// (`Alloc {kind: Static}`, site 0), in address order, from the current
    /// thread (for the executable: the main thread before its first
    /// instruction). Only for observers that
    /// [`want objects`](Observer::wants_objects).
    pub fn emit_static_objects(&mut self, id: ObjectId) {
        let objects: Vec<(u64, u64)> = self
            .obs
            .objects
            .get(id)
            .symbols()
            .map(|s| {
                s.objects()
                    .iter()
                    .filter(|s| s.size > 0)
                    .map(|s| (s.addr, s.size))
                    .collect()
            })
            .unwrap_or_default();
        for (addr, size) in objects {
            self.obs.stats.program_events += 1;
            self.emit(
                0,
                EventKind::Program(ProgramEvent::Alloc {
                    addr,
                    size,
                    site: 0,
                    kind: ObjectKind::Static,
                }),
            );
        }
    }

    /// An identity's end, and the Thread op after which its architectural
    /// clock goes (the rule the detectors apply to theirs).
    #[inline]
    pub(super) fn note_endings(&mut self, e: &Event) {
        match e.kind {
            EventKind::Program(ProgramEvent::ThreadExit) => self.cpu.endings.ended(&e.origin),
            EventKind::Lard(EvOp::Thread { .. }) => {
                if let Some(gone) = self.cpu.endings.switched(&e.origin) {
                    self.cpu.vc.retire(gone);
                }
            }
            _ => {}
        }
    }

    /// Delivers a low-level synchronization event if the observer wants them.
    pub fn emit_sync(&mut self, pc: u64, s: LowLevelSync) {
        self.obs.stats.sync_events += 1;
        // Kernel threads' ends are object-level facts too (ownership is
        // inherited from a terminated owner).
        let thread_end = self.obs.report_objects && s == LowLevelSync::ThreadExit;
        if self.obs.report_sync || thread_end {
            self.emit(pc, EventKind::Sync(s));
        }
    }

    /// True when `addr` lies in some thread's stack mapping.
    #[inline]
    pub fn is_stack(&self, addr: u64) -> bool {
        self.obs.stacks.is_stack(addr)
    }

    /// True when no buffered access waits for delivery (every event must
    /// come after the accesses made before it).
    pub fn no_buffered_accesses(&self) -> bool {
        self.obs
            .access_buffer
            .as_ref()
            .is_none_or(AccessBuffer::is_empty)
    }

    /// Delivers the buffered accesses (unicorn patch 0008), oldest first, as
    /// `on_access` delivers an access of `--observe all` in LARD mode, and
    /// empties the buffer. Called first by every callback from translated
    /// code and after every `uc_emu_start`, so accesses and other events
    /// reach the observer in program order, all from the thread that made
    /// them (threads switch only between runs of `uc_emu_start`).
    #[inline]
    pub fn flush_accesses(&mut self) {
        if self.no_buffered_accesses() {
            return;
        }
        self.deliver_buffered();
    }

    #[inline(never)]
    pub(super) fn deliver_buffered(&mut self) {
        let Some(mut buf) = self.obs.access_buffer.take() else {
            return;
        };
        self.obs.repeats.forget_all();
        // Translated code wrote the access callback's info: the record's
        // bits but the stack flag (the layouts agree, asserted above; a
        // buffered decision's tag is 0 or TRACKED), which the batch adds
        // while the observer reads it.
        debug_assert!(buf.records_mut().iter().all(|r| r.bits
            & !(AccessRecord::SIZE | AccessRecord::WRITE | AccessRecord::TRACKED)
            == 0));
        let mut batch = AccessBatch::new(self.origin(), buf.records_mut(), &self.obs.stacks);
        // (The observer never stops on an access: install_hooks.)
        self.obs.observer.accesses(&mut batch);
        let counts = batch.counts();
        self.obs.stats.count_accesses(&counts);
        buf.clear();
        self.obs.access_buffer = Some(buf);
    }
}
