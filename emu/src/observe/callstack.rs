//! Call stacks of lard-cc programs in race reports (docs/lard-cc.md, "Call
//! stacks").
//!
//! The lard-cc runtime hash-conses every call stack it sees at
//! `__tsan_func_entry/exit` into a tree in its own memory
//! (`lardcc_stack_nodes`: node = return address into the caller + parent
//! node; node 0 is the empty stack) and hands the current node's id to the
//! CPU in `%ecx` at every Tracked access. The emulator keeps the id in the
//! upper bits of the access's PC — a *site* — so every detector stores it
//! beside the PC of the access it remembers, at no cost: x86-64 user
//! addresses have 47 bits. Ids become frames only when a report is printed.

use crate::binary::dwarf::lines::Frame;
use crate::machine::Machine;

/// Bits of a site that hold the PC.
pub const PC_BITS: u32 = 47;
/// Bits of a call-stack id (the runtime's `LARDCC_STACK_BITS`).
pub const ID_BITS: u32 = 17;
/// The id of a stack the runtime could not record (table full, too deep).
pub const UNKNOWN: u32 = (1 << ID_BITS) - 1;
/// The runtime's node table (guest-sdk/cc/stack.c).
pub const TABLE_SYMBOL: &str = "lardcc_stack_nodes";
/// Bytes per node: `u64 pc; u32 parent; u32 used`.
const NODE_SIZE: u64 = 16;
/// At most this many callers are printed (the runtime records 128).
const MAX_FRAMES: usize = 256;
/// The return address of the node that stands for calls the runtime did
/// not record (a thread deeper than its 128 frames; `LARDCC_STACK_GAP_PC`).
pub const GAP: u64 = 0;
/// How a report names that gap.
pub const GAP_TEXT: &str = "(calls not recorded: more than 128 frames deep)";

/// The site of an access at `pc` made under call stack `id`.
#[inline]
pub fn site(pc: u64, id: u32) -> u64 {
    (pc & ((1 << PC_BITS) - 1)) | (u64::from(id & UNKNOWN) << PC_BITS)
}

/// The PC of a site.
#[inline]
pub fn pc(site: u64) -> u64 {
    site & ((1 << PC_BITS) - 1)
}

/// The call-stack id of a site (0: none recorded).
#[inline]
pub fn id(site: u64) -> u32 {
    (site >> PC_BITS) as u32 & UNKNOWN
}

/// The callers of stack `id`, innermost first: each the return address
/// into the calling function, or [`GAP`] for calls not recorded. The outermost node (the call into the first
/// instrumented function from the C library's start code, a thread or task
/// trampoline of the runtime, or libgomp) is left out, as ThreadSanitizer
/// leaves out the frames below `main` and the thread function. The flag is
/// true when the stack was not (completely) recorded.
pub fn callers(m: &Machine, id: u32) -> (Vec<u64>, bool) {
    let mut out = Vec::new();
    let table = m.obs.call_stacks;
    let mut cur = id;
    while cur != 0 && table != 0 {
        if cur == UNKNOWN || out.len() > MAX_FRAMES {
            return (out, true);
        }
        let node = table + u64::from(cur) * NODE_SIZE;
        let (Some(ret), Some(parent)) = (m.cpu.mem.read_u64(node), m.cpu.mem.read_u32(node + 8))
        else {
            return (out, true);
        };
        if parent == 0 {
            break;
        }
        out.push(ret);
        cur = parent;
    }
    (out, false)
}

/// The frames of a site, innermost first, as inline chains: the access's,
/// then for each caller the chain of its call (the instruction before the
/// return address; a caller without line information is one frame named by
/// its symbol). The flag is true when outer frames were not recorded.
pub fn chains(m: &Machine, site: u64) -> (Vec<Vec<Frame>>, bool) {
    let mut out = vec![m.obs.objects.frames(pc(site))];
    let (callers, truncated) = callers(m, id(site));
    for ret in callers {
        if ret == GAP {
            out.push(vec![Frame {
                function: Some(GAP_TEXT.to_string()),
                file: None,
                line: None,
            }]);
            continue;
        }
        let call = ret.wrapping_sub(1);
        let f = m.obs.objects.frames(call);
        out.push(if f.is_empty() {
            vec![Frame {
                function: Some(
                    m.obs
                        .objects
                        .describe_pc(call)
                        .unwrap_or_else(|| format!("{call:#x}")),
                ),
                file: None,
                line: None,
            }]
        } else {
            f
        });
    }
    (out, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_keeps_pc_and_stack_apart() {
        let pc_ = 0x7fff_ffff_f123;
        for id_ in [0, 1, 4711, UNKNOWN] {
            let s = site(pc_, id_);
            assert_eq!(pc(s), pc_);
            assert_eq!(id(s), id_);
        }
        assert_eq!(site(0x401000, 0), 0x401000, "no stack: the site is the PC");
    }
}
