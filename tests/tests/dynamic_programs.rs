//! Dynamically linked programs under `lard run`: the host's ld.so loads the
//! libraries, and the result is the native run's. Distribution binaries
//! (`ls`, `sort`, Debian's `pigz`, `python3`), gcc-built guests, `dlopen`,
//! `--sysroot`, and the one-line errors for a missing interpreter or library.
//! (The manifest guests' dynamic builds are checked in manifest_verdicts.rs.)

use lard_e2e::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A system program the test needs (installed by `make`'s APT_PACKAGES).
fn program(path: &str) -> PathBuf {
    let p = PathBuf::from(path);
    assert!(
        p.exists(),
        "{path} is missing: `make prereqs` installs it (APT_PACKAGES)"
    );
    p
}

fn run_native(prog: &Path, args: &[&str]) -> Output {
    Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", prog.display()))
}

fn assert_same(what: &str, native: &Output, lard: &Output) {
    assert_eq!(
        shell_status(lard),
        shell_status(native),
        "{what}: exit status; stderr under lard: {}",
        stderr(lard)
    );
    assert!(
        lard.stdout == native.stdout,
        "{what}: stdout differs; under lard:\n{}\nnative:\n{}\nstderr: {}",
        stdout(lard),
        stdout(native),
        stderr(lard)
    );
}

fn scratch_dir(name: &str) -> PathBuf {
    let d = guest_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn plain_guests_built_without_static_match_their_native_runs() {
    for (src, args) in [
        ("plain/hello.c", &[][..]),
        ("plain/args_env.c", &["one", "two words", "--flag"][..]),
        ("plain/mutex_counter.c", &[][..]),
        ("plain/condvar_pc.c", &[][..]),
        ("plain/exit_code.c", &["42", "thread"][..]),
        ("plain/runtime_calls.c", &[][..]),
    ] {
        let name = Path::new(src).file_stem().unwrap().to_string_lossy();
        let guest = build_c_dynamic(src, &name, &[]);
        let l = assert_parity(&guest, args);
        assert!(!stderr(&l).contains("WARN"), "{src}: {}", stderr(&l));
    }
}

#[test]
fn libstdcxx_threads_and_exceptions_and_libgomp_constructs() {
    let cxx = build_c_dynamic("dynamic/cxx_threads.cpp", "cxx_threads", &["-lstdc++"]);
    let l = assert_parity(&cxx, &[]);
    assert_eq!(shell_status(&l), 4);
    assert!(
        stdout(&l).ends_with("3:xxxx\ncaught boom\n"),
        "{}",
        stdout(&l)
    );
    let omp = build_c_dynamic("dynamic/omp_constructs.c", "omp_constructs", &["-fopenmp"]);
    let l = assert_parity(&omp, &[]);
    assert_eq!(
        stdout(&l),
        "single from a team of 4\nsum=4999950000 n=30\n",
        "{}",
        stderr(&l)
    );
}

#[test]
fn ls_l_of_the_root_directory() {
    let ls = program("/bin/ls");
    let n = run_native(&ls, &["-l", "/"]);
    let l = lard_run(&["--detector", "none"], &ls, &["-l", "/"]);
    // /proc's link count follows the number of host processes and /tmp's
    // mtime other programs' temporary files: both change between two runs.
    // ls pads each column to its widest entry, so a link count gaining a
    // digit widens every line: compare the fields, not the padding.
    let stable = |o: &Output| -> String {
        stdout(o)
            .lines()
            .filter(|l| !l.ends_with(" proc") && !l.ends_with(" tmp"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") + "\n")
            .collect()
    };
    assert_eq!(shell_status(&l), shell_status(&n), "{}", stderr(&l));
    assert_eq!(stable(&l), stable(&n), "stderr: {}", stderr(&l));
    assert!(stable(&l).lines().count() > 10, "{}", stdout(&l));
    assert!(!stderr(&l).contains("WARN"), "{}", stderr(&l));
    // ls closes stdout and stderr at exit (coreutils' close_stdout): lard's
    // report still reaches its stderr.
    let l = lard_run(&["--stats"], &ls, &["-l", "/"]);
    let e = stderr(&l);
    assert!(
        e.contains("== lard races (fasttrack) ==") && e.contains("instructions retired"),
        "{e}"
    );
}

#[test]
fn everyday_tools_match_their_native_runs_without_warnings() {
    let readme = root().join("README.md");
    let r = readme.to_str().unwrap();
    let docs = root().join("docs");
    let d = docs.to_str().unwrap();
    for (prog, args) in [
        ("/usr/bin/id", vec![]),
        ("/usr/bin/grep", vec!["-c", "lard", r]),
        ("/usr/bin/md5sum", vec![r]),
        ("/usr/bin/gzip", vec!["-9", "-n", "-c", r]),
        ("/usr/bin/find", vec![d, "-name", "*.md"]),
        ("/usr/bin/stat", vec!["-c", "%n %s %F", r]),
        (
            "/usr/bin/perl",
            vec!["-e", "print join(',', map { $_ * $_ } 1..5), \"\\n\""],
        ),
    ] {
        let p = program(prog);
        let n = run_native(&p, &args);
        let l = lard_run(&["--detector", "none"], &p, &args);
        assert_same(&format!("{prog} {args:?}"), &n, &l);
        assert!(!stderr(&l).contains("WARN"), "{prog}: {}", stderr(&l));
    }
}

#[test]
fn sort_numeric_and_lexical() {
    let sort = program("/usr/bin/sort");
    let dir = scratch_dir("sort");
    let input = dir.join("in.txt");
    let mut x: u64 = 12345;
    let mut text = String::new();
    for i in 0..5000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text += &format!("{} line{}\n", (x >> 40) % 100_000, i % 97);
    }
    std::fs::write(&input, text).unwrap();
    let inp = input.to_str().unwrap();
    for args in [
        vec![inp],
        vec!["-n", "-r", inp],
        vec!["-k2,2", "-s", "--parallel=4", "-S", "64K", inp],
    ] {
        let n = run_native(&sort, &args);
        let l = lard_run(&["--detector", "none"], &sort, &args);
        assert_same(&format!("sort {args:?}"), &n, &l);
    }
}

#[test]
fn debian_pigz_with_four_threads() {
    let pigz = program("/usr/bin/pigz");
    let dir = scratch_dir("pigz");
    let input = dir.join("data.bin");
    // Compressible but not trivial: 2 MiB of words from a small PRNG.
    let mut x: u32 = 7;
    let mut data = Vec::with_capacity(2 << 20);
    while data.len() < 2 << 20 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        data.extend_from_slice(format!("w{} ", x % 5000).as_bytes());
    }
    std::fs::write(&input, &data).unwrap();
    let inp = input.to_str().unwrap();
    let args = ["-p", "4", "-b", "128", "-c", inp];
    let n = run_native(&pigz, &args);
    let l = lard_run(&["--detector", "none"], &pigz, &args);
    assert_same("pigz -p 4", &n, &l);
    // And back: decompressing under lard gives the original bytes.
    let gz = dir.join("data.bin.gz");
    std::fs::write(&gz, &l.stdout).unwrap();
    let d = lard_run(
        &["--detector", "none"],
        &pigz,
        &["-d", "-c", gz.to_str().unwrap()],
    );
    assert_eq!(shell_status(&d), 0, "{}", stderr(&d));
    assert!(d.stdout == data, "pigz -d under lard: wrong bytes");
}

#[test]
fn python3_runs_a_threaded_script() {
    let python = program("/usr/bin/python3");
    let script = root().join("guests/dynamic/threads.py");
    let s = script.to_str().unwrap();
    let n = run_native(&python, &["-S", s]);
    assert_eq!(shell_status(&n), 3, "native python3: {}", stderr(&n));
    let l = lard_run(&["--detector", "none"], &python, &["-S", s]);
    assert_same("python3 threads.py", &n, &l);
    let l = lard_run(&["--detector", "none"], &python, &[s]);
    assert_same("python3 threads.py (with site)", &n, &l);
}

#[test]
fn dlopen_of_a_plugin_and_faults_inside_it() {
    let plugin = build_c_dynamic("dynamic/plugin.c", "libplugin.so", &["-shared", "-fPIC"]);
    let host = build_c_dynamic("dynamic/plugin_host.c", "plugin_host", &["-ldl"]);
    let p = plugin.to_str().unwrap();
    let l = assert_parity(&host, &[p]);
    assert_eq!(stdout(&l), "the plugin says 42\nclosed\n");
    // A fault inside the plugin is reported with the plugin's function.
    let n = native(&host, &[p, "crash"]);
    let l = lard_run(&[], &host, &[p, "crash"]);
    assert_same("plugin crash", &n, &l);
    let e = stderr(&l);
    assert!(
        e.contains("write to unmapped memory at address 0x0")
            && e.contains("plugin_crash")
            && e.contains("libplugin.so"),
        "{e}"
    );
}

#[test]
fn missing_interpreter_library_or_sysroot_get_one_line_errors() {
    let one_line = |o: &Output, status: i32, needle: &str| {
        let e = stderr(o);
        assert_eq!(shell_status(o), status, "{e}");
        assert!(e.contains(needle), "wanted {needle:?} in {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(!e.contains("panicked"), "{e}");
    };
    // An interpreter that does not exist.
    let bad_interp = build_c_dynamic(
        "plain/hello.c",
        "hello_bad_interp",
        &["-Wl,--dynamic-linker=/nonexistent/ld-lard-test.so.2"],
    );
    let l = lard_run(&[], &bad_interp, &[]);
    one_line(&l, 127, "/nonexistent/ld-lard-test.so.2");
    // A sysroot without an interpreter.
    let hello = build_c_dynamic("plain/hello.c", "hello", &[]);
    let empty = scratch_dir("empty-sysroot");
    let root_arg = empty.to_str().unwrap();
    let l = lard_run(&["--sysroot", root_arg], &hello, &[]);
    one_line(&l, 127, &format!("{root_arg}/lib64/ld-linux-x86-64.so.2"));
    // A sysroot that does not exist.
    let l = lard_run(&["-L", "/nonexistent-sysroot"], &hello, &[]);
    one_line(&l, 127, "/nonexistent-sysroot");
    // A library that is gone: ld.so itself says which, with its status.
    let libdir = scratch_dir("gone-lib");
    let lib = libdir.join("libgreet.so");
    let st = Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(root().join("guests/dynamic/greet.c"))
        .status()
        .unwrap();
    assert!(st.success());
    let prog = libdir.join("needs_greet");
    let st = Command::new("gcc")
        .arg(root().join("guests/dynamic/needs_greet.c"))
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .args(["-lgreet", "-o"])
        .arg(&prog)
        .status()
        .unwrap();
    assert!(st.success());
    let l = assert_parity(&prog, &[]);
    assert_eq!(stdout(&l), "greetings, ld.so\n");
    assert_eq!(shell_status(&l), 5);
    std::fs::remove_file(&lib).unwrap();
    let n = native(&prog, &[]);
    let l = lard_run(&["--detector", "none"], &prog, &[]);
    assert_eq!(shell_status(&n), 127);
    assert_eq!(stderr(&l), stderr(&n));
    one_line(&l, 127, "libgreet.so: cannot open shared object file");
}

#[test]
fn sysroot_supplies_the_interpreter_and_proc_self_maps_lists_objects() {
    let hello = build_c_dynamic("plain/hello.c", "hello", &[]);
    let root_dir = scratch_dir("sysroot");
    std::fs::create_dir_all(root_dir.join("lib64")).unwrap();
    // A copy, so the interpreter that runs can only have come from DIR.
    std::fs::copy(
        "/lib64/ld-linux-x86-64.so.2",
        root_dir.join("lib64/ld-linux-x86-64.so.2"),
    )
    .unwrap();
    let r = root_dir.to_str().unwrap();
    let l = lard_run(&["--sysroot", r], &hello, &[]);
    assert_eq!(stdout(&l), "hello, world\n", "{}", stderr(&l));
    assert_eq!(shell_status(&l), 0);
    // The guest's own memory map: its executable, ld.so (by the name the
    // guest knows) and libc, never lard's own mappings.
    let cat = program("/bin/cat");
    let l = lard_run(
        &["--sysroot", r, "--detector", "none"],
        &cat,
        &["/proc/self/maps"],
    );
    let maps = stdout(&l);
    assert_eq!(shell_status(&l), 0, "{}", stderr(&l));
    for want in [
        "/bin/cat",
        "/lib64/ld-linux-x86-64.so.2",
        "libc.so.6",
        "[stack]",
    ] {
        assert!(maps.contains(want), "no {want} in\n{maps}");
    }
    assert!(!maps.contains(r), "sysroot path leaked into\n{maps}");
    assert!(!maps.contains("lard"), "lard's own maps:\n{maps}");
}

/// The line of `src` (under guests/) marked `/* RACE */`: the ground truth.
fn race_line(src: &str) -> usize {
    marker_line(src, "/* RACE */")
}

#[test]
fn races_in_a_shared_library_name_its_function_line_and_data() {
    let sdk = build_manifest_guests().join("glibc-dynamic/sdk");
    let include = format!("-I{}", root().join("guest-sdk/include").display());
    let lib = build_c_dynamic(
        "dynamic/racy_lib.c",
        "libracy.so",
        &["-shared", "-fPIC", &include],
    );
    let dir = lib.parent().unwrap().display().to_string();
    let prog = build_c_dynamic(
        "dynamic/racy_lib_main.c",
        "racy_lib_main",
        &[
            &include,
            &format!("-L{dir}"),
            &format!("-Wl,-rpath,{dir}"),
            "-lracy",
            &format!("-L{}", sdk.display()),
            "-llard",
        ],
    );
    let line = race_line("dynamic/racy_lib.c");
    for detector in ["fasttrack", "canonical", "lardish"] {
        let l = lard_run(&["--detector", detector, "--stats"], &prog, &[]);
        assert_eq!(stdout(&l), "slot = 2\n", "{}", stderr(&l));
        assert_eq!(shell_status(&l), 0);
        let e = stderr(&l);
        assert!(
            e.contains("racy dynamic accesses (DRE): 1, distinct racy PCs: 1"),
            "{detector}: {e}"
        );
        assert!(
            e.contains("write-write race")
                && e.contains("<shared_slot+0x0 in libracy.so>")
                && e.contains("<store_slot+")
                && e.contains(" in libracy.so>:")
                && e.contains(&format!("racy_lib.c:{line}")),
            "{detector}: {e}"
        );
    }
}

#[test]
fn lines_of_a_stripped_library_come_from_its_debug_file_by_build_id() {
    let sdk = build_manifest_guests().join("glibc-dynamic/sdk");
    let include = format!("-I{}", root().join("guest-sdk/include").display());
    let dir = scratch_dir("debuglink");
    let lib = dir.join("libracy.so");
    let sh = |cmd: &mut Command| {
        let o = cmd.output().expect("toolchain");
        assert!(o.status.success(), "{cmd:?}: {}", stderr(&o));
        o
    };
    sh(Command::new("gcc")
        .args(["-shared", "-fPIC", "-O2", "-g", "-Wl,--build-id", &include])
        .arg(root().join("guests/dynamic/racy_lib.c"))
        .arg("-o")
        .arg(&lib));
    let debug = dir.join("libracy.debug");
    sh(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&lib)
        .arg(&debug));
    sh(Command::new("strip").arg("--strip-debug").arg(&lib));
    let prog = dir.join("racy_lib_main");
    sh(Command::new("gcc")
        .args(["-O2", "-g", "-pthread", &include])
        .arg(root().join("guests/dynamic/racy_lib_main.c"))
        .arg(format!("-L{}", dir.display()))
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-lracy")
        .arg(format!("-L{}", sdk.display()))
        .args(["-llard", "-o"])
        .arg(&prog));
    // The build-id, read by binutils (not by lard's ELF reader).
    let notes = stdout(&sh(Command::new("readelf").arg("-n").arg(&lib)));
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build-id note")
        .to_string();
    let root_dir = dir.join("sysroot");
    let dbg_dir = root_dir.join(format!("usr/lib/debug/.build-id/{}", &id[..2]));
    std::fs::create_dir_all(&dbg_dir).unwrap();
    std::fs::create_dir_all(root_dir.join("lib64")).unwrap();
    std::fs::copy(
        "/lib64/ld-linux-x86-64.so.2",
        root_dir.join("lib64/ld-linux-x86-64.so.2"),
    )
    .unwrap();
    std::fs::copy(&debug, dbg_dir.join(format!("{}.debug", &id[2..]))).unwrap();
    let line = format!("racy_lib.c:{}", race_line("dynamic/racy_lib.c"));
    // Without the debug file the stripped library has symbols but no lines.
    let l = lard_run(&[], &prog, &[]);
    let e = stderr(&l);
    assert!(e.contains("<store_slot+") && !e.contains(&line), "{e}");
    // With it (under the sysroot's /usr/lib/debug), the racy line appears.
    let l = lard_run(&["--sysroot", root_dir.to_str().unwrap()], &prog, &[]);
    let e = stderr(&l);
    assert_eq!(stdout(&l), "slot = 2\n", "{e}");
    assert!(e.contains("<store_slot+") && e.contains(&line), "{e}");
}
