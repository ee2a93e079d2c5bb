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

/// `find_free` as a plain top-down walk of every mapping below the mmap
/// top: what the search must answer.
fn find_free_walk(m: &Memory, len: u64) -> Option<u64> {
    let mut hi = MMAP_TOP;
    for (&start, r) in m.regions.range(..MMAP_TOP).rev() {
        let end = start + r.len;
        if end <= hi && hi - end >= len {
            return Some(hi - len);
        }
        hi = hi.min(start);
        if hi < MMAP_BOTTOM + len {
            return None;
        }
    }
    (hi >= MMAP_BOTTOM + len).then(|| hi - len)
}

/// Under random mmaps (where `find_free` says, or fixed near the top),
/// munmaps of parts of mappings and mprotects that split and merge them,
/// `find_free` answers as the plain walk, for every length asked.
#[test]
fn find_free_answers_as_a_walk_of_every_mapping() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let uc = Uc::new_x86_64().expect("engine");
    let mut m = Memory::new(uc.r(), false);
    let rw = prot::READ | prot::WRITE;
    for step in 0..3000 {
        let len = (1 + next(6)) * PAGE;
        match next(10) {
            0..=4 => {
                if let Some(a) = m.find_free(len) {
                    m.map(a, len, rw, "t").unwrap();
                }
            }
            5 => {
                let a = MMAP_TOP - (1 + next(400)) * PAGE;
                if m.is_free(a, len) {
                    m.map(a, len, rw, "fixed").unwrap();
                }
            }
            6 | 7 => {
                let a = MMAP_TOP - (1 + next(400)) * PAGE;
                m.unmap(a, len).unwrap();
            }
            _ => {
                let a = MMAP_TOP - (1 + next(400)) * PAGE;
                if m.is_mapped(a, PAGE) {
                    let perms = [prot::READ, rw, 0][next(3) as usize];
                    m.protect(a, PAGE, perms).unwrap();
                }
            }
        }
        for pages in 1..=8 {
            assert_eq!(
                m.find_free(pages * PAGE),
                find_free_walk(&m, pages * PAGE),
                "step {step}, {pages} pages"
            );
        }
    }
}
