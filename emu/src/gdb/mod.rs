//! `lard run --gdb ADDR`: a GDB remote-protocol server (the `gdbstub`
//! crate) for the guest. All-stop: lard's threads run one at a time on one
//! host thread, so a stop stops them all. docs/debugging.md is the guide.

pub mod arch;
pub mod files;
pub mod hook;
pub mod listen;
pub mod monitor;
pub mod replay;
pub mod target;

use crate::machine::Machine;
use crate::run::{Emulator, Outcome, StopReason};
use gdbstub::common::Signal;
use gdbstub::conn::ConnectionExt;
use gdbstub::stub::{run_blocking, DisconnectReason, GdbStub, MultiThreadStopReason};
use hook::Hook;
pub use listen::ListenAddr;
use target::{LardTarget, RunEvent};

/// The race report text so far, for `monitor race`.
pub type RaceText = Box<dyn Fn(&Machine) -> String>;

/// What the monitor commands know beyond the emulator.
pub struct MonitorData {
    /// The `lard run` command line that replays this run (`monitor seed`).
    pub replay_command: String,
    /// The race report so far, when a detector runs.
    pub race_text: Option<RaceText>,
}

/// Why debugging could not start or broke off.
#[derive(Debug)]
pub enum GdbError {
    /// The address could not be listened on or accepted from.
    Listen(String),
    /// The emulator refused the debugger's hook.
    Hook(String),
}

impl std::fmt::Display for GdbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GdbError::Listen(e) => write!(f, "{e}"),
            GdbError::Hook(e) => write!(f, "cannot install the debugger's hook: {e}"),
        }
    }
}

impl std::error::Error for GdbError {}

type Conn = Box<dyn ConnectionExt<Error = std::io::Error>>;

/// The event loop gdbstub drives: run until a stop, looking for gdb's
/// interrupt at every poll of the hook.
struct EventLoop<'a>(std::marker::PhantomData<&'a ()>);

impl<'a> run_blocking::BlockingEventLoop for EventLoop<'a> {
    type Target = LardTarget<'a>;
    type Connection = Conn;
    type StopReason = MultiThreadStopReason<u64>;

    fn wait_for_stop_reason(
        target: &mut LardTarget<'a>,
        conn: &mut Conn,
    ) -> Result<
        run_blocking::Event<Self::StopReason>,
        run_blocking::WaitForStopReasonError<target::TargetFail, std::io::Error>,
    > {
        loop {
            match target.run() {
                RunEvent::Stop(r) => return Ok(run_blocking::Event::TargetStopped(r)),
                RunEvent::Poll => {
                    if conn.peek().map(|b| b.is_some()).unwrap_or(true) {
                        let byte = conn
                            .read()
                            .map_err(run_blocking::WaitForStopReasonError::Connection)?;
                        return Ok(run_blocking::Event::IncomingData(byte));
                    }
                }
            }
        }
    }

    fn on_interrupt(
        target: &mut LardTarget<'a>,
    ) -> Result<Option<MultiThreadStopReason<u64>>, target::TargetFail> {
        Ok(Some(target.interrupted()))
    }
}

/// How a debugged run ended.
pub struct Served {
    /// The run's outcome, reported as an undebugged run's.
    pub outcome: Outcome,
    /// The checkpoints: [`Replay::relay_exit`] hands lard's exit status to
    /// the process the shell waits for.
    pub replay: replay::Replay,
}

/// Waits for gdb on `addr` before the guest's first instruction, serves it
/// until the run ends or gdb goes away (detach, lost connection: the guest
/// then runs on to its end undisturbed), and returns how the run ended.
/// `announce` is told where lard listens (with the port a `:0` got).
pub fn serve(
    emu: &mut Emulator,
    addr: &ListenAddr,
    facts: &MonitorData,
    announce: &mut dyn FnMut(&str),
) -> Result<Served, GdbError> {
    let listener = addr.bind().map_err(GdbError::Listen)?;
    announce(&listener.describe());
    // A signal to lard while it waits ends the run before it starts, as
    // it would end a running one.
    let conn = match listener.accept(&mut || emu.interrupted().is_some()) {
        Ok(Some(c)) => c,
        Ok(None) => {
            let sig = emu.interrupted().unwrap_or(libc::SIGINT);
            emu.finish();
            return Ok(Served {
                outcome: Outcome::Stopped(StopReason::Signal(sig)),
                replay: replay::Replay::default(),
            });
        }
        Err(e) => return Err(GdbError::Listen(e)),
    };
    let hook = Hook::install(emu.machine_mut()).map_err(|e| GdbError::Hook(e.to_string()))?;
    // gdb sees each signal a thread is about to take, as under ptrace.
    emu.stop_for_signals();
    let mut target = LardTarget::new(emu, hook, facts);
    let gdb = GdbStub::new(conn);
    let end = gdb.run_blocking::<EventLoop<'_>>(&mut target);
    let killed = match end {
        Ok(DisconnectReason::Kill) => true,
        Ok(_) => false,
        Err(e) => {
            if !target.reported_end {
                eprintln!("lard: gdb: {e}; the guest runs on to its end");
            }
            false
        }
    };
    // gdb's kill is SIGKILL, wherever the run stopped (a fault's or a
    // deadlock's stop included), unless it had already exited.
    if killed && !matches!(target.ended, Some(Outcome::Exited(_))) {
        target.ended = Some(Outcome::Stopped(StopReason::Signal(
            Signal::SIGKILL.0 as i32,
        )));
    }
    // gdb is gone: the run goes on without stops (or checkpoints) to its end.
    target.clear_stops();
    target.gone = true;
    target.replay.unavailable = Some("gdb is gone".into());
    let out = loop {
        if let Some(out) = target.ended.take() {
            break out;
        }
        match target.run() {
            RunEvent::Poll => {}
            RunEvent::Stop(_) => {}
        }
    };
    let replay = std::mem::take(&mut target.replay);
    drop(target);
    emu.finish();
    Ok(Served {
        outcome: out,
        replay,
    })
}
