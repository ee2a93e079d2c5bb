//! `lard run` on real programs: glibc, musl and Rust std builds, threads,
//! faults, deadlock, determinism, and parity with the native run.

use lard_e2e::*;

const PLAIN: &[(&str, &[&str])] = &[
    ("plain/hello.c", &[]),
    ("plain/args_env.c", &["one", "two words", "--flag"]),
    ("plain/mutex_counter.c", &[]),
    ("plain/condvar_pc.c", &[]),
    ("plain/exit_code.c", &["7"]),
    ("plain/exit_code.c", &["42", "thread"]),
    ("plain/unknown_syscall.c", &[]),
    ("plain/signal_handlers.c", &[]),
    ("plain/sigwait.c", &[]),
    ("plain/madvise_discard.c", &[]),
    ("plain/mprotect_steps.c", &[]),
    ("plain/sse_lanes.c", &[]),
    ("plain/fp_control.c", &[]),
    ("plain/sockets.c", &[]),
    ("plain/socket_traffic.c", &[]),
    ("plain/pipe_big_write.c", &[]),
    ("plain/socket_big_write.c", &[]),
    ("plain/path_across_mappings.c", &[]),
    ("plain/mincore.c", &[]),
];

#[test]
fn glibc_and_musl_programs_match_their_native_runs() {
    for libc in Libc::ALL {
        for (src, args) in PLAIN {
            let guest = build_c(src, libc);
            assert_parity(&guest, args);
        }
    }
}

#[test]
fn sse_floating_point_gives_the_native_bits_and_flags() {
    // Every SSE floating-point instruction lard runs on the host (patch
    // 0023) on special and random operands under the 16 MXCSR settings, the
    // result bits and MXCSR after each one hashed per instruction and
    // setting, then sticky flags across a yield, through fxsave and after
    // ldmxcsr: the output must be the native one, line for line.
    let mut guests: Vec<_> = Libc::ALL
        .into_iter()
        .map(|libc| build_c("fp/sse_float.c", libc))
        .collect();
    guests.push(build_c_dynamic("fp/sse_float.c", "sse_float", &[]));
    for guest in guests {
        let out = assert_parity(&guest, &[]);
        // 16 MXCSR settings x 118 instructions and forms, and 3 lines of flags.
        assert_eq!(
            stdout(&out).lines().count(),
            16 * 118 + 3,
            "{}",
            guest.display()
        );
        assert!(
            stdout(&out).contains("fxsave mxcsr 00001fb4, stmxcsr 00001fb4"),
            "{}: {}",
            guest.display(),
            stdout(&out)
        );
    }
}

#[test]
fn sse_chains_in_one_block_give_the_native_bits_and_flags() {
    // Dependent SSE instructions, copies between registers, partial loads,
    // helper-translated instructions and a store to an RWX page in
    // straight-line code (patch 0025 keeps guest XMM registers in host
    // registers within a block), under four MXCSR settings: the output must
    // be the native one, line for line.
    let mut guests: Vec<_> = Libc::ALL
        .into_iter()
        .map(|libc| build_c("fp/sse_chains.c", libc))
        .collect();
    guests.push(build_c_dynamic("fp/sse_chains.c", "sse_chains", &[]));
    for guest in guests {
        let out = assert_parity(&guest, &[]);
        // 4 sequences x 4 MXCSR settings.
        assert_eq!(stdout(&out).lines().count(), 16, "{}", guest.display());
    }
}

#[test]
fn unmasked_sse_exceptions_and_integer_division_by_zero_raise_sigfpe() {
    // A handler sees SIGFPE with the si_code the kernel gives (FPE_FLTDIV,
    // FPE_FLTINV, FPE_FLTOVF, FPE_FLTRES, FPE_INTDIV) and the destination
    // unwritten; without one the process dies of SIGFPE, as natively.
    let mut guests: Vec<_> = Libc::ALL
        .into_iter()
        .map(|libc| build_c("fp/sse_trap.c", libc))
        .collect();
    guests.push(build_c_dynamic("fp/sse_trap.c", "sse_trap", &[]));
    for guest in guests {
        let out = assert_parity(&guest, &[]);
        assert_eq!(shell_status(&out), 128 + libc::SIGFPE, "{}", stderr(&out));
        for line in [
            "1/0 ZE unmasked: SIGFPE si_code 3, destination 0x1p+0",
            "sqrt(-1) IE unmasked: SIGFPE si_code 7",
            "7/0: SIGFPE si_code 1",
        ] {
            assert!(
                stdout(&out).contains(line),
                "{}: {}",
                guest.display(),
                stdout(&out)
            );
        }
    }
}

#[test]
fn x87_floating_point_gives_the_native_bits_and_flags() {
    // Every x87 instruction lard runs on the host (patch 0030), in its
    // register, memory and popping forms, on special and random operands
    // under the 4 rounding modes x 3 precision controls, the result bits and
    // status word after each one hashed per instruction and control word;
    // then sticky flags across a yield, through fnsave and fxsave; two
    // threads computing under different control words at once; then long
    // double libm functions on random inputs: the output must be the native
    // one, line for line.
    let mut guests: Vec<_> = Libc::ALL
        .into_iter()
        .map(|libc| build_c("fp/x87_float.c", libc))
        .collect();
    guests.push(build_c_dynamic("fp/x87_float.c", "x87_float", &["-lm"]));
    for guest in guests {
        let out = assert_parity(&guest, &[]);
        // 12 control words x 102 instructions and forms, 3 lines of flags,
        // 2 threads, 24 lines of libm results.
        assert_eq!(
            stdout(&out).lines().count(),
            12 * 102 + 3 + 2 + 24,
            "{}",
            guest.display()
        );
        assert!(
            stdout(&out).contains("fnsave fsw 0134, fxsave fsw 0134, fnstsw 0134"),
            "{}: {}",
            guest.display(),
            stdout(&out)
        );
    }
}

#[test]
fn unmasked_x87_exceptions_raise_sigfpe_at_the_next_waiting_instruction() {
    // An unmasked x87 exception only sets the flag, ES and B; the next
    // waiting x87 instruction (or fwait) raises SIGFPE with the kernel's
    // si_code, and the handler starts with a fresh x87; non-waiting
    // instructions between take nothing, fnsave shows the processor's
    // wrapped result of an unmasked overflow, and a store with an unmasked
    // exception neither stores nor pops. Without a handler the process dies
    // of SIGFPE, as natively.
    let mut guests: Vec<_> = Libc::ALL
        .into_iter()
        .map(|libc| build_c("fp/x87_trap.c", libc))
        .collect();
    guests.push(build_c_dynamic("fp/x87_trap.c", "x87_trap", &[]));
    for guest in guests {
        let out = assert_parity(&guest, &[]);
        assert_eq!(shell_status(&out), 128 + libc::SIGFPE, "{}", stderr(&out));
        for line in [
            "div_unmasked: SIGFPE si_code 3 at the next x87 instruction, fsw before b084, \
             handler fcw 037f fsw 0000",
            "sqrt_unmasked: SIGFPE si_code 7 at the next x87 instruction",
            "overflow_unmasked: SIGFPE si_code 4 at the next x87 instruction",
            "div_then_fnclex: no signal",
            "overflow_fnsave: signal 0, fnsave fsw b8a8 st0 5ffefffffffffffffffe",
            "fstps_overflow_unmasked: memory 1122334455667788, fnsave fsw b888",
        ] {
            assert!(
                stdout(&out).contains(line),
                "{}: {}",
                guest.display(),
                stdout(&out)
            );
        }
    }
}

#[test]
fn code_written_at_run_time_runs_as_natively() {
    // W^X JIT cycles, EXEC added to pages written as data, code and data on
    // one RWX page, an instruction rewriting the next one: translated code
    // must never outlive the bytes it came from (docs/unicorn-patches.md).
    for libc in Libc::ALL {
        let out = assert_parity(&build_c("plain/jit_code.c", libc), &[]);
        assert!(
            stdout(&out).contains("instruction rewriting the next one ok"),
            "{libc:?}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn accesses_the_program_may_not_make_fault_as_natively() {
    // Stores to read-only pages (plain, 16-byte, string), loads of
    // PROT_NONE and unmapped pages and through a null pointer, a load
    // crossing into an inaccessible page, and the accesses mprotect allows
    // again: each faults (or not) where it does natively, whether guest
    // memory is addressed directly (host protections follow the guest's)
    // or through the softmmu TLB.
    for libc in Libc::ALL {
        let guest = build_c("plain/fault_kinds.c", libc);
        let n = native(&guest, &[]);
        assert!(stdout(&n).contains("SIGSEGV at page+0"), "{}", stdout(&n));
        for flags in [&[][..], &["--no-direct-memory"][..]] {
            let l = lard_run(flags, &guest, &[]);
            assert_eq!(stdout(&l), stdout(&n), "{libc:?} {flags:?}: {}", stderr(&l));
            assert_eq!(shell_status(&l), 0, "{libc:?} {flags:?}: {}", stderr(&l));
        }
    }
}

#[test]
fn many_mappings_fault_at_each_page_boundary_as_natively() {
    // 600 pages cut into mappings of every kind (unmapped, PROT_NONE,
    // read-only, read-write, read-execute), probed at every page by a
    // load, a store, a load across the boundary below and a call, then
    // rotated to other kinds and probed again: each probe faults (with
    // its si_code and address) or runs where it does natively, through
    // the direct window and through the softmmu TLB alike.
    let mut guests: Vec<_> = Libc::ALL
        .into_iter()
        .map(|libc| build_c("plain/many_mappings.c", libc))
        .collect();
    guests.push(build_c_dynamic(
        "plain/many_mappings.c",
        "many_mappings",
        &[],
    ));
    for guest in guests {
        let n = native(&guest, &[]);
        assert!(stdout(&n).contains("checksum"), "{}", stdout(&n));
        for flags in [&[][..], &["--no-direct-memory"][..]] {
            let l = lard_run(flags, &guest, &[]);
            assert_eq!(
                stdout(&l),
                stdout(&n),
                "{guest:?} {flags:?}: {}",
                stderr(&l)
            );
            assert_eq!(shell_status(&l), 0, "{guest:?} {flags:?}: {}", stderr(&l));
        }
    }
}

#[test]
fn the_vsyscall_page_answers_as_the_system_calls_do() {
    // Its answers are checked by the guest itself against the system calls
    // (the native kernel may have no vsyscall page at all).
    for libc in Libc::ALL {
        let out = lard_run(
            &["--detector", "none"],
            &build_c("plain/vsyscall.c", libc),
            &[],
        );
        assert_eq!(stdout(&out), "vsyscall ok\n", "{libc:?}: {}", stderr(&out));
        assert_eq!(shell_status(&out), 0);
    }
}

#[test]
fn instruction_counts_are_exact_across_quanta() {
    // count_loop retires 1 + 2 x 3,000,000 + 3 instructions by construction;
    // the count kept inside translated code must match it exactly, whatever
    // the quantum (each quantum boundary is a place to over- or under-count).
    let guest = build_asm("asm/count_loop.S");
    for quantum in ["1000", "7", "2"] {
        let l = lard_run(
            &["--detector", "none", "--stats", "--quantum", quantum],
            &guest,
            &[],
        );
        assert_eq!(shell_status(&l), 0, "{}", stderr(&l));
        let err = stderr(&l);
        let insns = stats_number(&err, "instructions retired");
        assert_eq!(insns, 6_000_004, "--quantum {quantum}");
    }
}

#[test]
fn every_access_is_observed_once_as_the_program_makes_it() {
    // access_counts makes 8,000 reads and 6,000 writes by construction,
    // a quarter of them from C helpers inside the CPU (x87 80-bit loads and
    // stores, cmpxchg16b) rather than from translated loads and stores;
    // `--observe all` must deliver each exactly once, in LARD and binary mode.
    let guest = build_asm("asm/access_counts.S");
    for mode in ["lard", "binary"] {
        let l = lard_run(
            &[
                "--detector",
                "none",
                "--observe",
                "all",
                "--mode",
                mode,
                "--stats",
            ],
            &guest,
            &[],
        );
        assert_eq!(shell_status(&l), 0, "{}", stderr(&l));
        let err = stderr(&l);
        let counts = |what: &str| -> (u64, u64) {
            let n: Vec<u64> = stats_line(&err, what)
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|w| w.parse().ok())
                .collect();
            (n[0], n[1])
        };
        let (tr, tw) = counts("tracked");
        let (r, w) = counts("untracked non-stack");
        assert_eq!((tr + r, tw + w), (8_000, 6_000), "--mode {mode}:\n{err}");
        assert_eq!(counts("untracked stack"), (0, 0), "--mode {mode}");
    }
}

#[test]
fn tracked_accesses_of_every_form_read_and_write_what_the_program_expects() {
    // tracked_forms makes 13 Tracked reads and 10 Tracked writes by
    // construction (every size, sign extension, read-modify-write, movbe,
    // 16-byte SSE, across a page boundary), each made inside its
    // observation call (unicorn patch 0009: the guest has more than
    // IN_HELPER_SITES Tracked sites), and checks every value it reads:
    // exit status 0 when all are right, as natively.
    let guest = build_asm("asm/tracked_forms.S");
    assert_eq!(shell_status(&native(&guest, &[])), 0);
    let l = lard_run(
        &["--detector", "none", "--observe", "tracked", "--stats"],
        &guest,
        &[],
    );
    assert_eq!(shell_status(&l), 0, "{}", stderr(&l));
    let err = stderr(&l);
    let tracked = stats_line(&err, "tracked ");
    assert_eq!(tracked.trim(), "13 reads, 10 writes", "{err}");
    // A faulting Tracked access is reported like any other fault.
    for (arg, what) in [
        ("rodata", "write to read-only memory at address 0x"),
        ("null", "read of unmapped memory at address 0x0 "),
    ] {
        assert_eq!(shell_status(&native(&guest, &[arg])), 139);
        let l = lard_run(&[], &guest, &[arg]);
        assert_eq!(shell_status(&l), 139, "{}", stderr(&l));
        let e = stderr(&l);
        assert!(e.contains(what) && e.contains(": tracked mov "), "{e}");
    }
}

#[test]
fn threaded_counters_are_exact_under_the_emulator() {
    for libc in Libc::ALL {
        let out = lard_run(
            &["--sched", "random", "--seed", "3"],
            &build_c("plain/mutex_counter.c", libc),
            &[],
        );
        assert_eq!(
            stdout(&out),
            "counter=20000 expected=20000\n",
            "{libc:?}: {}",
            stderr(&out)
        );
        let out = lard_run(
            &["--sched", "random", "--seed", "5", "--quantum", "7"],
            &build_c("plain/condvar_pc.c", libc),
            &[],
        );
        assert_eq!(
            stdout(&out),
            "consumed sum=2001000 expected=2001000\n",
            "{libc:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn files_are_written_and_read_back_through_the_host() {
    let dir = std::env::temp_dir().join(format!("lard-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_string_lossy().to_string();
    for libc in Libc::ALL {
        let out = assert_parity(&build_c("plain/file_rw.c", libc), &[&d]);
        assert_eq!(
            stdout(&out),
            "size=790 lines=100 sum=4950\nallocated=8192\n"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rust_std_threads_with_arc_mutex() {
    let guest = build_rust("rust-std/threads.rs");
    let out = assert_parity(&guest, &["a", "b"]);
    assert_eq!(stdout(&out), "total=10000 args=[\"a\", \"b\"]\n");
}

#[test]
fn segfaults_are_reported_with_pc_address_and_instruction() {
    for libc in Libc::ALL {
        let guest = build_c("plain/segfault.c", libc);
        for (arg, what, addr) in [
            ("null", "write to unmapped memory", "at address 0x0 "),
            ("rodata", "write to read-only memory", "at address 0x"),
        ] {
            let n = native(&guest, &[arg]);
            let l = lard_run(&[], &guest, &[arg]);
            assert_eq!(shell_status(&n), 139);
            assert_eq!(shell_status(&l), 139, "{}", stderr(&l));
            assert_eq!(stdout(&l), "about to fault\n");
            let e = stderr(&l);
            assert!(e.contains(what) && e.contains(addr), "{e}");
            assert!(e.contains("<main") && e.contains("mov byte ptr"), "{e}");
            assert_eq!(
                e.lines().filter(|l| l.starts_with("lard:")).count(),
                1,
                "one error line: {e}"
            );
        }
    }
}

#[test]
fn deadlock_is_reported_with_every_thread_and_its_wait() {
    for libc in Libc::ALL {
        let l = lard_run(&[], &build_c("plain/deadlock.c", libc), &[]);
        assert_eq!(shell_status(&l), 122, "{}", stderr(&l));
        let e = stderr(&l);
        assert!(e.contains("deadlock"), "{e}");
        for t in ["thread 4000", "thread 4001", "thread 4002"] {
            assert!(e.contains(t), "{t} missing: {e}");
        }
        // The two workers wait on the two mutexes, named by symbol.
        assert!(e.contains("(a+0x") && e.contains("(b+0x"), "{e}");
        assert_eq!(stdout(&l), "");
    }
}

fn event_hash(libc: Libc, seed: &str) -> (String, String) {
    event_hash_with(libc, seed, &[])
}

/// The event stream hash and per-thread counts of racy_sum under
/// `--observe all`, with `extra` lard options.
fn event_hash_with(libc: Libc, seed: &str, extra: &[&str]) -> (String, String) {
    let guest = build_c("plain/racy_sum.c", libc);
    let json = scratch_file(&format!("racy-{}-{seed}-{}", libc.name(), extra.len()));
    let j = json.to_string_lossy().to_string();
    let mut args = vec![
        "--detector",
        "none",
        "--sched",
        "random",
        "--quantum",
        "20",
        "--seed",
        seed,
        "--observe",
        "all",
        "--stats-json",
        &j,
    ];
    args.extend_from_slice(extra);
    let l = lard_run(&args, &guest, &[]);
    assert_eq!(shell_status(&l), 0, "{}", stderr(&l));
    let text = std::fs::read_to_string(&json).unwrap();
    std::fs::remove_file(&json).unwrap();
    let hash = text
        .split("\"event_hash\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let threads = text
        .split("\"threads\":")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .to_string();
    (hash, threads)
}

#[test]
fn same_seed_same_interleaving_different_seeds_differ() {
    for libc in Libc::ALL {
        // Every access with its PC, address, thread and order is hashed.
        let a = event_hash(libc, "1");
        let b = event_hash(libc, "1");
        assert_eq!(a, b, "{libc:?}: same seed, different event streams");
        let others: std::collections::HashSet<String> = ["2", "3", "4"]
            .iter()
            .map(|s| event_hash(libc, s).0)
            .collect();
        assert!(
            others.iter().any(|h| *h != a.0),
            "{libc:?}: seeds do not change the interleaving"
        );
    }
}

#[test]
fn batched_access_delivery_gives_the_synchronous_event_stream() {
    // `--observe all` hands accesses to the counting observer in batches,
    // after they happened (unicorn patch 0008); `--record-trace` keeps
    // delivering each before it happens, interleaved with syscalls, context
    // switches and sync events as they occur. Same seed, so the same
    // execution: the stream hashes (every field of every event, in order)
    // must agree, and the trace must hold the stream. The batches' pass
    // (`--simd`: scalar, AVX2, AVX-512, each where the CPU has it) must
    // not change it either.
    let mut forms = vec!["scalar"];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx2") && has!("popcnt") {
            forms.push("avx2");
        }
        if has!("avx512f") && has!("avx512dq") && has!("popcnt") {
            forms.push("avx512");
        }
    }
    for libc in Libc::ALL {
        let trace = scratch_file(&format!("racy-{}-trace", libc.name()));
        let t = trace.to_string_lossy().to_string();
        let batched = event_hash(libc, "5");
        let one_by_one = event_hash_with(libc, "5", &["--record-trace", &t]);
        let recorded = std::fs::metadata(&trace).map(|m| m.len()).unwrap_or(0);
        std::fs::remove_file(&trace).ok();
        assert_eq!(
            batched, one_by_one,
            "{libc:?}: batched vs synchronous delivery"
        );
        assert!(recorded > 10_000, "{libc:?}: trace of {recorded} bytes");
        for simd in &forms {
            let forced = event_hash_with(libc, "5", &["--simd", simd]);
            assert_eq!(forced, one_by_one, "{libc:?}: batched with --simd {simd}");
        }
    }
}

#[test]
fn unknown_syscalls_warn_once_or_stop_when_strict() {
    let guest = build_c("plain/unknown_syscall.c", Libc::Glibc);
    let l = lard_run(&[], &guest, &[]);
    assert_eq!(
        stdout(&l),
        "syscall(1000) = -1 errno=38\nsyscall(1000) = -1 errno=38\n"
    );
    let e = stderr(&l);
    assert_eq!(e.matches("unsupported system call 1000").count(), 1, "{e}");
    let l = lard_run(&["--strict-syscalls"], &guest, &[]);
    assert_eq!(shell_status(&l), 123);
    assert!(
        stderr(&l).contains("unsupported system call 1000"),
        "{}",
        stderr(&l)
    );
}

#[test]
fn bad_guests_get_one_line_errors_and_documented_statuses() {
    use std::os::unix::fs::PermissionsExt;
    let dir = guest_dir();
    let executable = |p: &std::path::Path| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap()
    };
    let not_elf = dir.join("not-an-elf");
    std::fs::write(&not_elf, b"neither ELF nor script\n").unwrap();
    executable(&not_elf);
    let hello = build_c("plain/hello.c", Libc::Glibc);
    let truncated = dir.join("truncated-elf");
    std::fs::write(&truncated, &std::fs::read(&hello).unwrap()[..200]).unwrap();
    executable(&truncated);
    // As natively (the shell's 126): a file without execute permission
    // and a directory do not run.
    let not_executable = dir.join("hello-not-executable");
    std::fs::copy(&hello, &not_executable).unwrap();
    std::fs::set_permissions(&not_executable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cases: [(std::path::PathBuf, i32, &str); 5] = [
        (dir.join("does-not-exist"), 127, "cannot read"),
        (not_elf, 126, "not an ELF file"),
        (truncated, 126, "corrupt ELF"),
        (not_executable, 126, "permission denied"),
        (dir.clone(), 126, "is a directory"),
    ];
    for (path, status, msg) in cases {
        let l = lard_run(&[], &path, &[]);
        let e = stderr(&l);
        assert_eq!(shell_status(&l), status, "{}: {e}", path.display());
        assert!(e.contains(msg), "{}: {e}", path.display());
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    // A report that could not be written is refused before the run.
    let l = lard_run(&["--report-json", "/nonexistent-dir/r.json"], &hello, &[]);
    assert_eq!(shell_status(&l), 1, "{}", stderr(&l));
    assert!(stdout(&l).is_empty(), "the guest ran: {}", stdout(&l));
    assert!(
        stderr(&l).contains("no directory /nonexistent-dir"),
        "{}",
        stderr(&l)
    );
}

#[test]
fn bad_hw_config_files_get_one_line_errors_naming_the_line() {
    // docs/cli.md: status 1 for a bad `--hw-config` file. A constraint
    // between keys names the line that set the offending key.
    let hello = build_c("plain/hello.c", Libc::Glibc);
    let cases: [(&str, Option<&str>, &str); 4] = [
        (
            "[l1]\nwayz = 2\n",
            Some("[l1]\nwayz = 2\n"),
            "line 2: key `l1.wayz`",
        ),
        (
            "bad",
            Some("# ok\n[l3]\nways = 70000\n"),
            "line 3: l3: ways must be <= 65536",
        ),
        (
            "short",
            Some("[system]\n\nline_bytes = 128K\n"),
            "line 3: l1: ways must be >= 1",
        ),
        ("missing", None, "cannot read"),
    ];
    for (name, text, msg) in cases {
        let path = scratch_file("hw-config").with_extension(format!("{}.toml", name.len()));
        match text {
            Some(t) => std::fs::write(&path, t).unwrap(),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
        let path_s = path.to_str().unwrap();
        let l = lard_run(
            &["--detector", "lardish", "--hw-config", path_s],
            &hello,
            &[],
        );
        let e = stderr(&l);
        assert_eq!(shell_status(&l), 1, "{name}: {e}");
        assert!(e.contains(msg), "{name}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{name}: {e}");
        assert!(!e.contains("line 0") && !e.contains("panicked"), "{e}");
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn cpuid_advertises_only_what_the_emulated_cpu_runs() {
    // unicorn's CPU implements SSE up to SSE4.2 but no AVX: CPUID must say so,
    // so that glibc's ifunc-selected string functions are ones it can run.
    for libc in Libc::ALL {
        let l = lard_run(
            &["--detector", "none"],
            &build_c("plain/cpu_features.c", libc),
            &[],
        );
        assert_eq!(
            stdout(&l),
            "sse2=1 sse4.2=1 avx=0 avx2=0 avx512f=0\nstring functions ok\n",
            "{libc:?}: {}",
            stderr(&l)
        );
        assert_eq!(shell_status(&l), 0);
    }
}

#[test]
fn a_guest_that_closes_every_descriptor_and_changes_directory_keeps_the_report() {
    // The racing line, from the guest's design (its "the race" comment).
    let race_line = marker_line("plain/closes_fds.c", "/* the race */") as i64;
    let guest = build_c("plain/closes_fds.c", Libc::Glibc);
    let n = native(&guest, &[]);
    // Relative output paths, resolved against the directory lard started in
    // although the guest moves to /.
    let dir = scratch_file("closes-fds").with_extension("d");
    std::fs::create_dir_all(&dir).unwrap();
    let l = std::process::Command::new(lard())
        .current_dir(&dir)
        .args([
            "run",
            "--report-json",
            "r.json",
            "--record-trace",
            "t.trace",
            "--stats",
        ])
        .arg(&guest)
        .output()
        .unwrap();
    assert_eq!(
        (shell_status(&l), stdout(&l)),
        (shell_status(&n), stdout(&n)),
        "{}",
        stderr(&l)
    );
    assert_eq!(stdout(&l), "start\ndone\n");
    // The text report reached lard's stderr though the guest closed fd 2.
    let err = stderr(&l);
    assert!(
        err.contains(&format!("closes_fds.c:{race_line}")),
        "text report lost or wrong:\n{err}"
    );
    let dre: u64 = err
        .split("racy dynamic accesses (DRE): ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .expect("DRE line");
    assert!(dre > 0, "{err}");
    // The JSON is where the user asked for it, and names the line.
    let json = std::fs::read_to_string(dir.join("r.json")).expect("r.json in lard's directory");
    assert_eq!(
        source_lines(&guest, "closes_fds.c", &racy_pcs(&json)),
        [race_line].into_iter().collect()
    );
    // The trace survived the guest's close loop: complete, it replays to the
    // live run's verdict under the canonical detector.
    assert_eq!(
        canonical_dre_of_trace(&dir.join("t.trace")),
        dre,
        "the replayed trace disagrees with the live run"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
