//! Set scans of the simulated caches: where a line is among a set's tags,
//! and which way LRU replacement evicts. Every cache lookup, fill and
//! eviction scans a set, a few times per simulated access, so these two
//! loops are the model's innermost ones.
//!
//! [`Scan::Avx512`] compares 8 tags (or stamps) per instruction and
//! [`Scan::Avx2`] 4, without a branch per way; [`Scan::Scalar`] is the
//! plain loop, and the form the
//! reference caches of the tests use, so the reference model checks the
//! vector form statistic by statistic (docs/lardish.md, "Tests").

/// How a cache scans its sets (chosen once, from the host CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// One way at a time.
    Scalar,
    /// Four ways per AVX2 compare (only when the CPU has AVX2).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Eight ways per AVX-512 compare (only when the CPU has AVX-512F).
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// A way's LRU key: its word's low 32 bits (stamp, kind, state; see
/// `meta`), then its index, so that the smallest key is the first way of
/// smallest stamp. Ways are at most 65,536 (`HwConfig::validate`).
#[inline(always)]
fn key(word: u64, way: usize) -> u64 {
    u64::from(word as u32) << 16 | way as u64
}

impl Scan {
    /// The widest form this CPU runs.
    pub fn host() -> Scan {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Scan::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Scan::Avx2;
            }
        }
        Scan::Scalar
    }

    /// The index of `line` among `tags` (a line is in a set at most once).
    #[inline(always)]
    pub fn position(self, tags: &[u64], line: u64) -> Option<usize> {
        match self {
            Scan::Scalar => tags.iter().position(|&t| t == line),
            // SAFETY: `Avx2` is only chosen when the CPU has AVX2 (`host`).
            #[cfg(target_arch = "x86_64")]
            Scan::Avx2 => unsafe { avx2::position(tags, line) },
            // SAFETY: `Avx512` is only chosen when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            Scan::Avx512 => unsafe { avx512::position(tags, line) },
        }
    }

    /// The replacement victim among a set's way `words`: the first way
    /// whose word's low 32 bits (its stamp; 0 for an invalid way) are
    /// smallest.
    #[inline(always)]
    pub fn lru(self, words: &[u64]) -> usize {
        match self {
            Scan::Scalar => scalar_lru(words),
            // SAFETY: `Avx2` is only chosen when the CPU has AVX2 (`host`).
            #[cfg(target_arch = "x86_64")]
            Scan::Avx2 => unsafe { avx2::lru(words) },
            // SAFETY: `Avx512` is only chosen when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            Scan::Avx512 => unsafe { avx512::lru(words) },
        }
    }
}

fn scalar_lru(words: &[u64]) -> usize {
    let (mut victim, mut least) = (0, u32::MAX);
    for (i, &m) in words.iter().enumerate() {
        if (m as u32) < least {
            least = m as u32;
            victim = i;
        }
    }
    victim
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::key;

    /// [`super::Scan::position`], 4 tags per compare.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn position(tags: &[u64], line: u64) -> Option<usize> {
        let needle = _mm256_set1_epi64x(line as i64);
        let mut i = 0;
        while i + 4 <= tags.len() {
            // SAFETY: `tags[i..i + 4]` is in bounds (loop condition);
            // unaligned loads are allowed.
            let v = unsafe { _mm256_loadu_si256(tags.as_ptr().add(i).cast()) };
            let eq = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, needle)));
            if eq != 0 {
                return Some(i + eq.trailing_zeros() as usize);
            }
            i += 4;
        }
        tags[i..].iter().position(|&t| t == line).map(|k| i + k)
    }

    /// [`super::Scan::lru`]: the smallest [`key`] of 4 ways per step.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lru(words: &[u64]) -> usize {
        let low = _mm256_set1_epi64x(0xffff_ffff);
        let four = _mm256_set1_epi64x(4);
        let mut way = _mm256_setr_epi64x(0, 1, 2, 3);
        let mut best = _mm256_set1_epi64x(i64::MAX);
        let mut i = 0;
        while i + 4 <= words.len() {
            // SAFETY: `words[i..i + 4]` is in bounds (loop condition).
            let v = unsafe { _mm256_loadu_si256(words.as_ptr().add(i).cast()) };
            // Keys are below 2^48: the signed compare orders them.
            let k = _mm256_or_si256(_mm256_slli_epi64::<16>(_mm256_and_si256(v, low)), way);
            best = _mm256_blendv_epi8(best, k, _mm256_cmpgt_epi64(best, k));
            way = _mm256_add_epi64(way, four);
            i += 4;
        }
        let mut lanes = [0u64; 4];
        // SAFETY: `lanes` is 32 bytes; unaligned stores are allowed.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), best) };
        let mut b = lanes[0].min(lanes[1]).min(lanes[2].min(lanes[3]));
        for (j, &m) in words.iter().enumerate().skip(i) {
            b = b.min(key(m, j));
        }
        (b & 0xffff) as usize
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::key;

    /// [`super::Scan::position`], 8 tags per compare.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn position(tags: &[u64], line: u64) -> Option<usize> {
        let needle = _mm512_set1_epi64(line as i64);
        let mut i = 0;
        while i + 8 <= tags.len() {
            // SAFETY: `tags[i..i + 8]` is in bounds (loop condition);
            // unaligned loads are allowed.
            let v = unsafe { _mm512_loadu_si512(tags.as_ptr().add(i).cast()) };
            let eq = _mm512_cmpeq_epi64_mask(v, needle);
            if eq != 0 {
                return Some(i + eq.trailing_zeros() as usize);
            }
            i += 8;
        }
        tags[i..].iter().position(|&t| t == line).map(|k| i + k)
    }

    /// [`super::Scan::lru`]: the smallest [`key`] of 8 ways per step.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn lru(words: &[u64]) -> usize {
        let low = _mm512_set1_epi64(0xffff_ffff);
        let eight = _mm512_set1_epi64(8);
        let mut way = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
        let mut best = _mm512_set1_epi64(-1);
        let mut i = 0;
        while i + 8 <= words.len() {
            // SAFETY: `words[i..i + 8]` is in bounds (loop condition).
            let v = unsafe { _mm512_loadu_si512(words.as_ptr().add(i).cast()) };
            let k = _mm512_or_si512(_mm512_slli_epi64::<16>(_mm512_and_si512(v, low)), way);
            best = _mm512_min_epu64(best, k);
            way = _mm512_add_epi64(way, eight);
            i += 8;
        }
        let mut b = _mm512_reduce_min_epu64(best);
        for (j, &m) in words.iter().enumerate().skip(i) {
            b = b.min(key(m, j));
        }
        (b & 0xffff) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form this CPU runs against the scalar scans, on sets of 1 to
    /// 33 ways: hits at every way, misses, ties of invalid ways (word 0,
    /// the first must win), stamps using all 32 bits.
    #[test]
    fn every_form_agrees_with_the_scalar_scan() {
        #[cfg(target_arch = "x86_64")]
        let forms: Vec<Scan> = {
            use std::arch::is_x86_feature_detected as has;
            let mut f = vec![Scan::Scalar];
            if has!("avx2") {
                f.push(Scan::Avx2);
            }
            if has!("avx512f") {
                f.push(Scan::Avx512);
            }
            f
        };
        #[cfg(not(target_arch = "x86_64"))]
        let forms = vec![Scan::Scalar];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for ways in 1..=33usize {
            for round in 0..200 {
                let tags: Vec<u64> = (0..ways).map(|i| (next() >> 8) ^ i as u64).collect();
                let words: Vec<u64> = (0..ways)
                    .map(|_| match next() % 4 {
                        0 => 0,
                        1 => next() | 0xffff_ffff,
                        _ => {
                            next()
                                & if round % 2 == 0 {
                                    0xffff_ffff_ffff_ffff
                                } else {
                                    0xff_0000_00ff
                                }
                        }
                    })
                    .collect();
                for &form in &forms {
                    for (i, &t) in tags.iter().enumerate() {
                        assert_eq!(
                            form.position(&tags, t),
                            Some(i),
                            "{form:?} {ways} ways, way {i}"
                        );
                    }
                    assert_eq!(form.position(&tags, u64::MAX - 1), None, "{form:?} miss");
                    assert_eq!(
                        form.lru(&words),
                        scalar_lru(&words),
                        "{form:?} {ways} ways: {words:x?}"
                    );
                }
            }
        }
    }
}
