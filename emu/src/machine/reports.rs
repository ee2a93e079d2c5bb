//! Reports the guest asks for while it runs: `lard_note_report_count`
//! (docs/go.md), through which Go's `testing` package learns whether a
//! test raced. The races not printed yet are printed first, in Go's
//! race-report format, where lard's reports go.

use super::Machine;
use crate::linux::hostfd;
use crate::observe::go_report;

impl Machine {
    /// The guest's `lard_note_report_count(n)`: prints the races that
    /// happened since the last call and stores the number of racy accesses
    /// so far at `n` (it grows with every race).
    pub(super) fn report_count(&mut self, n: u64) {
        self.flush_accesses();
        let Some(log) = self.obs.observer.race_log() else {
            return;
        };
        let log = crate::report::reported(&log.borrow(), self).log;
        let mut text = String::new();
        for (key, pair) in &log.pairs {
            // A race that happened again since it was printed is printed
            // again: the test that made it raced too.
            if self.obs.printed_races.insert(*key, pair.count) != Some(pair.count) {
                text += &go_report::race(self, *key, pair);
            }
        }
        let count = log.dre;
        hostfd::write_report(&text, self.config.report_fd);
        // (A bad pointer is the guest's: its count stays unchanged.)
        let _ = self.cpu.mem.write(n, &count.to_le_bytes());
    }
}
