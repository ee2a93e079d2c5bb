//! Reverse execution by replay from checkpoints.
//!
//! A checkpoint is a copy of the whole lard process made with `fork()` at a
//! pause of the run (copy-on-write: cheap, and exact — guest memory, CPU
//! contexts, detector state, the gdb connection's state are all process memory). The
//! process that forks stays frozen as the checkpoint, waiting on a pipe;
//! its child goes on as the live process serving gdb. To go back to
//! position P, the live process sends the nearest checkpoint at or before
//! P the settings gdb has made (breakpoints, watchpoints) and P, then exits;
//! the checkpoint forks a new live process, which runs forward from the
//! checkpoint to P and reports the stop on the same gdb connection. The
//! emulator is deterministic, so the re-executed stretch is the original.
//!
//! Output the guest already wrote is not written twice: while a replay is
//! behind the furthest position reached, the guest's writes to stdout and
//! stderr succeed without output (`Machine::quiet_output`; the descriptors
//! stay what they are, so the guest's `fstat` and `isatty` do not change
//! its course). The offsets of regular files (stdin from a file, files the
//! guest opened, lard's trace file) are put back to the checkpoint's, so a
//! replay reads and writes the same bytes; input from a pipe or terminal
//! is not replayed (docs/debugging.md). The first checkpoint's process is the one the shell
//! started: the live process hands it the final exit status.
//!
//! Checkpoints need a single-threaded lard process (fork copies one
//! thread): with a detector thread (LARDISH's worker, `--detector-thread`)
//! reverse execution is refused.

use super::hook::{HookStop, Watch};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};

/// Instructions between two periodic checkpoints, while there are fewer
/// than [`SPREAD`] of them.
pub const INTERVAL: u64 = 1 << 22;
/// From this many checkpoints on, the interval grows with their number
/// (n checkpoints: `INTERVAL * n / SPREAD`): a run of N instructions keeps
/// about `sqrt(2 * SPREAD * N / INTERVAL)` processes (≈ 130 at 10^9), and a
/// reverse step replays at most one interval.
pub const SPREAD: usize = 32;
/// A replay of more than twice this many instructions checkpoints this far
/// before its target, so that the next reverse step is short.
pub const NEAR: u64 = 1 << 16;

/// One checkpoint process.
#[derive(Clone, Copy, Debug)]
struct Checkpoint {
    pos: u64,
    pid: libc::pid_t,
    cmd: RawFd,
}

/// What a restored live process reports when it reaches its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// A step's stop (SIGTRAP).
    Step,
    /// What the forward run stopped for there (reverse-continue).
    Hit(HookStop),
    /// The start of the recorded history (reverse-continue found nothing).
    Begin,
    /// Not a stop: the scan of a reverse-continue reached where it began.
    ScanEnd,
}

/// A command to a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restore {
    /// The position to run to.
    pub target: u64,
    /// The furthest position any live process reached.
    pub high_water: u64,
    /// What to report there.
    pub report: Report,
    /// The checkpoint (its position) to replay from: a reverse-continue
    /// scans one checkpoint interval at a time, latest first; `None`: the
    /// last checkpoint at or before `target`.
    pub from: Option<u64>,
    /// gdb's breakpoints.
    pub breakpoints: Vec<u64>,
    /// gdb's watchpoints.
    pub watches: Vec<Watch>,
}

impl Restore {
    fn encode(&self) -> String {
        let report = match self.report {
            Report::Step => "step".to_string(),
            Report::Begin => "begin".into(),
            Report::ScanEnd => "scanend".into(),
            Report::Hit(HookStop::Breakpoint) => "break".into(),
            Report::Hit(HookStop::Watch { addr, write }) => {
                format!("watch:{addr}:{}", u8::from(write))
            }
            Report::Hit(_) => "step".into(),
        };
        let bps: Vec<String> = self.breakpoints.iter().map(u64::to_string).collect();
        let ws: Vec<String> = self
            .watches
            .iter()
            .map(|w| format!("{}:{}:{}", w.addr, w.len, u8::from(w.write)))
            .collect();
        format!(
            "restore {} {} {} {} b{} w{}\n",
            self.target,
            self.high_water,
            report,
            self.from.map_or("-".to_string(), |f| f.to_string()),
            bps.join(","),
            ws.join(",")
        )
    }

    fn decode(line: &str) -> Option<Restore> {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() != 7 || w[0] != "restore" {
            return None;
        }
        let report = match w[3] {
            "step" => Report::Step,
            "begin" => Report::Begin,
            "scanend" => Report::ScanEnd,
            "break" => Report::Hit(HookStop::Breakpoint),
            s => {
                let f: Vec<&str> = s.strip_prefix("watch:")?.split(':').collect();
                Report::Hit(HookStop::Watch {
                    addr: f.first()?.parse().ok()?,
                    write: *f.get(1)? == "1",
                })
            }
        };
        let list = |s: &str| -> Vec<String> {
            s.split(',')
                .filter(|x| !x.is_empty())
                .map(String::from)
                .collect()
        };
        Some(Restore {
            target: w[1].parse().ok()?,
            high_water: w[2].parse().ok()?,
            report,
            from: w[4].parse().ok(),
            breakpoints: list(w[5].strip_prefix('b')?)
                .iter()
                .filter_map(|x| x.parse().ok())
                .collect(),
            watches: list(w[6].strip_prefix('w')?)
                .iter()
                .filter_map(|x| {
                    let f: Vec<&str> = x.split(':').collect();
                    Some(Watch {
                        addr: f.first()?.parse().ok()?,
                        len: f.get(1)?.parse().ok()?,
                        write: *f.get(2)? == "1",
                    })
                })
                .collect(),
        })
    }
}

/// The checkpoints this live process knows, and the output muting of a replay.
#[derive(Debug, Default)]
pub struct Replay {
    list: Vec<Checkpoint>,
    /// The furthest position any live process reached.
    pub high_water: u64,
    /// A replay behind the furthest position: the guest's writes to stdout
    /// and stderr are dropped (`Machine::quiet_output`).
    muted: bool,
    /// Why reverse execution is not available, once known.
    pub unavailable: Option<String>,
}

/// What a checkpoint's `fork` left this process as.
pub enum Forked {
    /// The live process (go on running).
    Live,
    /// A live process restored from a checkpoint (run to the command's target).
    Restored(Restore),
}

fn threads_in_process() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count())
}

impl Replay {
    /// The position of the last checkpoint (0 if none).
    pub fn last_pos(&self) -> Option<u64> {
        self.list.last().map(|c| c.pos)
    }

    /// Instructions from the last checkpoint to the next periodic one.
    pub fn interval(&self) -> u64 {
        INTERVAL * (self.list.len() / SPREAD).max(1) as u64
    }

    /// True while a replay's output is muted.
    pub fn is_muted(&self) -> bool {
        self.muted
    }

    /// Whether checkpoints can be taken now; records why not.
    pub fn can_checkpoint(&mut self) -> bool {
        if self.unavailable.is_some() {
            return false;
        }
        if threads_in_process() > 1 {
            self.unavailable = Some(
                "not available while lard runs a detector thread (--detector lardish, --detector-thread): fork() would not copy it".into(),
            );
            return false;
        }
        true
    }

    /// Makes a checkpoint at position `pos`. Returns in the live process
    /// (the child) at once, and in a process restored from this checkpoint
    /// whenever a live process asks for one; never in the checkpoint.
    pub fn checkpoint(&mut self, pos: u64) -> Result<Forked, String> {
        let mut fds = [0; 2];
        // SAFETY: plain pipe(2) with a valid two-int buffer.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(format!("pipe: {}", std::io::Error::last_os_error()));
        }
        let (r, w) = (fds[0], fds[1]);
        // Descriptors share their file offset with the checkpoint's copy:
        // a replay puts them back where they were (the guest reads and
        // writes the same bytes again).
        let offsets = file_offsets();
        // SAFETY: getpid never fails.
        let me = unsafe { libc::getpid() };
        // SAFETY: lard is single-threaded here (checked by can_checkpoint).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        self.list.push(Checkpoint {
            pos,
            pid: me,
            cmd: w,
        });
        if pid == 0 {
            die_with_parent(me);
            // SAFETY: r is this process's copy of the pipe's read end.
            unsafe { libc::close(r) };
            return Ok(Forked::Live);
        }
        // The checkpoint: wait for commands.
        // SAFETY: r is a pipe's read end this process owns.
        let mut input = BufReader::new(unsafe { std::fs::File::from_raw_fd(r) });
        loop {
            let mut line = String::new();
            match input.read_line(&mut line) {
                Ok(0) | Err(_) => exit_now(0),
                Ok(_) => {}
            }
            reap();
            if let Some(code) = line.strip_prefix("exit ") {
                exit_now(code.trim().parse().unwrap_or(0));
            }
            let Some(cmd) = Restore::decode(&line) else {
                continue;
            };
            // SAFETY: as above.
            let child = unsafe { libc::fork() };
            if child == 0 {
                die_with_parent(me);
                drop(input);
                for &(fd, off) in &offsets {
                    // SAFETY: lseek on a descriptor this process holds.
                    unsafe { libc::lseek(fd, off, libc::SEEK_SET) };
                }
                self.high_water = cmd.high_water;
                // Everything up to the furthest position reached was output.
                self.mute();
                return Ok(Forked::Restored(cmd));
            }
        }
    }

    /// The position of the last checkpoint strictly before `pos`.
    pub fn before(&self, pos: u64) -> Option<u64> {
        self.list.iter().rev().map(|c| c.pos).find(|&p| p < pos)
    }

    /// The position of the first checkpoint.
    pub fn first_pos(&self) -> Option<u64> {
        self.list.first().map(|c| c.pos)
    }

    /// The checkpoint to replay from for `target`: the last at or before it.
    fn from(&self, target: u64) -> Option<Checkpoint> {
        self.list.iter().rev().find(|c| c.pos <= target).copied()
    }

    /// Hands `cmd` to the checkpoint it replays from and ends this live
    /// process (and the checkpoints after that one). Returns only on error.
    pub fn restore(&mut self, cmd: &Restore, pos: u64) -> String {
        let high_water = self.high_water.max(pos);
        let cmd = Restore {
            high_water,
            ..cmd.clone()
        };
        let c = match cmd.from {
            Some(p) => self.list.iter().find(|c| c.pos == p).copied(),
            None => self.from(cmd.target),
        };
        let Some(c) = c else {
            return "no checkpoint before that position".into();
        };
        // SAFETY: c.cmd is a pipe's write end inherited from the checkpoint.
        let mut pipe = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(c.cmd) });
        if let Err(e) = pipe.write_all(cmd.encode().as_bytes()) {
            return format!("checkpoint at {}: {e}", c.pos);
        }
        for later in self.list.iter().filter(|l| l.pos > c.pos) {
            // SAFETY: a checkpoint process this run made.
            unsafe { libc::kill(later.pid, libc::SIGKILL) };
        }
        exit_now(0)
    }

    /// Tells the first checkpoint (the process the shell waits for) the
    /// exit status, when this is not that process.
    pub fn relay_exit(&self, status: u8) {
        if let Some(root) = self.list.first() {
            // SAFETY: as in restore.
            let mut pipe =
                std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(root.cmd) });
            let _ = pipe.write_all(format!("exit {status}\n").as_bytes());
        }
    }

    fn mute(&mut self) {
        self.muted = true;
    }

    /// Ends the muting of output at the furthest position reached.
    pub fn unmute_at(&mut self, pos: u64) {
        if pos < self.high_water {
            return;
        }
        self.high_water = pos;
        self.muted = false;
    }
}

/// The offsets of this process's descriptors of regular files, except
/// stdout and stderr (a replay writes nothing there: their offsets move on).
fn file_offsets() -> Vec<(RawFd, i64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for e in dir.flatten() {
        let Some(fd) = e.file_name().to_str().and_then(|n| n.parse::<RawFd>().ok()) else {
            continue;
        };
        if fd == 1 || fd == 2 {
            continue;
        }
        // SAFETY: fstat and lseek on a descriptor number; a closed one fails.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
                continue;
            }
            let off = libc::lseek(fd, 0, libc::SEEK_CUR);
            if off >= 0 {
                v.push((fd, off));
            }
        }
    }
    v
}

/// A checkpoint's child dies with it (killing lard leaves nothing behind).
fn die_with_parent(parent: libc::pid_t) {
    // SAFETY: prctl with an int argument.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
    }
}

/// Collects exited children (killed live processes, older checkpoints).
fn reap() {
    // SAFETY: waitpid with WNOHANG on any child.
    while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}

/// Leaves the process now, without destructors or buffered output (the
/// state is another process's to finish).
fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process.
    unsafe { libc::_exit(code) }
}
