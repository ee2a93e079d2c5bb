// SPDX-License-Identifier: MIT OR Apache-2.0
//! Tracked program data.

use core::cell::UnsafeCell;
use core::fmt;

mod sealed {
    pub trait Sealed {}
}

/// Plain data that can live in a [`Tracked`] cell: the integer types, `f32`
/// and `f64`. Sealed: each type has a single-`mov` Tracked load and store.
pub trait Plain: Copy + sealed::Sealed + Send + 'static {
    /// One Tracked `mov` load from `p`.
    ///
    /// # Safety
    /// `p` must be valid for reads of `Self`.
    #[doc(hidden)]
    unsafe fn tracked_load(p: *const Self) -> Self;
    /// One Tracked `mov` store to `p`.
    ///
    /// # Safety
    /// `p` must be valid for writes of `Self`.
    #[doc(hidden)]
    unsafe fn tracked_store(p: *mut Self, v: Self);
}

macro_rules! plain_mov {
    ($t:ty, $class:ident, $reg:literal, $ptr:literal) => {
        impl sealed::Sealed for $t {}
        impl Plain for $t {
            #[inline(always)]
            unsafe fn tracked_load(p: *const Self) -> Self {
                let v: $t;
                core::arch::asm!(
                    ".byte 0x36",
                    concat!("mov {v", $reg, "}, ", $ptr, " ptr [{p}]"),
                    p = in(reg) p,
                    v = lateout($class) v,
                    options(nostack, preserves_flags, readonly)
                );
                v
            }
            #[inline(always)]
            unsafe fn tracked_store(p: *mut Self, v: Self) {
                core::arch::asm!(
                    ".byte 0x36",
                    concat!("mov ", $ptr, " ptr [{p}], {v", $reg, "}"),
                    p = in(reg) p,
                    v = in($class) v,
                    options(nostack, preserves_flags)
                );
            }
        }
    };
}

plain_mov!(u8, reg_byte, "", "byte");
plain_mov!(u16, reg, ":x", "word");
plain_mov!(u32, reg, ":e", "dword");
plain_mov!(u64, reg, ":r", "qword");

macro_rules! plain_via {
    ($t:ty, $u:ty, $to:expr, $from:expr) => {
        impl sealed::Sealed for $t {}
        impl Plain for $t {
            #[inline(always)]
            unsafe fn tracked_load(p: *const Self) -> Self {
                let f: fn($u) -> $t = $from;
                f(<$u>::tracked_load(p.cast()))
            }
            #[inline(always)]
            unsafe fn tracked_store(p: *mut Self, v: Self) {
                let f: fn($t) -> $u = $to;
                <$u>::tracked_store(p.cast(), f(v))
            }
        }
    };
}

plain_via!(i8, u8, |v| v as u8, |v| v as i8);
plain_via!(i16, u16, |v| v as u16, |v| v as i16);
plain_via!(i32, u32, |v| v as u32, |v| v as i32);
plain_via!(i64, u64, |v| v as u64, |v| v as i64);
plain_via!(usize, u64, |v| v as u64, |v| v as usize);
plain_via!(isize, u64, |v| v as u64, |v| v as isize);
plain_via!(f32, u32, f32::to_bits, f32::from_bits);
plain_via!(f64, u64, f64::to_bits, f64::from_bits);

/// A cell of plain program data whose accesses are **Tracked**: each
/// [`load`](Tracked::load) and [`store`](Tracked::store) is exactly one `mov`
/// with the Tracked prefix (`36`), which the LARD detector checks against
/// the access histories of its bytes and then records (Rule 1). Anything else
/// in the program is untracked: never checked, never recorded.
///
/// `Tracked<T>` is `Sync`: it is meant to be shared between threads, and it is
/// **deliberately racy plain data**. Nothing orders its accesses but the
/// program's own synchronization ([`thread::spawn`](crate::thread::spawn) /
/// `join`, [`Mutex`](crate::Mutex), [`Barrier`](crate::Barrier),
/// [`Volatile`](crate::Volatile)); two conflicting accesses from different
/// language threads that are not ordered by it are a **data race, a bug that
/// the detector reports**. A Tracked access is a plain `mov` (not atomic,
/// no fence): use it only for word-sized, naturally aligned data (which it
/// always is here, `Tracked<T>` has `T`'s alignment), where a racing access
/// reads or writes a whole value on x86-64. The accesses are issued by inline
/// assembly on a raw pointer, so the compiler sees no Rust-level access to the
/// cell; still, a racy test program is only meaningful as a test of the race
/// detector, for which this crate is made.
///
/// ```
/// use lard::Tracked;
/// static COUNTER: Tracked<u64> = Tracked::new(0);
/// COUNTER.store(COUNTER.load() + 1);     // two Tracked accesses
/// assert_eq!(COUNTER.load(), 1);
///
/// let slots: [Tracked<u32>; 4] = [const { Tracked::new(0) }; 4];
/// slots[2].store(7);
/// assert_eq!(slots.iter().map(Tracked::load).sum::<u32>(), 7);
/// ```
#[repr(transparent)]
pub struct Tracked<T: Plain> {
    value: UnsafeCell<T>,
}

// SAFETY: see the type's documentation: shared access is by design; the only
// accesses through `&Tracked<T>` are single-instruction asm loads/stores of a
// naturally aligned plain value.
unsafe impl<T: Plain> Sync for Tracked<T> {}

impl<T: Plain> Tracked<T> {
    /// A new cell holding `value` (no access is made: initialization is not
    /// an access the detector sees).
    #[inline]
    pub const fn new(value: T) -> Self {
        Tracked {
            value: UnsafeCell::new(value),
        }
    }

    /// One Tracked load: checked for races against earlier conflicting
    /// (write) accesses to the same bytes, then recorded.
    #[inline(always)]
    pub fn load(&self) -> T {
        #[cfg(test)]
        crate::shadow::on_access(self.value.get() as usize, core::mem::size_of::<T>(), false);
        // SAFETY: the cell is valid and aligned for T.
        unsafe { T::tracked_load(self.value.get()) }
    }

    /// One Tracked store: checked for races against earlier conflicting
    /// (read or write) accesses to the same bytes, then recorded.
    #[inline(always)]
    pub fn store(&self, value: T) {
        #[cfg(test)]
        crate::shadow::on_access(self.value.get() as usize, core::mem::size_of::<T>(), true);
        // SAFETY: the cell is valid and aligned for T.
        unsafe { T::tracked_store(self.value.get(), value) }
    }

    /// Untracked access through a unique reference (no other thread can
    /// access the cell meanwhile, so there is nothing to check).
    #[inline]
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// The value, consuming the cell (untracked).
    #[inline]
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }

    /// A raw pointer to the value (accesses through it are untracked).
    #[inline]
    pub const fn as_ptr(&self) -> *mut T {
        self.value.get()
    }

    /// Views a raw location as a Tracked cell, like
    /// `AtomicU64::from_ptr`: for program data living in memory the program
    /// manages itself (e.g. an object a collector moves).
    ///
    /// # Safety
    /// `p` must be valid for reads and writes of `T`, aligned, and live for
    /// `'a`; during `'a` it may be accessed only through Tracked cells, other
    /// raw pointers and this crate's history operations.
    #[inline]
    pub unsafe fn from_ptr<'a>(p: *mut T) -> &'a Tracked<T> {
        &*(p as *const Tracked<T>)
    }
}

impl<T: Plain + Default> Default for Tracked<T> {
    fn default() -> Self {
        Tracked::new(T::default())
    }
}

impl<T: Plain> From<T> for Tracked<T> {
    fn from(v: T) -> Self {
        Tracked::new(v)
    }
}

/// Formats the value read with a **Tracked load** (which the detector checks
/// like any other).
impl<T: Plain + fmt::Debug> fmt::Debug for Tracked<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Tracked").field(&self.load()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_sync<T: Sync + Send>() {}

    #[test]
    fn tracked_is_sync_and_send() {
        assert_sync::<Tracked<u64>>();
        assert_sync::<Tracked<u8>>();
        assert_sync::<Tracked<usize>>();
    }

    #[test]
    fn layout_is_transparent() {
        assert_eq!(core::mem::size_of::<Tracked<u16>>(), 2);
        assert_eq!(core::mem::align_of::<Tracked<u64>>(), 8);
    }

    macro_rules! round_trip {
        ($($t:ty = $a:expr, $b:expr);* $(;)?) => {$({
            let c: Tracked<$t> = Tracked::new($a);
            assert_eq!(c.load(), $a);
            c.store($b);
            assert_eq!(c.load(), $b);
            // neighbours untouched
            let arr: [Tracked<$t>; 3] = [Tracked::new($a), Tracked::new($a), Tracked::new($a)];
            arr[1].store($b);
            assert_eq!((arr[0].load(), arr[1].load(), arr[2].load()), ($a, $b, $a));
        })*};
    }

    #[test]
    fn loads_and_stores_round_trip() {
        round_trip! {
            u8 = 0x12, 0xfe;
            u16 = 0x1234, 0xfedc;
            u32 = 0x1234_5678, 0xfedc_ba98;
            u64 = 0x1234_5678_9abc_def0, u64::MAX - 1;
            i8 = -5, 100;
            i16 = -300, 301;
            i32 = -70000, 70001;
            i64 = i64::MIN, i64::MAX;
            usize = 3, usize::MAX;
            isize = -3, isize::MIN;
            f32 = 1.5, -2.25;
            f64 = 1e300, -0.0;
        }
    }

    #[test]
    fn u8_in_every_byte_register() {
        // Force register pressure so that sil/dil/r8b... get used somewhere.
        let cells: [Tracked<u8>; 16] = core::array::from_fn(|i| Tracked::new(i as u8));
        let vals: [u8; 16] = core::array::from_fn(|i| cells[i].load());
        for (i, c) in cells.iter().enumerate() {
            c.store(vals[15 - i]);
        }
        for (i, c) in cells.iter().enumerate() {
            assert_eq!(c.load(), (15 - i) as u8);
        }
    }

    #[test]
    fn from_ptr_and_get_mut() {
        let mut x: u64 = 5;
        let t = unsafe { Tracked::from_ptr(&mut x) };
        t.store(t.load() * 2);
        assert_eq!(x, 10);
        let mut c = Tracked::new(1u32);
        *c.get_mut() += 1;
        assert_eq!(c.into_inner(), 2);
        assert_eq!(format!("{:?}", Tracked::new(3i16)), "Tracked(3)");
    }
}
