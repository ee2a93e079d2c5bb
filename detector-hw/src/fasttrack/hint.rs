//! Prefetch hints for a checked access FastTrack will visit soon, in two
//! stages (used by LARDISH's software-FastTrack cost model, which runs its
//! FastTrack over batches: `lardish::baselines`).
//!
//! Finding an access's cell needs its granule's unit word (module `units`),
//! which misses the host caches as often as the cell itself, so a one-stage
//! hint stalls on that word. Stage one ([`FastTrack::hint_unit`]) only
//! prefetches the word; stage two ([`FastTrack::hint_cell`]), some events
//! later, reads it (by then cached), finds the cell and prefetches it. Both
//! take `&self`: they never allocate a page, split a granule or touch the
//! page cache, so a hint changes no state. If the layout changes between a
//! hint and the visit (an earlier access splits or merges the granule), the
//! hint fetched a line the visit does not use: wasted, never wrong.

use super::units::{UnitPage, GRANULE};
use super::FastTrack;
use crate::detector::history_units;
use crate::event::Access;
use crate::prefetch;
use crate::shadow::PagedShadow;

impl FastTrack {
    /// Stage one: prefetches the unit word of the first granule `a` (as
    /// checked) covers, if its shadow page exists.
    #[inline]
    pub fn hint_unit(&self, a: &Access) {
        if let Some((page, g, _)) = self.hint_site(a) {
            if let Some(word) = page.unit_word(g) {
                prefetch::line(word);
            }
        }
    }

    /// Stage two: reads the unit word of the first granule `a` (as checked)
    /// covers and prefetches the cell of its first byte, if its shadow page
    /// exists.
    #[inline]
    pub fn hint_cell(&self, a: &Access) {
        if let Some((page, g, at)) = self.hint_site(a) {
            if let Some(cell) = page.cell_of(g, at) {
                prefetch::line(cell);
            }
        }
    }

    /// The existing shadow page of `a`'s first byte, its granule and the
    /// byte's offset in the granule.
    #[inline]
    fn hint_site(&self, a: &Access) -> Option<(&UnitPage, usize, usize)> {
        let (first, _) = history_units(a, self.granularity);
        let (page, off) = PagedShadow::<UnitPage>::split(first);
        let page = self.shadow.existing_page(page)?;
        Some((page, off / GRANULE, off % GRANULE))
    }
}
