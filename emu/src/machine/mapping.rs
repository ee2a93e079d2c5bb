//! Code appearing and disappearing: the notifications every mechanism that acts on mapped code hangs off.

use super::call;
use super::Machine;
use crate::binary::objects::ObjectId;
use crate::cpu::code::Site;
use crate::cpu::uc::UcError;

impl Machine {
    /// Records the mapping containing `sp` as a stack.
    pub fn add_stack(&mut self, sp: u64) {
        if let Some((s, len)) = self.cpu.mem.region_of(sp.saturating_sub(1)) {
            self.obs.stacks.add(s, s + len);
        }
    }

    /// Registers instruction calls for newly found LARD sites.
    pub fn hook_sites(&mut self, sites: &[(u64, std::rc::Rc<Site>)]) -> Result<(), UcError> {
        for (pc, site) in sites {
            let wanted = match &**site {
                Site::Op(_) | Site::Fault(_) => true,
                Site::Tracked(i) => {
                    // Trigger PCs of adversarial memory get their settle
                    // hook now; other Tracked sites when they first matter.
                    if self
                        .obs
                        .adversary
                        .as_ref()
                        .is_some_and(|a| a.memory.triggers().pcs().binary_search(pc).is_ok())
                    {
                        self.hook_settle(*pc, pc + i.insn.len() as u64)?;
                    }
                    // Without adversarial memory, Tracked accesses are
                    // delivered by translated code ([`Machine::observes`]).
                    self.obs.adversary.is_some()
                }
                Site::Atomic(_) => self.obs.report_sync || self.obs.binary.is_some(),
            };
            if wanted {
                self.call_at(*pc, call::SITE);
            }
        }
        Ok(())
    }

    /// Registers instruction calls on the entries of intercepted functions
    /// (`pcs`, from `self.intercepts`).
    pub fn hook_intercepts(&mut self, pcs: &[u64]) -> Result<(), UcError> {
        for &pc in pcs {
            self.call_at(pc, call::INTERCEPT);
        }
        Ok(())
    }

    /// The notification point for an ELF object's code: `[start, start+len)`
    /// of object `id` was just mapped executable (by the loader, by ld.so's
    /// `mmap`, or by `mprotect`). Every mechanism that acts on an object's
    /// code when it appears runs from here: the LARD-site scan (from the
    /// object's function starts), the hooks on the object's intercepted
    /// functions (found by symbol) and, for observers that want objects,
    /// its static objects (when its code first appears).
    pub fn object_mapped(&mut self, id: ObjectId, start: u64, len: u64) -> Result<(), UcError> {
        let first = self.obs.objects.get(id).exec.is_empty();
        self.obs.objects.add_exec(id, start, len);
        if first && self.obs.report_objects {
            self.emit_static_objects(id);
        }
        let ranges = self.obs.objects.get(id).functions().to_vec();
        self.scan_code(start, len, &ranges)?;
        let mut new = match self.obs.objects.get(id).symbols() {
            Some(symbols) => self.obs.intercepts.add_from_symbols(symbols),
            None => Vec::new(),
        };
        if self.obs.binary.is_some() {
            new.extend(self.binary_object_mapped(id, start, len));
        }
        // The range's decisions (sites, program code, pruning) are made.
        self.cpu.uc.remove_cache(start, start + len);
        self.hook_intercepts(&new)
    }

    /// The notification point for memory going away: `[start, start+len)`
    /// is about to be unmapped (`munmap`, or an `mmap` with `MAP_FIXED`
    /// over it). Every mechanism that keeps facts about mapped code
    /// forgets them here: the LARD sites found in it, the objects'
    /// executable ranges and binary mode's atomic locations.
    pub fn unmapped(&mut self, start: u64, len: u64) {
        self.obs.code.forget(start, len);
        self.obs.objects.unmapped(start, len);
        if let Some(b) = self.obs.binary.as_deref_mut() {
            b.atomic_locations.forget(start, len);
        }
    }

    /// Executable memory `[start, start+len)` appeared (mmap, mprotect):
    /// [`Machine::object_mapped`] if it belongs to an object, else a plain
    /// scan for LARD sites (JIT code, anonymous executable memory).
    pub fn code_mapped(&mut self, start: u64, len: u64) -> Result<(), UcError> {
        match self.obs.objects.id_at(start) {
            Some(id) => self.object_mapped(id, start, len),
            None => {
                self.scan_code(start, len, &[])?;
                self.cpu.uc.remove_cache(start, start + len);
                Ok(())
            }
        }
    }

    /// Hooks `next`, the instruction after the Tracked site at `pc`, so that
    /// adversarial memory settles right after the site executes
    /// (emu/src/machine/adversarial.rs). Once per site.
    pub fn hook_settle(&mut self, pc: u64, next: u64) -> Result<(), UcError> {
        let Some(adv) = self.obs.adversary.as_deref_mut() else {
            return Ok(());
        };
        if adv.settle_hooked.insert(pc) {
            self.call_at(next, call::SITE);
        }
        Ok(())
    }

    /// Scans an executable range for LARD sites and hooks them.
    pub fn scan_code(
        &mut self,
        start: u64,
        len: u64,
        fn_ranges: &[(u64, u64)],
    ) -> Result<(), UcError> {
        let Some(bytes) = self.cpu.mem.slice(start, len).map(|b| b.to_vec()) else {
            return Ok(());
        };
        let found = self.obs.code.scan(&bytes, start, fn_ranges);
        self.hook_sites(&found)
    }
}
