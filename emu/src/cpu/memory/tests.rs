use super::*;
use crate::cpu::uc::Uc;

const A: u64 = 0x10_0000;

/// What `host_ptr` answers after each change of the regions equals a
/// look-up in the table, whichever region it remembered before the
/// change: the remembered region never outlives a map, unmap, protect
/// (with and without a split), split or merge.
#[test]
fn host_ptr_after_every_change_of_the_regions() {
    let rw = prot::READ | prot::WRITE;
    type Step = (&'static str, fn(&mut Memory));
    let steps: [Step; 6] = [
        ("map", |m| {
            m.map(A, 4 * PAGE, prot::READ | prot::WRITE, "t").unwrap()
        }),
        ("protect the second page read-only (split)", |m| {
            m.protect(A + PAGE, PAGE, prot::READ).unwrap()
        }),
        (
            "protect the first page to nothing (no split, no merge)",
            |m| m.protect(A, PAGE, 0).unwrap(),
        ),
        ("protect all back (merge)", |m| {
            m.protect(A, 4 * PAGE, prot::READ | prot::WRITE).unwrap()
        }),
        ("unmap the tail", |m| {
            m.unmap(A + 2 * PAGE, 2 * PAGE).unwrap()
        }),
        ("unmap all", |m| m.unmap(A, 2 * PAGE).unwrap()),
    ];
    let probes: [(u64, u64, u32); 6] = [
        (A, 8, prot::READ),
        (A + 8, 8, rw),
        (A + PAGE + 16, 8, prot::WRITE),
        (A + 2 * PAGE + 4, 4, prot::READ),
        (A + PAGE - 4, 8, rw),
        (A + 3 * PAGE, 8, prot::READ),
    ];
    for warm in probes {
        let uc = Uc::new_x86_64().expect("engine");
        let mut m = Memory::new(uc.r(), false);
        for (name, step) in steps {
            let (a, len, need) = warm;
            m.host_ptr(a, len, need);
            step(&mut m);
            for (a, len, need) in probes {
                let remembered = m.host_ptr(a, len, need).map(|p| p as usize);
                let looked_up = m.host_ptr_lookup(a, len, need).map(|p| p as usize);
                assert_eq!(remembered, looked_up, "{name}: {a:#x}+{len} need {need}");
                // (The look-up remembered this one: the same answer.)
                let again = m.host_ptr(a, len, need).map(|p| p as usize);
                assert_eq!(again, looked_up, "{name}: {a:#x}+{len} need {need}, again");
            }
        }
    }
}
