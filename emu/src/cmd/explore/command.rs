//! The `lard run` command lines of `lard explore`: one list of words per
//! run, used both to start the run and, as shell words, to print the
//! command that replays it.

pub use crate::cmd::shell_quote;
use std::path::Path;

/// How explore's runs choose their schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// `--sched pct --pct-depth depth`, with the first run's steps as K.
    Pct {
        /// The bug depth D.
        depth: u32,
    },
    /// `--sched random`.
    Random,
}

impl Strategy {
    /// The name in reports (`pct` or `random`).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Pct { .. } => "pct",
            Strategy::Random => "random",
        }
    }
}

/// What makes one run's schedule: everything its replay command needs.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// The policy.
    pub strategy: Strategy,
    /// `--pct-steps` (PCT only).
    pub steps: u64,
    /// `--quantum`.
    pub quantum: u64,
    /// `--seed`.
    pub seed: u64,
}

/// The words of a `lard run` command (after `lard`), without the program.
#[derive(Clone, Debug, Default)]
pub struct RunWords {
    /// Options that fix the run's behaviour (replayed).
    pub schedule: Vec<String>,
    /// `--max-insns`, `--timeout`: limits (replayed for the findings they
    /// cause).
    pub limits: Vec<String>,
}

impl RunWords {
    /// The first run: lard run's default schedule.
    pub fn first(realtime: u64) -> RunWords {
        RunWords {
            schedule: vec!["--realtime-start".into(), realtime.to_string()],
            limits: Vec::new(),
        }
    }

    /// A run under `s`.
    pub fn of(s: &Schedule, realtime: u64) -> RunWords {
        let mut w: Vec<String> = vec!["--sched".into(), s.strategy.name().into()];
        if let Strategy::Pct { depth } = s.strategy {
            w.extend([
                "--pct-depth".into(),
                depth.to_string(),
                "--pct-steps".into(),
                s.steps.max(1).to_string(),
            ]);
        }
        w.extend([
            "--quantum".into(),
            s.quantum.to_string(),
            "--seed".into(),
            s.seed.to_string(),
            "--realtime-start".into(),
            realtime.to_string(),
        ]);
        RunWords {
            schedule: w,
            limits: Vec::new(),
        }
    }

    /// Adds a limit option with its value.
    pub fn limit(&mut self, option: &str, value: String) {
        self.limits.push(option.into());
        self.limits.push(value);
    }
}

/// The shell command `LARD run WORDS GUEST ARGS`.
pub fn command_line(lard: &str, words: &[String], guest: &Path, args: &[String]) -> String {
    let guest = guest.to_string_lossy();
    std::iter::once(lard)
        .chain(std::iter::once("run"))
        .chain(words.iter().map(String::as_str))
        .chain(std::iter::once(guest.as_ref()))
        .chain(args.iter().map(String::as_str))
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_commands_are_shell_words() {
        let s = Schedule {
            strategy: Strategy::Pct { depth: 3 },
            steps: 56,
            quantum: 20,
            seed: 7,
        };
        let w = RunWords::of(&s, 1_000);
        let cmd = command_line(
            "lard",
            &w.schedule,
            Path::new("./a b"),
            &["x".into(), "it's".into()],
        );
        assert_eq!(
            cmd,
            "lard run --sched pct --pct-depth 3 --pct-steps 56 --quantum 20 --seed 7 \
             --realtime-start 1000 './a b' x 'it'\\''s'"
        );
    }
}
