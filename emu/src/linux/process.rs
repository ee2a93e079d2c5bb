//! Processes: the guest's view of process ids, and what `fork`, `execve`
//! and `wait4` need to find programs and hand them to a new lard.
//!
//! A guest process is one host process running lard. `fork` forks lard
//! itself: the child is a copy of the emulator, its guest memory and its
//! detector state, as the kernel would copy the guest. `execve` replaces
//! the lard process by a new lard running the new program with the same
//! options (docs/processes.md). Host pids are the guest's pids, except the
//! first process of a tree, which sees [`GUEST_PID`] as its own (so a run
//! of one process is the same whatever pid the host gave lard);
//! [`Identity`] translates between the two.

use crate::machine::GUEST_PID;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Who this process is, in the guest's pid space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The pid the guest sees for itself.
    pub pid: u32,
    /// The guest's parent pid (`getppid`).
    pub ppid: u32,
    /// The host pid of the tree's first process (the one that sees
    /// [`GUEST_PID`]).
    pub root_host: i32,
    /// Whether this process is not the tree's first, or has had children:
    /// its reports are then labelled with its pid and program.
    pub labelled: bool,
    /// Whether this process descends from the tree's first by a `fork`
    /// (the first process stays the first across its own `execve`s).
    pub descendant: bool,
}

impl Identity {
    /// The first process of a tree, started by the user.
    pub fn root() -> Identity {
        Identity {
            pid: GUEST_PID,
            ppid: 1,
            // SAFETY: getpid has no preconditions.
            root_host: unsafe { libc::getpid() },
            labelled: false,
            descendant: false,
        }
    }

    /// The host pid for a guest pid (positive, or a negated process group).
    pub fn to_host(&self, pid: i64) -> i64 {
        match pid {
            p if p == i64::from(GUEST_PID) => i64::from(self.root_host),
            p if p == -i64::from(GUEST_PID) => -i64::from(self.root_host),
            p => p,
        }
    }

    /// The guest pid for a host pid.
    pub fn to_guest(&self, host: i64) -> i64 {
        if host == i64::from(self.root_host) {
            i64::from(GUEST_PID)
        } else {
            host
        }
    }

    /// The identity of a child just forked (in the child).
    pub fn forked_child(&self) -> Identity {
        // SAFETY: getpid has no preconditions.
        let host = unsafe { libc::getpid() };
        Identity {
            pid: self.to_guest(i64::from(host)) as u32,
            ppid: self.pid,
            root_host: self.root_host,
            labelled: true,
            descendant: true,
        }
    }

    /// The hidden `--process` argument that carries this identity to the
    /// lard an `execve` starts.
    pub fn encode(&self) -> String {
        format!(
            "{}:{}:{}:{}:{}",
            self.pid,
            self.ppid,
            self.root_host,
            u8::from(self.labelled),
            u8::from(self.descendant)
        )
    }

    /// Parses [`Identity::encode`]'s form.
    pub fn decode(s: &str) -> Option<Identity> {
        let mut it = s.split(':');
        let pid = it.next()?.parse().ok()?;
        let ppid = it.next()?.parse().ok()?;
        let root_host = it.next()?.parse().ok()?;
        let flag = |f: Option<&str>| match f? {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        };
        let labelled = flag(it.next())?;
        let descendant = flag(it.next())?;
        if it.next().is_some() {
            return None;
        }
        Some(Identity {
            pid,
            ppid,
            root_host,
            labelled,
            descendant,
        })
    }

    /// The label of this process's reports: `==PID==`.
    pub fn label(&self) -> String {
        format!("=={}==", self.pid)
    }
}

/// A program to run in place of the current one (`execve`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecRequest {
    /// The file to load (after `#!` resolution: the interpreter).
    pub path: PathBuf,
    /// Its argument vector (argv[0] as the guest passed it).
    pub argv: Vec<Vec<u8>>,
    /// Its environment.
    pub envp: Vec<Vec<u8>>,
    /// The calling thread's signal mask, which the new program keeps.
    pub sigmask: u64,
}

/// How an executable file starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Executable {
    /// An ELF file.
    Elf,
    /// A `#!` script: its interpreter and the optional argument.
    Script {
        /// The interpreter's path.
        interpreter: PathBuf,
        /// The one optional argument after it.
        arg: Option<Vec<u8>>,
    },
}

/// The errno `execve` would fail with for `path`, or what the file is.
pub fn classify(path: &Path) -> Result<Executable, i32> {
    let meta = std::fs::metadata(path).map_err(|e| e.raw_os_error().unwrap_or(libc::ENOENT))?;
    if meta.is_dir() || meta.permissions().mode() & 0o111 == 0 {
        return Err(libc::EACCES);
    }
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EACCES))?;
    let head = &head[..n];
    if head.starts_with(b"\x7fELF") {
        return Ok(Executable::Elf);
    }
    if let Some(rest) = head.strip_prefix(b"#!") {
        return parse_shebang(rest).ok_or(libc::ENOEXEC);
    }
    Err(libc::ENOEXEC)
}

/// The interpreter line of a `#!` script (after the `#!`), as Linux splits
/// it: the interpreter, then everything after the following blanks as one
/// argument.
fn parse_shebang(rest: &[u8]) -> Option<Executable> {
    let line = rest.split(|&b| b == b'\n').next()?;
    let line = trim(line);
    let split = line.iter().position(|&b| b == b' ' || b == b'\t');
    let (interp, arg) = match split {
        Some(i) => (&line[..i], trim(&line[i..])),
        None => (line, &[][..]),
    };
    if interp.is_empty() {
        return None;
    }
    Some(Executable::Script {
        interpreter: PathBuf::from(OsStr::from_bytes(interp)),
        arg: (!arg.is_empty()).then(|| arg.to_vec()),
    })
}

fn trim(s: &[u8]) -> &[u8] {
    let blank = |b: &u8| *b == b' ' || *b == b'\t' || *b == b'\r';
    let start = s.iter().position(|b| !blank(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !blank(b)).map_or(start, |e| e + 1);
    &s[start..end]
}

/// Follows `#!` lines (at most four levels, as Linux) from `path` with
/// `argv` to the ELF file to load and its argument vector: a script's
/// argv is `[interpreter, arg?, path, argv[1..]]`.
pub fn resolve(path: &Path, argv: &[Vec<u8>]) -> Result<(PathBuf, Vec<Vec<u8>>), i32> {
    let mut path = path.to_path_buf();
    let mut argv = argv.to_vec();
    for _ in 0..5 {
        match classify(&path)? {
            Executable::Elf => return Ok((path, argv)),
            Executable::Script { interpreter, arg } => {
                let mut next = vec![interpreter.as_os_str().as_bytes().to_vec()];
                next.extend(arg);
                next.push(path.as_os_str().as_bytes().to_vec());
                next.extend(argv.iter().skip(1).cloned());
                argv = next;
                path = interpreter;
            }
        }
    }
    Err(libc::ELOOP)
}

/// `execvp`'s search: a name without `/` is looked up in the directories
/// of `path_var` (an empty entry is the current directory); the first
/// executable regular file wins. `None` when there is none.
pub fn find_in_path(name: &OsStr, path_var: Option<&OsStr>) -> Option<PathBuf> {
    let default = OsStr::new("/usr/local/bin:/usr/bin:/bin");
    let dirs = path_var.unwrap_or(default);
    dirs.as_bytes().split(|&b| b == b':').find_map(|dir| {
        let dir = if dir.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(dir))
        };
        let candidate = dir.join(name);
        let meta = std::fs::metadata(&candidate).ok()?;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(candidate)
    })
}

/// Reads a guest's NULL-terminated array of string pointers with `read_ptr`
/// and `read_str` (at most `limit` entries).
pub fn read_string_array(
    mut addr: u64,
    limit: usize,
    read_ptr: impl Fn(u64) -> Option<u64>,
    read_str: impl Fn(u64) -> Option<Vec<u8>>,
) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    if addr == 0 {
        return Some(out);
    }
    loop {
        let p = read_ptr(addr)?;
        if p == 0 {
            return Some(out);
        }
        if out.len() >= limit {
            return None;
        }
        out.push(read_str(p)?);
        addr += 8;
    }
}

/// Hidden `lard run` options lard passes to the lard an `execve` starts
/// (they are not for users, and never copied from one lard to the next).
pub const HIDDEN_OPTIONS: [&str; 5] = [
    "--process",
    "--argv0",
    "--report-fd",
    "--options-dir",
    "--sigmask",
];

/// The options of this `lard run` to pass on to the lard of an exec'd
/// program: `args` is lard's command line after `run`, up to the guest
/// (exclusive). Hidden options, a final `--`, `--record-trace` (the trace
/// is the first process's) and `--gdb` (gdb debugs the first process) are
/// left out.
pub fn inherited_options(args: &[std::ffi::OsString]) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for a in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let b = a.as_bytes();
        let name = b.split(|&c| c == b'=').next().unwrap_or(b);
        let hidden = HIDDEN_OPTIONS.iter().any(|h| h.as_bytes() == name);
        if hidden || name == b"--record-trace" || name == b"--gdb" {
            skip_value = !b.contains(&b'=');
            continue;
        }
        out.push(a.clone());
    }
    if out.last().is_some_and(|a| a == "--") {
        out.pop();
    }
    out
}

/// Replaces this process by `lard run OPTIONS --process ... -- PROGRAM
/// ARGS` for `req` (argv[0] is passed as `--argv0`); returns only on
/// failure. `report_fd` is the descriptor reports go to (kept open
/// across the exec), `options_dir` the directory relative option paths
/// were given in.
pub fn exec_lard(
    lard: &Path,
    options: &[std::ffi::OsString],
    identity: &Identity,
    report_fd: Option<i32>,
    options_dir: &Path,
    req: &ExecRequest,
) -> std::io::Error {
    let mut argv: Vec<Vec<u8>> = vec![b"lard".to_vec(), b"run".to_vec()];
    argv.extend(options.iter().map(|o| o.as_bytes().to_vec()));
    argv.push(format!("--process={}", identity.encode()).into_bytes());
    if let Some(a0) = req.argv.first() {
        let mut o = b"--argv0=".to_vec();
        o.extend_from_slice(a0);
        argv.push(o);
    }
    if let Some(fd) = report_fd {
        // SAFETY: fcntl on a descriptor this process owns.
        unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
        argv.push(format!("--report-fd={fd}").into_bytes());
    }
    let mut dir = b"--options-dir=".to_vec();
    dir.extend_from_slice(options_dir.as_os_str().as_bytes());
    argv.push(dir);
    argv.push(format!("--sigmask={}", req.sigmask).into_bytes());
    argv.push(b"--".to_vec());
    argv.push(req.path.as_os_str().as_bytes().to_vec());
    argv.extend(req.argv.iter().skip(1).cloned());
    // Every signal stays blocked across the exec, pending until the new
    // lard has its own handlers (it then takes the guest's mask from
    // `--sigmask`): a signal sent in between is not lost.
    crate::linux::signals::host::block_for_exec(!0);
    exec(lard, &argv, &req.envp)
}

/// Replaces this process by `req`'s program itself (`--trace-children
/// no`); returns only on failure.
pub fn exec_native(req: &ExecRequest) -> std::io::Error {
    // The exec resets handled signals to their default action; doing it
    // first means a signal that arrives before it acts as on the new
    // program instead of being taken by lard's handler and lost.
    crate::linux::signals::host::default_handled();
    crate::linux::signals::host::block_for_exec(req.sigmask);
    exec(&req.path, &req.argv, &req.envp)
}

fn exec(path: &Path, argv: &[Vec<u8>], envp: &[Vec<u8>]) -> std::io::Error {
    use std::ffi::CString;
    let cstr = |b: &[u8]| CString::new(b.to_vec()).unwrap_or_default();
    let path = cstr(path.as_os_str().as_bytes());
    let argv: Vec<CString> = argv.iter().map(|a| cstr(a)).collect();
    let envp: Vec<CString> = envp.iter().map(|e| cstr(e)).collect();
    let mut av: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    av.push(std::ptr::null());
    let mut ev: Vec<*const libc::c_char> = envp.iter().map(|e| e.as_ptr()).collect();
    ev.push(std::ptr::null());
    // SAFETY: NUL-terminated strings and NULL-terminated arrays that live
    // across the call.
    unsafe { libc::execve(path.as_ptr(), av.as_ptr(), ev.as_ptr()) };
    std::io::Error::last_os_error()
}

/// Ends this process by `signal`'s default action (so that its parent's
/// `wait` sees the signal, as it would for the guest natively); returns
/// if the default action does not end a process.
pub fn die_of(signal: i32) {
    // SAFETY: resetting a disposition, unblocking and raising a signal.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
}

/// `--report-json` and friends for this process: `%p` becomes the pid;
/// without `%p`, only the tree's first process writes the file (the
/// others' reports are on stderr).
pub fn per_process_path(path: &Path, identity: &Identity) -> Option<PathBuf> {
    let b = path.as_os_str().as_bytes();
    if b.windows(2).any(|w| w == b"%p") {
        let s = String::from_utf8_lossy(b).replace("%p", &identity.pid.to_string());
        return Some(PathBuf::from(s));
    }
    (!identity.descendant).then(|| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebang_lines_split_as_linux_does() {
        type Case<'a> = (&'a [u8], &'a str, Option<&'a [u8]>);
        let cases: &[Case] = &[
            (b"/bin/sh\n", "/bin/sh", None),
            (b" /bin/sh  \n", "/bin/sh", None),
            (b"/usr/bin/env python3\n", "/usr/bin/env", Some(b"python3")),
            (b"/bin/sh -e -x\nrest", "/bin/sh", Some(b"-e -x")),
            (b"/bin/sh\r\n", "/bin/sh", None),
            (b"/bin/bash", "/bin/bash", None),
        ];
        for (line, interp, arg) in cases {
            let got = parse_shebang(line).expect("a script");
            assert_eq!(
                got,
                Executable::Script {
                    interpreter: PathBuf::from(interp),
                    arg: arg.map(<[u8]>::to_vec)
                },
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert_eq!(parse_shebang(b"   \n"), None);
        assert_eq!(parse_shebang(b"\n/bin/sh"), None);
    }

    #[test]
    fn identities_translate_both_ways_and_survive_encoding() {
        let root = Identity {
            pid: GUEST_PID,
            ppid: 1,
            root_host: 12345,
            labelled: false,
            descendant: false,
        };
        assert_eq!(root.to_host(i64::from(GUEST_PID)), 12345);
        assert_eq!(root.to_host(-i64::from(GUEST_PID)), -12345);
        assert_eq!(root.to_host(777), 777);
        assert_eq!(root.to_host(0), 0);
        assert_eq!(root.to_host(-1), -1);
        assert_eq!(root.to_guest(12345), i64::from(GUEST_PID));
        assert_eq!(root.to_guest(777), 777);
        let child = Identity {
            pid: 777,
            ppid: GUEST_PID,
            labelled: true,
            descendant: true,
            ..root
        };
        assert_eq!(Identity::decode(&child.encode()), Some(child));
        let exec_d_root = Identity {
            labelled: true,
            ..root
        };
        assert_eq!(Identity::decode(&exec_d_root.encode()), Some(exec_d_root));
        for bad in ["", "1:2:3:1", "1:2:3:1:5", "1:2:3:1:1:1", "a:2:3:1:0"] {
            assert_eq!(Identity::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn exec_passes_on_the_users_options_only() {
        use std::ffi::OsString;
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        let cases: &[(&[&str], &[&str])] = &[
            (&["--seed", "3", "--"], &["--seed", "3"]),
            (
                &[
                    "--process=1:2:3:1",
                    "--argv0=sh",
                    "--report-fd=901",
                    "--stats",
                ],
                &["--stats"],
            ),
            (&["--record-trace", "t.bin", "--stats"], &["--stats"]),
            (&["--gdb", ":1234", "--seed", "2"], &["--seed", "2"]),
            (
                &["--record-trace=t.bin", "--detector", "canonical"],
                &["--detector", "canonical"],
            ),
            (
                &["--options-dir=/x", "--report-json", "r%p.json"],
                &["--report-json", "r%p.json"],
            ),
        ];
        for (given, kept) in cases {
            assert_eq!(inherited_options(&os(given)), os(kept), "{given:?}");
        }
    }

    #[test]
    fn json_paths_per_process() {
        let mut id = Identity {
            pid: GUEST_PID,
            ppid: 1,
            root_host: 9,
            labelled: true,
            descendant: false,
        };
        let p = Path::new("/tmp/r.%p.json");
        assert_eq!(
            per_process_path(p, &id),
            Some(PathBuf::from("/tmp/r.4000.json"))
        );
        assert_eq!(
            per_process_path(Path::new("/tmp/r.json"), &id),
            Some(PathBuf::from("/tmp/r.json"))
        );
        id.pid = 4242;
        id.descendant = true;
        assert_eq!(
            per_process_path(p, &id),
            Some(PathBuf::from("/tmp/r.4242.json"))
        );
        assert_eq!(per_process_path(Path::new("/tmp/r.json"), &id), None);
    }

    #[test]
    fn path_search_finds_executables_only() {
        let dir = std::env::temp_dir().join(format!("lard-path-{}", std::process::id()));
        let a = dir.join("a");
        let b = dir.join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("tool"), b"not executable").unwrap();
        std::fs::write(b.join("tool"), b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(a.join("dir")).unwrap();
        let var = format!("{}:{}", a.display(), b.display());
        assert_eq!(
            find_in_path(OsStr::new("tool"), Some(OsStr::new(&var))),
            Some(b.join("tool"))
        );
        assert_eq!(
            find_in_path(OsStr::new("dir"), Some(OsStr::new(&var))),
            None
        );
        assert_eq!(
            find_in_path(OsStr::new("missing"), Some(OsStr::new(&var))),
            None
        );
        assert_eq!(classify(&a.join("tool")), Err(libc::EACCES));
        assert_eq!(classify(&a.join("dir")), Err(libc::EACCES));
        assert_eq!(classify(&a.join("missing")), Err(libc::ENOENT));
        let (file, argv) = resolve(&b.join("tool"), &[b"tool".to_vec(), b"x".to_vec()]).unwrap();
        assert_eq!(file, PathBuf::from("/bin/sh"));
        let tool = b.join("tool").as_os_str().as_bytes().to_vec();
        assert_eq!(argv, vec![b"/bin/sh".to_vec(), tool, b"x".to_vec()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
