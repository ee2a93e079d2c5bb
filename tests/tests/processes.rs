//! Process trees under `lard run`: fork, exec, pipes and wait behave as
//! natively (ground truth: the native run's stdout and exit status), each
//! process reports its own races labelled with its pid, and programs are
//! found as a shell finds them (PATH, `#!` scripts). docs/processes.md.

use lard_e2e::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn guest(name: &str) -> PathBuf {
    build_c_dynamic(&format!("processes/{name}.c"), name, &[])
}

fn scratch_dir(name: &str) -> PathBuf {
    let d = guest_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `lard run ARGS` with PATH and the working directory set.
fn lard_in(dir: &Path, path: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(lard());
    c.arg("run").args(args).current_dir(dir);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    c.output().expect("cannot run lard")
}

fn sh(dir: &Path, path: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(args[0]);
    c.args(&args[1..]).current_dir(dir);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    c.output().expect("cannot run natively")
}

fn assert_same(what: &str, native: &Output, lard: &Output) {
    assert_eq!(
        shell_status(lard),
        shell_status(native),
        "{what}: exit status; stderr under lard:\n{}",
        stderr(lard)
    );
    assert_eq!(
        stdout(lard),
        stdout(native),
        "{what}: stdout; stderr under lard:\n{}",
        stderr(lard)
    );
}

/// The pids whose reports (`==PID== process ...` headers) stderr holds.
fn reporting_pids(err: &str) -> Vec<String> {
    err.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("==")?;
            let (pid, tail) = rest.split_once("== ")?;
            tail.starts_with("process ").then(|| pid.to_string())
        })
        .collect()
}

/// The report lines of process `pid`.
fn report_of(err: &str, pid: &str) -> String {
    let label = format!("=={pid}== ");
    err.lines()
        .filter_map(|l| l.strip_prefix(&label))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn fork_pipe_and_wait_match_the_native_run() {
    let g = guest("fork_pipe_wait");
    let native = native(&g, &[]);
    assert_eq!(shell_status(&native), 5, "the guest's own exit status");
    assert!(stdout(&native).contains("child 3 killed by signal 9"));
    for sched in [
        &["--sched", "rr"][..],
        &["--sched", "random", "--seed", "7"][..],
    ] {
        let run = lard_run(sched, &g, &[]);
        assert_same(&format!("fork_pipe_wait {sched:?}"), &native, &run);
        let pids = reporting_pids(&stderr(&run));
        assert_eq!(
            pids.len(),
            5,
            "four children and the parent report:\n{}",
            stderr(&run)
        );
        assert!(pids.contains(&"4000".to_string()));
    }
}

#[test]
fn a_race_in_a_child_is_reported_by_that_child_only() {
    let g = guest("racy_child");
    let dir = scratch_dir("racy-child");
    let pattern = dir.join("report.%p.json");
    let run = lard_run(&["--report-json", pattern.to_str().unwrap()], &g, &[]);
    assert_eq!(shell_status(&run), 0, "{}", stderr(&run));
    let out = stdout(&run);
    let child = out
        .split_whitespace()
        .nth(1)
        .expect("the parent prints the child's pid")
        .to_string();
    let err = stderr(&run);
    let child_report = report_of(&err, &child);
    assert!(
        child_report.contains("racy_child.c:21") && child_report.contains("race 1:"),
        "the child's report names the racy line:\n{err}"
    );
    let parent_report = report_of(&err, "4000");
    assert!(
        parent_report.contains("no data races found"),
        "the parent has no race:\n{err}"
    );
    let child_json = std::fs::read_to_string(dir.join(format!("report.{child}.json")))
        .expect("the child writes its own JSON report");
    let parent_json = std::fs::read_to_string(dir.join("report.4000.json"))
        .expect("the parent writes its own JSON report");
    assert!(!racy_pcs(&child_json).is_empty(), "{child_json}");
    assert!(racy_pcs(&parent_json).is_empty(), "{parent_json}");
    let _ = std::fs::remove_dir_all(&dir);

    // The hardware model's worker thread follows the fork: same verdicts.
    let hw = lard_run(&["--detector", "lardish"], &g, &[]);
    let hw_err = stderr(&hw);
    let hw_child = stdout(&hw).split_whitespace().nth(1).unwrap().to_string();
    assert!(
        report_of(&hw_err, &hw_child).contains("racy_child.c:21"),
        "{hw_err}"
    );
    assert!(
        report_of(&hw_err, "4000").contains("no data races found"),
        "{hw_err}"
    );

    let safe = lard_run(&[], &g, &["safe"]);
    assert_eq!(shell_status(&safe), 0, "{}", stderr(&safe));
    let err = stderr(&safe);
    assert!(
        !err.contains("race 1:"),
        "a race-free tree reports none:\n{err}"
    );
    assert_eq!(reporting_pids(&err).len(), 2, "{err}");
}

#[test]
fn posix_spawn_system_popen_and_exec_match_the_native_run() {
    let g = guest("spawn");
    let native = native(&g, &[]);
    assert!(stdout(&native).contains("execvp failed: ENOENT"));
    assert!(stdout(&native).contains("inherited"));
    let run = lard_run(&[], &g, &[]);
    assert_same("spawn", &native, &run);
}

#[test]
fn threads_waiting_on_pipes_do_not_stop_the_others() {
    // Under a blocking host read the reader thread would stop the writer
    // forever: the run would not end.
    let g = guest("thread_pipe");
    let native = native(&g, &[]);
    assert!(stdout(&native).contains("reader got: hello through the pipe"));
    for sched in [
        &["--sched", "rr"][..],
        &["--sched", "random", "--seed", "3"][..],
    ] {
        let run = lard_run(&[&["--timeout", "60"][..], sched].concat(), &g, &[]);
        assert_same(&format!("thread_pipe {sched:?}"), &native, &run);
    }
}

#[test]
fn a_waitid_that_leaves_the_child_waitable_ends_when_the_child_does() {
    // waitid returns 0 whether or not a child was waitable; a blocking one
    // made while another thread runs (Go's os/exec) must end, with the
    // child still there for waitpid.
    let g = guest("thread_waitid");
    let native = native(&g, &[]);
    assert!(
        stdout(&native).contains("exit status 3"),
        "{}",
        stdout(&native)
    );
    let run = lard_run(&["--timeout", "60"], &g, &[]);
    assert_same("thread_waitid", &native, &run);
}

#[test]
fn shared_mappings_are_shared_with_children() {
    let g = guest("shared_mem");
    let dir = scratch_dir("shared-mem");
    let map = dir.join("map");
    let m = map.to_str().unwrap();
    let native = native(&g, &[m]);
    assert!(
        stdout(&native).contains("counter 33"),
        "{}",
        stdout(&native)
    );
    let run = lard_run(&[], &g, &[m]);
    assert_same("shared_mem", &native, &run);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two processes update counters in one `MAP_SHARED` page at the same time
/// (lock xadd, a compare-and-swap loop, an xchg spinlock, a process-shared
/// mutex and semaphore, a misaligned lock xadd): every update counts, as natively
/// (guests/processes/shared_atomics.c; ground truth: its design, 2 x
/// 100,000 each). Several runs, since a lost update needs the two
/// processes' emulators to collide on one instruction.
#[test]
fn atomics_on_shared_memory_are_atomic_across_processes() {
    let g = guest("shared_atomics");
    let native = native(&g, &[]);
    let want = "xadd 200000\ncas 200000\nspinlock 200000\nmutex 200000\nsemaphore 200000\nmisaligned 200000\n";
    assert_eq!(stdout(&native), want);
    for _ in 0..4 {
        let run = lard_run(&["--timeout", "120"], &g, &[]);
        assert_same("shared_atomics", &native, &run);
    }
}

#[test]
fn python_subprocess_matches_the_native_run() {
    let dir = scratch_dir("python");
    let script = "import subprocess, sys\n\
        r = subprocess.run(['sh', '-c', 'echo out; echo err >&2; exit 4'], capture_output=True)\n\
        print(r.returncode, r.stdout, r.stderr)\n\
        print(subprocess.check_output(['tr', 'a-z', 'A-Z'], input=b'piped'))\n";
    let native = sh(&dir, None, &["/usr/bin/python3", "-c", script]);
    assert_eq!(shell_status(&native), 0, "{}", stderr(&native));
    let run = lard_in(&dir, None, &["/usr/bin/python3", "-c", script]);
    assert_same("python subprocess", &native, &run);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shell_pipelines_and_statuses_match_the_native_run() {
    let dir = scratch_dir("shell");
    for script in [
        "echo hi | tr a-z A-Z",
        "x=$(echo sub); echo \"got $x\"",
        "for i in 3 1 2; do echo $i; done | sort | head -2",
        "yes | head -3",
        "ls /nonexistent 2>/dev/null; echo status=$?",
        "exit 3",
        "kill -9 $$",
    ] {
        let native = sh(&dir, None, &["/bin/sh", "-c", script]);
        let run = lard_in(&dir, None, &["/bin/sh", "-c", script]);
        assert_same(script, &native, &run);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn programs_are_found_on_path_and_scripts_run_through_their_interpreter() {
    let dir = scratch_dir("path");
    let script = dir.join("greet.sh");
    std::fs::write(&script, "#!/bin/sh -e\necho \"hello $1 from $0\"\nexit 7\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", dir.display());
    // By name, on PATH, and by relative path: the same as natively.
    for args in [&["greet.sh", "you"][..], &["./greet.sh", "you"][..]] {
        let native = sh(&dir, Some(&path), args);
        assert_eq!(shell_status(&native), 7);
        let run = lard_in(&dir, Some(&path), args);
        assert_same(&format!("{args:?}"), &native, &run);
    }
    let echo = lard_in(&dir, Some(&path), &["echo", "a", "b"]);
    assert_eq!(stdout(&echo), "a b\n");
    // A program that is nowhere: one line, exit 127, as a shell.
    let missing = lard_in(&dir, Some(&path), &["no-such-program-anywhere"]);
    assert_eq!(shell_status(&missing), 127);
    let err = stderr(&missing);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no-such-program-anywhere"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_children_no_runs_exec_d_programs_natively() {
    let dir = scratch_dir("trace-children");
    let traced = lard_in(&dir, None, &["/bin/sh", "-c", "exec /bin/echo traced"]);
    assert_eq!(stdout(&traced), "traced\n");
    assert!(
        stderr(&traced).contains("lard races"),
        "the exec'd echo reports: {}",
        stderr(&traced)
    );
    let native = lard_in(
        &dir,
        None,
        &[
            "--trace-children",
            "no",
            "/bin/sh",
            "-c",
            "exec /bin/echo native",
        ],
    );
    assert_eq!(stdout(&native), "native\n");
    assert!(
        !stderr(&native).contains("lard races"),
        "nothing is emulated after the exec: {}",
        stderr(&native)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program exec'd after lard's own file was removed (lard rebuilt or
/// reinstalled during a long run) runs under the lard that is running:
/// the shell waits on its stdin until the copy of lard it runs under is
/// gone, then execs echo.
#[test]
fn exec_after_lard_s_file_is_removed_runs_under_the_running_lard() {
    use std::io::Write;
    let dir = scratch_dir("exec-removed-lard");
    let copy = dir.join("lard");
    std::fs::copy(lard(), &copy).unwrap();
    let mut child = std::process::Command::new(&copy)
        .args(["run", "/bin/sh", "-c", "read line; exec /bin/echo after"])
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::fs::remove_file(&copy).unwrap();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "after\n");
    assert!(
        stderr(&o).contains("lard races"),
        "the exec'd echo reports: {}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn make_builds_a_small_c_project_with_gcc() {
    // Four objects with -j2: make waits for its jobs in pselect, which a
    // child's SIGCHLD must interrupt.
    let dir = scratch_dir("make");
    let mut objs = Vec::new();
    let mut decls = String::new();
    let mut sum = Vec::new();
    for i in 0..4 {
        std::fs::write(
            dir.join(format!("u{i}.c")),
            format!("int f{i}(void) {{ return {}; }}\n", 10 + i),
        )
        .unwrap();
        objs.push(format!("u{i}.o"));
        decls.push_str(&format!("int f{i}(void);\n"));
        sum.push(format!("f{i}()"));
    }
    std::fs::write(
        dir.join("main.c"),
        format!(
            "#include <stdio.h>\n{decls}int main(void) {{ printf(\"%d\\n\", {}); return 0; }}\n",
            sum.join(" + ")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("Makefile"),
        format!(
            "prog: {} main.o\n\tgcc -o $@ $^\n%.o: %.c\n\tgcc -O2 -c $< -o $@\n",
            objs.join(" ")
        ),
    )
    .unwrap();
    let run = lard_in(&dir, None, &["--timeout", "600", "make", "-j2"]);
    assert_eq!(shell_status(&run), 0, "{}", stderr(&run));
    let prog = Command::new(dir.join("prog"))
        .output()
        .expect("make built prog");
    assert_eq!(stdout(&prog), "46\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// OpenJDK (`make prereqs` installs it): `java -version` and a
/// four-thread program (compiled by the test with `javac`) match their
/// native runs.
#[test]
fn java_runs() {
    let (Ok(java), Ok(javac)) = (which("java"), which("javac")) else {
        panic!("no java/javac on PATH: `make prereqs` installs openjdk-17-jdk-headless");
    };
    let dir = scratch_dir("java");
    let version_native = sh(&dir, None, &[&java, "-version"]);
    let version = lard_in(&dir, None, &[&java, "-version"]);
    assert_eq!(shell_status(&version), 0, "{}", stderr(&version));
    let banner = |o: &Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .find(|l| l.contains(" version "))
            .map(str::to_string)
    };
    assert!(
        banner(&version_native).is_some(),
        "{}",
        stderr(&version_native)
    );
    assert_eq!(
        banner(&version),
        banner(&version_native),
        "{}",
        stderr(&version)
    );
    let cp = dir.to_string_lossy().to_string();
    // Counter: four threads. NullChecks: HotSpot's implicit null checks,
    // SIGSEGV in compiled code delivered to the JVM's handler, which
    // resumes the thread at its exception path.
    for (class, expected) in [
        ("Counter", "total 4000\n"),
        ("NullChecks", "caught 10000\n"),
    ] {
        let src = root().join(format!("guests/java/{class}.java"));
        let built = Command::new(&javac)
            .arg("-d")
            .arg(&dir)
            .arg(&src)
            .output()
            .expect("run javac");
        assert!(built.status.success(), "{}", stderr(&built));
        let native = sh(&dir, None, &[&java, "-cp", &cp, class]);
        assert_eq!(stdout(&native), expected);
        let run = lard_in(&dir, None, &["--timeout", "300", &java, "-cp", &cp, class]);
        assert_same(&format!("java {class}"), &native, &run);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Node.js (`make prereqs` installs it): `node -e` and a program of four
/// `worker_threads` give their native output under lard, in binary mode
/// (V8 reserves its code range at a hinted address, libuv sets
/// non-blocking descriptors with FIONBIO, node names its threads with
/// prctl).
#[test]
fn node_runs() {
    let Ok(node) = which("node") else {
        panic!("no node on PATH: `make prereqs` installs nodejs");
    };
    let dir = scratch_dir("node");
    let script = "console.log([1, 2, 3].map((x) => x * 7).join(','))";
    let native = sh(&dir, None, &[&node, "-e", script]);
    assert_eq!(stdout(&native), "7,14,21\n");
    let run = lard_in(
        &dir,
        None,
        &["--stats", "--timeout", "300", &node, "-e", script],
    );
    assert_same("node -e", &native, &run);
    assert!(stderr(&run).contains("mode: binary"), "{}", stderr(&run));
    let workers = root().join("guests/node/workers.js");
    let w = workers.to_string_lossy().to_string();
    let native = sh(&dir, None, &[&node, &w]);
    assert_eq!(stdout(&native), "total 1799970\n");
    let run = lard_in(&dir, None, &["--timeout", "300", &node, &w]);
    assert_same("node worker_threads", &native, &run);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program on PATH, as a string.
fn which(name: &str) -> Result<String, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().to_string())
        .ok_or(())
}

/// Signals a process sends itself, its timers' signals and a thread's
/// signal run the guest's handlers with the kernel's siginfo, masks,
/// `EINTR` and `SA_RESTART` (guests/processes/signals.c; ground truth: the
/// native run, line for line, and its exit status: the last signal is left
/// at its default action).
#[test]
fn asynchronous_signals_match_the_native_run() {
    let g = guest("signals");
    let native = native(&g, &[]);
    assert_eq!(shell_status(&native), 128 + 12, "{}", stdout(&native));
    assert!(stdout(&native).contains("read with SA_RESTART: 1 x"));
    for sched in [
        &["--sched", "rr"][..],
        &["--sched", "random", "--seed", "3"][..],
    ] {
        let run = lard_run(sched, &g, &[]);
        assert_same(&format!("signals {sched:?}"), &native, &run);
    }
}

/// Signals between processes of a shell: a trap runs, `timeout` kills its
/// child and reports 124, `kill` of a background job is its wait status.
#[test]
fn signals_between_processes_match_the_native_run() {
    let dir = scratch_dir("signals");
    // The kill of a job just started lands anywhere in its fork and exec:
    // it is made six times so that a window where a signal is lost shows.
    for script in [
        "trap 'echo caught' USR1; kill -USR1 $$; echo after",
        "trap 'echo term' TERM; kill -TERM $$; echo after",
        "timeout 1 sleep 5; echo status $?",
        "for i in 1 2 3 4 5 6; do sleep 5 & p=$!; kill $p; wait $p; echo status $?; done",
    ] {
        let native = sh(&dir, None, &["/bin/bash", "-c", script]);
        let run = lard_in(&dir, None, &["/bin/bash", "-c", script]);
        assert_same(script, &native, &run);
    }
    let script = "import signal, time\n\
        signal.signal(signal.SIGALRM, lambda *a: print('alarm'))\n\
        signal.alarm(1)\n\
        time.sleep(3)\n\
        print('end')\n";
    let native = sh(&dir, None, &["/usr/bin/python3", "-c", script]);
    assert_eq!(stdout(&native), "alarm\nend\n");
    let run = lard_in(&dir, None, &["/usr/bin/python3", "-c", script]);
    assert_same("python alarm", &native, &run);
    // The mask survives execve, under lard and with --trace-children no.
    let script = "import signal, os\n\
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])\n\
        os.execv('/usr/bin/python3', ['python3', '-c', \
        'import signal; print(signal.SIGUSR1 in signal.pthread_sigmask(signal.SIG_BLOCK, []))'])\n";
    let native = sh(&dir, None, &["/usr/bin/python3", "-c", script]);
    assert_eq!(stdout(&native), "True\n");
    for opts in [&[][..], &["--trace-children", "no"][..]] {
        let mut args = opts.to_vec();
        args.extend(["/usr/bin/python3", "-c", script]);
        let run = lard_in(&dir, None, &args);
        assert_same("mask across execve", &native, &run);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
