//! The library functions binary mode intercepts, by symbol name: the
//! [`LIBRARY`] table, and the functions of an ELF file it names.

use crate::binary::elf::ElfFile;
use crate::intercept::libs::{LibCall, OMP_ATOMIC, OMP_CRITICAL, OMP_ORDERED};
use crate::intercept::ranges;

/// `STT_GNU_IFUNC`: the symbol is a resolver that returns the function's
/// address (glibc's `memcpy`, `strlen`, … pick an implementation for the CPU).
const STT_GNU_IFUNC: u8 = 10;

/// The address (unrelocated) of every function of `file` that [`LIBRARY`]
/// names, whatever symbol of its address is the table's (a static glibc
/// defines `pthread_mutex_lock`, `__pthread_mutex_lock` and
/// `___pthread_mutex_lock` at one address; the symbolizer keeps one name).
pub fn library_functions(file: &ElfFile) -> Vec<(u64, LibCall)> {
    let Ok(elf) = goblin::elf::Elf::parse(&file.bytes) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let tables = [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)];
    for (syms, strtab) in tables {
        for s in syms.iter() {
            let ifunc = s.st_type() == STT_GNU_IFUNC;
            if !(s.is_function() || ifunc) || s.st_value == 0 || s.st_shndx == 0 {
                continue;
            }
            let Some(name) = strtab.get_at(s.st_name) else {
                continue;
            };
            let known = LIBRARY
                .iter()
                .chain(ALLOCATORS)
                .find(|(n, _)| *n == name)
                .map(|&(_, c)| c)
                .or_else(|| rust_allocator(name));
            if let Some(call) = known {
                if !ifunc {
                    out.push((s.st_value, call));
                }
            } else if let Some(i) = ranges::index_of(name) {
                out.push((
                    s.st_value,
                    if ifunc {
                        LibCall::Resolver(i)
                    } else {
                        LibCall::Range(i)
                    },
                ));
            }
        }
    }
    out
}

/// The entries of allocators linked into an executable, intercepted as
/// glibc's malloc family is (docs/binary-mode.md, "Allocators in the
/// executable"): mimalloc's API (`mi_*`), jemalloc's with the prefix
/// Rust's `tikv-jemallocator` builds it with (`_rjem_*`) or its own
/// (`je_*`), including the `*allocx` extensions.
pub const ALLOCATORS: &[(&str, LibCall)] = &[
    ("mi_malloc", LibCall::Malloc),
    ("mi_zalloc", LibCall::Malloc),
    ("mi_malloc_aligned", LibCall::Malloc),
    ("mi_zalloc_aligned", LibCall::Malloc),
    ("mi_malloc_aligned_at", LibCall::Malloc),
    ("mi_zalloc_aligned_at", LibCall::Malloc),
    ("mi_new", LibCall::Malloc),
    ("mi_new_aligned", LibCall::Malloc),
    ("mi_new_nothrow", LibCall::Malloc),
    ("mi_new_aligned_nothrow", LibCall::Malloc),
    ("mi_calloc", LibCall::Calloc),
    ("mi_mallocn", LibCall::Calloc),
    ("mi_calloc_aligned", LibCall::Calloc),
    ("mi_calloc_aligned_at", LibCall::Calloc),
    ("mi_realloc", LibCall::Realloc),
    ("mi_rezalloc", LibCall::Realloc),
    ("mi_realloc_aligned", LibCall::Realloc),
    ("mi_rezalloc_aligned", LibCall::Realloc),
    ("mi_realloc_aligned_at", LibCall::Realloc),
    ("mi_rezalloc_aligned_at", LibCall::Realloc),
    ("mi_free", LibCall::Free),
    ("mi_free_size", LibCall::Free),
    ("mi_free_aligned", LibCall::Free),
    ("mi_free_size_aligned", LibCall::Free),
    ("_rjem_malloc", LibCall::Malloc),
    ("_rjem_mallocx", LibCall::Malloc),
    ("_rjem_valloc", LibCall::Malloc),
    ("_rjem_calloc", LibCall::Calloc),
    ("_rjem_realloc", LibCall::Realloc),
    ("_rjem_rallocx", LibCall::Realloc),
    ("_rjem_aligned_alloc", LibCall::AlignedAlloc),
    ("_rjem_memalign", LibCall::AlignedAlloc),
    ("_rjem_posix_memalign", LibCall::PosixMemalign),
    ("_rjem_free", LibCall::Free),
    ("_rjem_dallocx", LibCall::Free),
    ("_rjem_sdallocx", LibCall::Free),
    ("je_malloc", LibCall::Malloc),
    ("je_mallocx", LibCall::Malloc),
    ("je_valloc", LibCall::Malloc),
    ("je_calloc", LibCall::Calloc),
    ("je_realloc", LibCall::Realloc),
    ("je_rallocx", LibCall::Realloc),
    ("je_aligned_alloc", LibCall::AlignedAlloc),
    ("je_memalign", LibCall::AlignedAlloc),
    ("je_posix_memalign", LibCall::PosixMemalign),
    ("je_free", LibCall::Free),
    ("je_dallocx", LibCall::Free),
    ("je_sdallocx", LibCall::Free),
];

/// Rust's global-allocator entries: the shims every allocation of Rust
/// code calls (`__rust_alloc(size, align)`, `__rust_alloc_zeroed`,
/// `__rust_dealloc(p, size, align)`, `__rust_realloc(p, old_size, align,
/// new_size)`) and the two implementations behind them, std's default
/// (`__rdl_*`, over malloc) and a `#[global_allocator]` (`__rg_*`).
const RUST_ALLOCATOR: &[(&str, LibCall)] = &[
    ("__rust_alloc", LibCall::Malloc),
    ("__rust_alloc_zeroed", LibCall::Malloc),
    ("__rust_dealloc", LibCall::Free),
    ("__rust_realloc", LibCall::RustRealloc),
    ("__rdl_alloc", LibCall::Malloc),
    ("__rdl_alloc_zeroed", LibCall::Malloc),
    ("__rdl_dealloc", LibCall::Free),
    ("__rdl_realloc", LibCall::RustRealloc),
    ("__rg_alloc", LibCall::Malloc),
    ("__rg_alloc_zeroed", LibCall::Malloc),
    ("__rg_dealloc", LibCall::Free),
    ("__rg_realloc", LibCall::RustRealloc),
];

/// The allocator entry a Rust symbol names: unmangled (older rustc), or
/// v0-mangled in the `__rustc` crate (`__rustc::__rust_alloc`).
pub fn rust_allocator(name: &str) -> Option<LibCall> {
    let find = |n: &str| {
        RUST_ALLOCATOR
            .iter()
            .find(|(r, _)| *r == n)
            .map(|&(_, c)| c)
    };
    if !name.starts_with("_R") {
        return name.starts_with("__r").then(|| find(name)).flatten();
    }
    if !name.contains("___rustc") {
        return None;
    }
    let d = format!("{:#}", rustc_demangle::try_demangle(name).ok()?);
    find(d.strip_prefix("__rustc::")?)
}

/// Intercepted functions by symbol name (glibc's public names and the
/// internal aliases a static glibc defines at the same address; the Itanium
/// C++ ABI's mangled `operator new`/`delete`).
pub const LIBRARY: &[(&str, LibCall)] = &[
    ("pthread_create", LibCall::ThreadCreate),
    ("pthread_join", LibCall::ThreadJoin),
    ("pthread_tryjoin_np", LibCall::ThreadJoin),
    ("pthread_timedjoin_np", LibCall::ThreadJoin),
    ("pthread_clockjoin_np", LibCall::ThreadJoin),
    ("pthread_mutex_lock", LibCall::Lock),
    ("pthread_mutex_trylock", LibCall::Lock),
    ("pthread_mutex_timedlock", LibCall::Lock),
    ("pthread_mutex_clocklock", LibCall::Lock),
    ("pthread_mutex_unlock", LibCall::Unlock),
    ("pthread_spin_lock", LibCall::Lock),
    ("pthread_spin_trylock", LibCall::Lock),
    ("pthread_spin_unlock", LibCall::Unlock),
    ("pthread_rwlock_rdlock", LibCall::RdLock),
    ("pthread_rwlock_tryrdlock", LibCall::RdLock),
    ("pthread_rwlock_timedrdlock", LibCall::RdLock),
    ("pthread_rwlock_clockrdlock", LibCall::RdLock),
    ("pthread_rwlock_wrlock", LibCall::WrLock),
    ("pthread_rwlock_trywrlock", LibCall::WrLock),
    ("pthread_rwlock_timedwrlock", LibCall::WrLock),
    ("pthread_rwlock_clockwrlock", LibCall::WrLock),
    ("pthread_rwlock_unlock", LibCall::RwUnlock),
    ("pthread_cond_wait", LibCall::CondWait),
    ("pthread_cond_timedwait", LibCall::CondWait),
    ("pthread_cond_clockwait", LibCall::CondWait),
    ("pthread_cond_signal", LibCall::CondSignal),
    ("pthread_cond_broadcast", LibCall::CondSignal),
    ("pthread_barrier_init", LibCall::BarrierInit),
    ("pthread_mutex_init", LibCall::SyncInit),
    ("pthread_rwlock_init", LibCall::SyncInit),
    ("pthread_spin_init", LibCall::SyncInit),
    ("pthread_cond_init", LibCall::SyncInit),
    ("sem_init", LibCall::SyncInit),
    ("pthread_barrier_wait", LibCall::BarrierWait),
    ("sem_post", LibCall::SemPost),
    ("sem_wait", LibCall::SemWait),
    ("sem_trywait", LibCall::SemWait),
    ("sem_timedwait", LibCall::SemWait),
    ("sem_clockwait", LibCall::SemWait),
    ("pthread_once", LibCall::Once),
    ("malloc", LibCall::Malloc),
    ("valloc", LibCall::Malloc),
    ("pvalloc", LibCall::Malloc),
    ("calloc", LibCall::Calloc),
    ("realloc", LibCall::Realloc),
    ("aligned_alloc", LibCall::AlignedAlloc),
    ("memalign", LibCall::AlignedAlloc),
    ("posix_memalign", LibCall::PosixMemalign),
    ("free", LibCall::Free),
    ("_Znwm", LibCall::Malloc),
    ("_Znam", LibCall::Malloc),
    ("_ZnwmRKSt9nothrow_t", LibCall::Malloc),
    ("_ZnamRKSt9nothrow_t", LibCall::Malloc),
    ("_ZnwmSt11align_val_t", LibCall::Malloc),
    ("_ZnamSt11align_val_t", LibCall::Malloc),
    ("_ZdlPv", LibCall::Free),
    ("_ZdlPvSt11align_val_t", LibCall::Free),
    ("_ZdaPvSt11align_val_t", LibCall::Free),
    ("GOMP_parallel", LibCall::OmpParallel),
    ("GOMP_parallel_loop_static", LibCall::OmpParallel),
    ("GOMP_parallel_loop_dynamic", LibCall::OmpParallel),
    ("GOMP_parallel_loop_guided", LibCall::OmpParallel),
    ("GOMP_parallel_loop_runtime", LibCall::OmpParallel),
    (
        "GOMP_parallel_loop_nonmonotonic_dynamic",
        LibCall::OmpParallel,
    ),
    (
        "GOMP_parallel_loop_nonmonotonic_guided",
        LibCall::OmpParallel,
    ),
    (
        "GOMP_parallel_loop_nonmonotonic_runtime",
        LibCall::OmpParallel,
    ),
    (
        "GOMP_parallel_loop_maybe_nonmonotonic_runtime",
        LibCall::OmpParallel,
    ),
    ("GOMP_parallel_sections", LibCall::OmpParallel),
    ("GOMP_teams_reg", LibCall::OmpTeams),
    ("GOMP_teams4", LibCall::OmpTeams4),
    ("GOMP_target_ext", LibCall::OmpTarget),
    ("GOMP_task", LibCall::OmpTask),
    ("GOMP_taskloop", LibCall::OmpTaskLoop),
    ("GOMP_taskloop_ull", LibCall::OmpTaskLoop),
    ("GOMP_taskgroup_start", LibCall::OmpTaskGroupStart),
    ("GOMP_taskwait", LibCall::OmpTaskWait),
    ("GOMP_taskwait_depend", LibCall::OmpTaskWait),
    ("GOMP_taskgroup_end", LibCall::OmpTaskGroupEnd),
    ("GOMP_barrier", LibCall::OmpBarrier),
    ("GOMP_barrier_cancel", LibCall::OmpBarrier),
    ("GOMP_loop_end", LibCall::OmpBarrier),
    ("GOMP_loop_end_cancel", LibCall::OmpBarrier),
    ("GOMP_sections_end", LibCall::OmpBarrier),
    ("GOMP_sections_end_cancel", LibCall::OmpBarrier),
    ("GOMP_sections_start", LibCall::OmpSections),
    ("GOMP_sections2_start", LibCall::OmpSections),
    ("GOMP_sections_next", LibCall::OmpSections),
    ("GOMP_sections_end_nowait", LibCall::OmpWorkEnd),
    ("GOMP_loop_end_nowait", LibCall::OmpWorkEnd),
    (
        "GOMP_loop_static_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_static_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_dynamic_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_dynamic_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_guided_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_guided_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_nonmonotonic_dynamic_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_nonmonotonic_dynamic_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_nonmonotonic_guided_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_nonmonotonic_guided_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_static_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_static_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_dynamic_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_dynamic_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_guided_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_guided_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: true,
        },
    ),
    (
        "GOMP_loop_runtime_start",
        LibCall::OmpLoop {
            istart: 3,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_runtime_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: true,
        },
    ),
    (
        "GOMP_loop_nonmonotonic_runtime_start",
        LibCall::OmpLoop {
            istart: 3,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_nonmonotonic_runtime_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: true,
        },
    ),
    (
        "GOMP_loop_maybe_nonmonotonic_runtime_start",
        LibCall::OmpLoop {
            istart: 3,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_maybe_nonmonotonic_runtime_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_runtime_start",
        LibCall::OmpLoop {
            istart: 3,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_runtime_start",
        LibCall::OmpLoop {
            istart: 4,
            ull: true,
        },
    ),
    (
        "GOMP_loop_static_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_static_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_dynamic_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_dynamic_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_guided_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_guided_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_nonmonotonic_dynamic_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_nonmonotonic_dynamic_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_nonmonotonic_guided_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_nonmonotonic_guided_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_nonmonotonic_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_nonmonotonic_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_maybe_nonmonotonic_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_maybe_nonmonotonic_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_static_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_static_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_dynamic_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_dynamic_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_guided_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_guided_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ordered_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_ordered_runtime_next",
        LibCall::OmpLoop {
            istart: 0,
            ull: true,
        },
    ),
    (
        "GOMP_loop_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ordered_start",
        LibCall::OmpLoop {
            istart: 5,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_start",
        LibCall::OmpLoop {
            istart: 6,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ull_ordered_start",
        LibCall::OmpLoop {
            istart: 6,
            ull: true,
        },
    ),
    (
        "GOMP_loop_doacross_static_start",
        LibCall::OmpDoacrossLoop {
            istart: 3,
            ull: false,
        },
    ),
    (
        "GOMP_loop_doacross_dynamic_start",
        LibCall::OmpDoacrossLoop {
            istart: 3,
            ull: false,
        },
    ),
    (
        "GOMP_loop_doacross_guided_start",
        LibCall::OmpDoacrossLoop {
            istart: 3,
            ull: false,
        },
    ),
    (
        "GOMP_loop_doacross_runtime_start",
        LibCall::OmpDoacrossLoop {
            istart: 2,
            ull: false,
        },
    ),
    (
        "GOMP_loop_doacross_start",
        LibCall::OmpDoacrossLoop {
            istart: 4,
            ull: false,
        },
    ),
    (
        "GOMP_loop_ull_doacross_static_start",
        LibCall::OmpDoacrossLoop {
            istart: 3,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ull_doacross_dynamic_start",
        LibCall::OmpDoacrossLoop {
            istart: 3,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ull_doacross_guided_start",
        LibCall::OmpDoacrossLoop {
            istart: 3,
            ull: true,
        },
    ),
    (
        "GOMP_loop_ull_doacross_runtime_start",
        LibCall::OmpDoacrossLoop {
            istart: 2,
            ull: true,
        },
    ),
    ("GOMP_doacross_post", LibCall::OmpDoacrossPost),
    ("GOMP_doacross_ull_post", LibCall::OmpDoacrossPost),
    ("GOMP_doacross_wait", LibCall::OmpDoacrossWait),
    ("GOMP_doacross_ull_wait", LibCall::OmpDoacrossWait),
    ("GOMP_critical_start", LibCall::OmpEnter(OMP_CRITICAL)),
    ("GOMP_critical_end", LibCall::OmpExit(OMP_CRITICAL)),
    ("GOMP_atomic_start", LibCall::OmpEnter(OMP_ATOMIC)),
    ("GOMP_atomic_end", LibCall::OmpExit(OMP_ATOMIC)),
    ("GOMP_ordered_start", LibCall::OmpEnter(OMP_ORDERED)),
    ("GOMP_ordered_end", LibCall::OmpExit(OMP_ORDERED)),
    ("GOMP_critical_name_start", LibCall::OmpNamedEnter),
    ("GOMP_critical_name_end", LibCall::OmpNamedExit),
    ("GOMP_single_copy_start", LibCall::OmpCopyStart),
    ("GOMP_single_copy_end", LibCall::OmpCopyEnd),
    ("omp_set_lock", LibCall::OmpLock),
    ("omp_set_nest_lock", LibCall::OmpLock),
    ("omp_unset_lock", LibCall::OmpUnlock),
    ("omp_unset_nest_lock", LibCall::OmpUnlock),
    ("omp_test_lock", LibCall::OmpTestLock),
    ("omp_test_nest_lock", LibCall::OmpTestLock),
    ("omp_get_thread_num", LibCall::OmpThreadNum),
    ("_ZdlPvmSt11align_val_t", LibCall::Free),
    ("_ZdaPv", LibCall::Free),
    ("_ZdlPvm", LibCall::Free),
    ("_ZdaPvm", LibCall::Free),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_allocator_entries_by_name() {
        let v0 = "_RNvCsfLfy6EI15iL_7___rustc14___rust_realloc";
        assert_eq!(rust_allocator(v0), Some(LibCall::RustRealloc));
        let v0 = "_RNvCsfLfy6EI15iL_7___rustc12___rust_alloc";
        assert_eq!(rust_allocator(v0), Some(LibCall::Malloc));
        assert_eq!(rust_allocator("__rust_dealloc"), Some(LibCall::Free));
        assert_eq!(rust_allocator("__rg_alloc_zeroed"), Some(LibCall::Malloc));
        // The error handler and other crates' functions are no entries.
        let v0 = "_RNvCsfLfy6EI15iL_7___rustc26___rust_alloc_error_handler";
        assert_eq!(rust_allocator(v0), None);
        assert_eq!(rust_allocator("_RNvCs1234_5mycrate12___rust_alloc"), None);
        assert_eq!(rust_allocator("malloc"), None);
    }
}
