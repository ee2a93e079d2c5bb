//! Naming guest code for people: reports, errors, the debugger.

use super::Machine;
use crate::cpu::code::CodeMap;
use crate::observe::callstack;

impl Machine {
    /// `symbol+off: instruction` for a guest code address.
    /// `pc` may be a site (observe::callstack): its PC is described.
    pub fn describe_pc(&self, pc: u64) -> String {
        let m = self;
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
}
