//! OpenMP `sections` in binary mode: each section is a language thread of
//! its own, the rule of the lard-cc runtime (`guest-sdk/cc/gomp.c`,
//! "sections"; docs/lard-cc.md's OpenMP table).
//!
//! libgomp hands a section to a thread as the non-zero return of
//! `GOMP_sections_start`/`GOMP_sections_next`; the thread runs it, then
//! asks for the next one (or ends the construct). So a section starts at
//! that return, forked from the implicit task that runs it, and ends at the
//! thread's next sections call or barrier: its clock joins the clock every
//! barrier acquires ([`SyncKey::Tasks`]), and the thread continues as the
//! implicit task, unordered after the section (with `nowait` another thread
//! could have run it). The sections one implicit task runs share its
//! private copies (the frames below the outlined region body's): their
//! histories are cleared when a section ends, so they never race with each
//! other or with the implicit task's reduction after the last section.

use super::page_chunks;
use crate::cpu::machine::Machine;
use crate::cpu::uc::Reg;
use crate::intercept::hb::{fork, SyncKey};
use crate::intercept::libs::LibCall;
use lard_detector_hw::event::{EventKind, LardOp as EvOp, ThreadKey};

impl Machine {
    /// The stack pointer at the entry of the innermost outlined parallel
    /// region body running on the current kernel thread.
    fn region_sp(&mut self) -> Option<u64> {
        let cur = self.cur;
        self.rt()
            .thread(cur)
            .pending
            .iter()
            .rev()
            .find(|p| p.call == LibCall::OmpRegion)
            .map(|p| p.sp)
    }

    /// A sections call or barrier at `pc` (entry): the section the current
    /// kernel thread runs, if any, ends.
    pub(super) fn section_end(&mut self, pc: u64) {
        let cur = self.cur;
        let Some((implicit, section)) = self.rt().thread(cur).section.take() else {
            return;
        };
        self.release(SyncKey::Tasks, pc);
        if let Some(top) = self.region_sp() {
            let sp = self.uc.reg(Reg::RSP);
            let low = std::mem::replace(&mut self.rt().thread(cur).stack_low, 0);
            let low = if low != 0 && low < sp { low } else { sp };
            if low < top {
                for (a, len) in page_chunks(low, top - low) {
                    self.emit(pc, EventKind::Lard(EvOp::ClearHistory { addr: a, len }));
                }
            }
        }
        self.switch_lang(implicit, pc);
        self.vc.forget(ThreadKey::Lang(section));
    }

    /// `GOMP_sections_start`/`_next` returned `n` at `pc`: section `n`
    /// (none if 0) starts on the current kernel thread, inside a parallel
    /// region (a construct outside any region runs as its encountering
    /// task, as in the lard-cc runtime).
    pub(super) fn section_begin(&mut self, n: u32, pc: u64) {
        if n == 0 || self.region_sp().is_none() {
            return;
        }
        let implicit = self.lang();
        let rt = self.rt();
        let id = rt.next_lang;
        rt.next_lang += 1;
        let (mut p, mut c) = (Vec::new(), Vec::new());
        fork(&mut self.vc, implicit, id, &mut p, &mut c);
        for (tid, value) in p {
            self.emit(pc, EventKind::Lard(EvOp::WriteVc { tid, value }));
        }
        self.switch_lang(id, pc);
        for (tid, value) in c {
            self.emit(pc, EventKind::Lard(EvOp::WriteVc { tid, value }));
        }
        let cur = self.cur;
        self.rt().thread(cur).section = Some((implicit, id));
    }
}
