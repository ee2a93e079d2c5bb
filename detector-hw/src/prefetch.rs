//! A host cache prefetch hint: the one place the detectors ask the CPU to
//! start loading a line they will touch soon (LARDISH's batches,
//! [`crate::lardish::Lardish::events`], and its cost models' worker).
//!
//! A hint never changes what a program computes: it loads nothing into a
//! register and may be dropped by the CPU. On other architectures it is a
//! no-op.

/// Asks the host CPU to bring the cache line holding `*p` into every cache
/// level (`_MM_HINT_T0`). `p` must point into live memory (a reference
/// converted to a pointer): the hint itself never faults, but a hint for
/// freed memory would be pointless.
#[inline(always)]
pub(crate) fn line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: PREFETCHT0 is part of SSE, which every x86-64 CPU has; it
        // reads no memory architecturally and cannot fault, whatever `p` is.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`line`] for every host cache line of the `bytes` bytes from `p`
/// (one hint per 64 bytes, from `p` on).
#[inline(always)]
pub(crate) fn lines<T>(p: *const T, bytes: usize) {
    let p = p.cast::<u8>();
    let mut off = 0;
    while off < bytes {
        line(p.wrapping_add(off));
        off += 64;
    }
}
