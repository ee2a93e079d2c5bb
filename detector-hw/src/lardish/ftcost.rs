//! The FastTrack cost: instructions our FastTrack ([`crate::fasttrack`])
//! executes per check path, measured with callgrind (`bench/ft_cost.py`
//! over `examples/ft_cost.rs`; derivation and numbers in `docs/lardish.md`,
//! "The FastTrack cost").
//!
//! It is the one price of the FastTrack algorithm: the software-FastTrack
//! cost model charges it for every checked access, and LARDISH's software
//! checks, software ReadVC/WriteVC and ClearHistory/CopyHistory charge the
//! same numbers plus only LARDISH's transition cost (RADISH §6: "There is no
//! transition cost when simulating FastTrack alone").

use crate::event::AccessKind;
use crate::fasttrack::{FtPath, FtWork};

/// Shadow bytes per data byte of the modelled FastTrack: two epochs (a
/// 4-byte thread, an 8-byte clock and an 8-byte PC each), the per-byte cell
/// of RADISH-style software FastTrack. The model's figure, not the host
/// layout of [`crate::fasttrack`] (32-byte packed cells, which change no
/// modelled traffic).
pub const MODELLED_SHADOW_CELL_BYTES: u64 = 40;

/// Bytes of one read vector clock entry of the modelled FastTrack: a
/// 4-byte thread, an 8-byte clock and an 8-byte PC, padded (the host
/// layout of [`crate::fasttrack`] packs thread and PC in one word).
pub const MODELLED_READ_ENTRY_BYTES: u64 = 24;

/// Instructions per presence-bitmap word scanned by a history operation:
/// load the word, test it, branch, advance the index, compare and branch
/// (the loop of a scan that skips empty words; the work per set bit is
/// part of `clear_location`/`copy_location`). Counted from the loop, not
/// measured: our FastTrack walks its shadow pages instead.
pub const HISTORY_WORD_INSTRUCTIONS: u32 = 5;

/// What one ClearHistory or CopyHistory finds: the software manager's work
/// (docs/lardish.md, "ClearHistory / CopyHistory").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistoryWork {
    /// CopyHistory (else ClearHistory).
    pub copy: bool,
    /// Presence-structure words scanned: summary words and the presence
    /// words of pages holding a history (both regions of a copy).
    pub words: u64,
    /// Source locations holding a history, copied onto the destination.
    pub copied: u64,
    /// Locations whose history is cleared: every history of a cleared
    /// region; of a copy, destination histories whose source has none.
    pub cleared: u64,
}

/// Measured instructions of each FastTrack path (defaults: the measurement
/// of `bench/ft_cost.py` on this tree; `[fasttrack]` keys override them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FtCost {
    /// Per checked access: entry, thread clock lookup, shadow page lookup,
    /// race collection.
    pub access: u32,
    /// Per shadow cell visited (one per access unit), indexed like
    /// [`FtPath::ALL`].
    pub cell: [u32; 6],
    /// Per read vector clock entry visited by a read of a read-shared cell.
    pub read_shared_entry: u32,
    /// Per read vector clock entry checked by a write after read-shared.
    pub write_shared_entry: u32,
    /// Per ClearHistory, besides its locations.
    pub clear_op: u32,
    /// Per location cleared.
    pub clear_location: u32,
    /// Per CopyHistory, besides its locations.
    pub copy_op: u32,
    /// Per location copied.
    pub copy_location: u32,
    /// Per presence-bitmap word (64 data bytes) a history operation scans
    /// to find the histories that exist.
    pub history_word: u32,
    /// Per ReadVC/WriteVC/Thread.
    pub vc_op: u32,
    /// Shadow bytes per data byte (FastTrack's cell; LARDISH's variable map
    /// holds the same records).
    pub shadow_bytes: u64,
    /// Bytes per read vector clock entry.
    pub entry_bytes: u64,
}

impl Default for FtCost {
    /// `bench/ft_cost.py` (callgrind, 2,000 rounds per scenario) on the
    /// release build of this tree; see `docs/lardish.md`.
    fn default() -> Self {
        FtCost {
            access: 224,
            cell: [74, 105, 240, 122, 70, 137],
            read_shared_entry: 5,
            write_shared_entry: 30,
            clear_op: 126,
            clear_location: 12,
            copy_op: 904,
            copy_location: 224,
            history_word: HISTORY_WORD_INSTRUCTIONS,
            vc_op: 134,
            shadow_bytes: MODELLED_SHADOW_CELL_BYTES,
            entry_bytes: MODELLED_READ_ENTRY_BYTES,
        }
    }
}

impl FtCost {
    /// Instructions of one checked access that did `w`: per shadow cell
    /// it visited (an access unit stands for its bytes: an aligned 8-byte
    /// access to a location always accessed 8 bytes wide visits one cell),
    /// not per byte.
    #[inline]
    pub fn access_instructions(&self, w: &FtWork, kind: AccessKind) -> u64 {
        if w.total_cells() == 0 {
            return 0;
        }
        let mut n = u64::from(self.access);
        for (units, per) in w.units.iter().zip(self.cell) {
            n += u64::from(*units) * u64::from(per);
        }
        let per_entry = match kind {
            AccessKind::Read => self.read_shared_entry,
            AccessKind::Write => self.write_shared_entry,
        };
        n + u64::from(w.unit_entries) * u64::from(per_entry)
    }

    /// Instructions of checking one more location with `readers` last reads
    /// (a software check covers its whole metadata line, RADISH §4.5): the
    /// write check, which compares the last write and every last read.
    #[inline]
    pub fn location_check_instructions(&self, readers: usize) -> u64 {
        if readers <= 1 {
            u64::from(self.cell[FtPath::Write as usize])
        } else {
            u64::from(self.cell[FtPath::WriteShared as usize])
                + readers as u64 * u64::from(self.write_shared_entry)
        }
    }

    /// Instructions of a ClearHistory or CopyHistory that did `w`: the
    /// operation, the presence words scanned, and each history that exists
    /// copied or cleared (locations without a history cost no more than
    /// their bit).
    pub fn history_instructions(&self, w: &HistoryWork) -> u64 {
        let op = if w.copy { self.copy_op } else { self.clear_op };
        u64::from(op)
            + w.words * u64::from(self.history_word)
            + w.copied * u64::from(self.copy_location)
            + w.cleared * u64::from(self.clear_location)
    }

    /// Sets the value of `[fasttrack]` key `key`.
    pub(crate) fn set(&mut self, key: &str, n: u64) -> Result<(), String> {
        let small = || u32::try_from(n).map_err(|_| format!("value {n} too large"));
        let path = FtPath::ALL.iter().position(|p| p.name() == key);
        match key {
            "access" => self.access = small()?,
            _ if path.is_some() => self.cell[path.unwrap_or(0)] = small()?,
            "read_shared_entry" => self.read_shared_entry = small()?,
            "write_shared_entry" => self.write_shared_entry = small()?,
            "clear_op" => self.clear_op = small()?,
            "clear_location" => self.clear_location = small()?,
            "copy_op" => self.copy_op = small()?,
            "copy_location" => self.copy_location = small()?,
            "history_word" => self.history_word = small()?,
            "vc_op" => self.vc_op = small()?,
            "shadow_bytes" if n > 0 => self.shadow_bytes = n,
            "entry_bytes" if n > 0 => self.entry_bytes = n,
            "shadow_bytes" | "entry_bytes" => return Err("must be >= 1".into()),
            _ => return Err("unknown key".into()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_cost_adds_paths_and_entries() {
        let c = FtCost::default();
        let mut w = FtWork::default();
        assert_eq!(c.access_instructions(&w, AccessKind::Read), 0);
        w.cells[FtPath::ReadSameEpoch as usize] = 4;
        w.units[FtPath::ReadSameEpoch as usize] = 4;
        assert_eq!(
            c.access_instructions(&w, AccessKind::Read),
            u64::from(c.access) + 4 * u64::from(c.cell[0])
        );
        // One 4-byte unit: one cell visited.
        w.units[FtPath::ReadSameEpoch as usize] = 1;
        assert_eq!(
            c.access_instructions(&w, AccessKind::Read),
            u64::from(c.access) + u64::from(c.cell[0])
        );
        w = FtWork {
            cells: [0, 0, 0, 0, 0, 1],
            units: [0, 0, 0, 0, 0, 1],
            shared_entries: 3,
            unit_entries: 3,
        };
        assert_eq!(
            c.access_instructions(&w, AccessKind::Write),
            u64::from(c.access) + u64::from(c.cell[5]) + 3 * u64::from(c.write_shared_entry)
        );
        assert!(c.location_check_instructions(3) > c.location_check_instructions(1));
    }
}
