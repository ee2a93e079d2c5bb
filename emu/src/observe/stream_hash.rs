//! The counting observer's stream hash ([`CountingObserver`]): its
//! arithmetic, and the pass of an every-access run over a batch
//! ([`count_and_sum`]), which classifies, counts and hashes the records in
//! one go — with AVX-512 eight records at a time where the CPU has it, else
//! with AVX2 four at a time ([`Simd`]).
//!
//! The hash is a position-keyed sum: event *i* contributes a term computed
//! from its fields and its position key `key_i = key_0 + i·K0` alone, so the
//! terms of a batch can be computed in any order, or side by side in vector
//! lanes, and the (wrapping) sum is the same.
//!
//! [`CountingObserver`]: crate::observe::observer::CountingObserver

use crate::cpu::stacks::{StackCache, StackMap};
use crate::observe::observer::AccessRecord;
use crate::observe::stats::AccessTally;
use lard_detector_hw::event::Origin;

/// Odd constants of the stream hash (splitmix64 / murmur3 finalizers).
pub(crate) const K0: u64 = 0x9E37_79B9_7F4A_7C15;
pub(crate) const K1: u64 = 0xFF51_AFD7_ED55_8CCD;
pub(crate) const K2: u64 = 0xC4CE_B9FE_1A85_EC53;
pub(crate) const K3: u64 = 0xD6E8_FEB8_6659_FD93;

/// Spreads a word's bits over all of its bits (one multiplication).
#[inline]
pub(crate) fn finish(x: u64) -> u64 {
    let x = (x ^ x >> 32).wrapping_mul(K1);
    x ^ x >> 29
}

/// Folds `v` into a word being built from one event's fields.
#[inline]
pub(crate) fn fold(w: u64, v: u64) -> u64 {
    (w ^ v).wrapping_mul(K0).rotate_left(29)
}

/// The origin's share of an access's hash term: a well-spread word, the
/// same for every access of a batch (computed once per origin there).
#[inline]
pub(crate) fn origin_word(o: &Origin) -> u64 {
    finish(fold(
        u64::from(o.kthread) << 16 | u64::from(o.core),
        o.lthread.unwrap_or(u64::MAX),
    ))
}

/// The hash term of the access event at position `key` (its PC, address,
/// size, kind and flags, and its origin's word; the event's PC is the
/// access's on the batch path, and `CountingObserver::event` adds the
/// difference): two multiplications independent of each other and of
/// other events.
#[inline(always)]
pub(crate) fn access_term(r: &AccessRecord, origin: u64, key: u64) -> u64 {
    (r.addr ^ key).wrapping_mul(K1)
        ^ (r.pc ^ r.bits.rotate_left(47) ^ origin)
            .wrapping_mul(K2)
            .rotate_left(32)
}

/// What [`count_and_sum`] found in a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchSum {
    /// The wrapping sum of the records' [`access_term`]s.
    pub sum: u64,
    /// The position key of the last record (the first's is `key + K0`).
    pub key: u64,
    /// `[reads, writes]` of the Tracked, untracked non-stack and untracked
    /// stack records ([`AccessTally::classes`]).
    pub classes: [[u64; 2]; 3],
}

/// A form of the every-access pass ([`count_and_sum`]). Every form gives the
/// same answer; they differ in speed. A run uses the fastest its CPU has
/// ([`Simd::best`]) unless `lard run --simd` forces one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    /// One record at a time.
    Scalar,
    /// Four records at a time with AVX2 (and POPCNT).
    Avx2,
    /// Eight records at a time with AVX-512 F and DQ (and POPCNT).
    Avx512,
}

impl Simd {
    /// The fastest form this CPU runs: AVX-512 F+DQ, else AVX2, else the
    /// scalar loop. (The feature tests are cached by `std`.)
    pub fn best() -> Simd {
        [Simd::Avx512, Simd::Avx2]
            .into_iter()
            .find(|s| s.available())
            .unwrap_or(Simd::Scalar)
    }

    /// Whether this CPU runs the form.
    pub fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Simd::Scalar => true,
                Simd::Avx2 => has!("avx2") && has!("popcnt"),
                Simd::Avx512 => has!("avx512f") && has!("avx512dq") && has!("popcnt"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Simd::Scalar
        }
    }
}

/// The pass of an every-access run over `records` as translated code wrote
/// them (no [`AccessRecord::STACK`] flag yet): each record's stack flag by
/// `stacks` (kept in registers, not written back), its class counted, and
/// its [`access_term`] with its origin's word `ow` at position key
/// `key + (i + 1)·K0` summed, the form `simd` doing it (the scalar loop if
/// the CPU lacks it). The same answer on every path (tested against
/// [`count_and_sum_scalar`]).
pub(crate) fn count_and_sum(
    records: &[AccessRecord],
    stacks: &StackMap,
    ow: u64,
    key: u64,
    simd: Simd,
) -> BatchSum {
    #[cfg(target_arch = "x86_64")]
    match simd {
        Simd::Avx512 if records.len() >= 8 && simd.available() => {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { avx512::count_and_sum(records, stacks, ow, key) };
        }
        Simd::Avx2 if records.len() >= 4 && simd.available() => {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { avx2::count_and_sum(records, stacks, ow, key) };
        }
        _ => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    count_and_sum_scalar(records, stacks, &mut stacks.cache(), ow, key)
}

/// [`count_and_sum`] one record at a time, with the stack caches `cache`.
#[inline]
pub(crate) fn count_and_sum_scalar(
    records: &[AccessRecord],
    stacks: &StackMap,
    cache: &mut StackCache,
    ow: u64,
    mut key: u64,
) -> BatchSum {
    debug_assert!(records.len() as u64 <= AccessTally::MAX);
    let mut tally = AccessTally::default();
    let mut sum = 0u64;
    for r in records {
        debug_assert_eq!(r.bits & AccessRecord::STACK, 0);
        let stack = stacks.classify(cache, r.addr);
        let r = AccessRecord {
            bits: r.bits | (u64::from(stack) * AccessRecord::STACK),
            ..*r
        };
        tally.add_bits(r.bits);
        key = key.wrapping_add(K0);
        sum = sum.wrapping_add(access_term(&r, ow, key));
    }
    BatchSum {
        sum,
        key,
        classes: tally.classes(),
    }
}

/// The [`BatchSum`] of a vector pass over `n` records followed by the
/// scalar pass's `tail`: `sum` is the vector lanes' sum, and `counts` are
/// its writes, Tracked, Tracked writes, untracked stack and untracked stack
/// writes (popcounts of lane masks); the other counts follow from `n`.
#[cfg(target_arch = "x86_64")]
fn vector_batch_sum(n: usize, counts: [u32; 5], sum: u64, tail: BatchSum) -> BatchSum {
    let [nw, nt, ntw, ns, nsw] = counts.map(u64::from);
    let n = n as u64;
    let [t0, u0, s0] = tail.classes;
    BatchSum {
        sum: sum.wrapping_add(tail.sum),
        key: tail.key,
        classes: [
            [nt - ntw + t0[0], ntw + t0[1]],
            [
                n - nw - (nt - ntw) - (ns - nsw) + u0[0],
                nw - ntw - nsw + u0[1],
            ],
            [ns - nsw + s0[0], nsw + s0[1]],
        ],
    }
}

/// The AVX-512 pass: eight records per step.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{access_term, count_and_sum_scalar, vector_batch_sum, BatchSum, K0, K1, K2};
    use crate::cpu::stacks::{StackCache, StackMap};
    use crate::observe::observer::AccessRecord;
    use std::arch::x86_64::*;

    /// The stack caches' bounds broadcast to all lanes: (stack lo, stack
    /// len, other lo, other len).
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn broadcast(c: &StackCache) -> [__m512i; 4] {
        let [(slo, slen), (olo, olen)] = c.bounds();
        [
            _mm512_set1_epi64(slo as i64),
            _mm512_set1_epi64(slen as i64),
            _mm512_set1_epi64(olo as i64),
            _mm512_set1_epi64(olen as i64),
        ]
    }

    /// [`super::count_and_sum`] with AVX-512 F and DQ: eight records (three
    /// 64-byte loads) are split into address, PC and bits vectors by two
    /// permutes each; the stack test is two unsigned compares against the
    /// cached intervals (a lane in neither takes the scalar search); the
    /// counts are popcounts of the compare masks; the terms are
    /// [`access_term`]'s arithmetic lane by lane, with the lanes' keys eight
    /// apart. The rest (< 8 records) goes the scalar way.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and DQ.
    #[target_feature(enable = "avx512f,avx512dq,popcnt")]
    pub(super) unsafe fn count_and_sum(
        records: &[AccessRecord],
        stacks: &StackMap,
        ow: u64,
        key: u64,
    ) -> BatchSum {
        let _ = access_term; // (the arithmetic mirrored below)
        let n8 = records.len() / 8 * 8;
        let mut cache = stacks.cache();
        let [mut slo, mut slen, mut olo, mut olen] = broadcast(&cache);
        // Element j of the 24 words of 8 records is field j % 3 of record
        // j / 3: the first permute takes what it can from the first two
        // loads, the second the rest from the third.
        let (ia1, ia2) = (
            _mm512_setr_epi64(0, 3, 6, 9, 12, 15, 0, 0),
            _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 10, 13),
        );
        let (ip1, ip2) = (
            _mm512_setr_epi64(1, 4, 7, 10, 13, 0, 0, 0),
            _mm512_setr_epi64(0, 1, 2, 3, 4, 8, 11, 14),
        );
        let (ib1, ib2) = (
            _mm512_setr_epi64(2, 5, 8, 11, 14, 0, 0, 0),
            _mm512_setr_epi64(0, 1, 2, 3, 4, 9, 12, 15),
        );
        let k = |i: u64| key.wrapping_add(K0.wrapping_mul(i)) as i64;
        let mut keys = _mm512_setr_epi64(k(1), k(2), k(3), k(4), k(5), k(6), k(7), k(8));
        let step = _mm512_set1_epi64(K0.wrapping_mul(8) as i64);
        let (k1, k2) = (_mm512_set1_epi64(K1 as i64), _mm512_set1_epi64(K2 as i64));
        let owv = _mm512_set1_epi64(ow as i64);
        let write = _mm512_set1_epi64(AccessRecord::WRITE as i64);
        let tracked = _mm512_set1_epi64(AccessRecord::TRACKED as i64);
        let stack_bit = _mm512_set1_epi64(AccessRecord::STACK as i64);
        let mut sums = _mm512_setzero_si512();
        // Writes, Tracked, Tracked writes, untracked stack, untracked stack
        // writes.
        let (mut nw, mut nt, mut ntw, mut ns, mut nsw) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let base = records.as_ptr().cast::<u64>();
        let mut i = 0;
        while i < n8 {
            let p = base.add(3 * i);
            let z0 = _mm512_loadu_si512(p.cast());
            let z1 = _mm512_loadu_si512(p.add(8).cast());
            let z2 = _mm512_loadu_si512(p.add(16).cast());
            let addr = _mm512_permutex2var_epi64(_mm512_permutex2var_epi64(z0, ia1, z1), ia2, z2);
            let pc = _mm512_permutex2var_epi64(_mm512_permutex2var_epi64(z0, ip1, z1), ip2, z2);
            let bits = _mm512_permutex2var_epi64(_mm512_permutex2var_epi64(z0, ib1, z1), ib2, z2);
            let mut s = _mm512_cmplt_epu64_mask(_mm512_sub_epi64(addr, slo), slen);
            let o = _mm512_cmplt_epu64_mask(_mm512_sub_epi64(addr, olo), olen);
            if s | o != 0xff {
                // A lane in neither cached interval: the scalar test for
                // all eight (it searches and refreshes the caches).
                s = 0;
                for (j, r) in records[i..i + 8].iter().enumerate() {
                    s |= u8::from(stacks.classify(&mut cache, r.addr)) << j;
                }
                [slo, slen, olo, olen] = broadcast(&cache);
            }
            let w = _mm512_test_epi64_mask(bits, write);
            let t = _mm512_test_epi64_mask(bits, tracked);
            let us = s & !t;
            nw += w.count_ones();
            nt += t.count_ones();
            ntw += (t & w).count_ones();
            ns += us.count_ones();
            nsw += (us & w).count_ones();
            let bits = _mm512_mask_or_epi64(bits, s, bits, stack_bit);
            let a = _mm512_mullo_epi64(_mm512_xor_si512(addr, keys), k1);
            let b = _mm512_xor_si512(_mm512_xor_si512(pc, _mm512_rol_epi64::<47>(bits)), owv);
            let b = _mm512_rol_epi64::<32>(_mm512_mullo_epi64(b, k2));
            sums = _mm512_add_epi64(sums, _mm512_xor_si512(a, b));
            keys = _mm512_add_epi64(keys, step);
            i += 8;
        }
        let key8 = key.wrapping_add(K0.wrapping_mul(n8 as u64));
        let tail = count_and_sum_scalar(&records[n8..], stacks, &mut cache, ow, key8);
        vector_batch_sum(
            n8,
            [nw, nt, ntw, ns, nsw],
            _mm512_reduce_add_epi64(sums) as u64,
            tail,
        )
    }
}

/// The AVX2 pass: four records per step.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{access_term, count_and_sum_scalar, vector_batch_sum, BatchSum, K0, K1, K2};
    use crate::cpu::stacks::{StackCache, StackMap};
    use crate::observe::observer::AccessRecord;
    use std::arch::x86_64::*;

    /// The sign bit: `x ^ SIGN` turns an unsigned order into a signed one.
    const SIGN: u64 = 1 << 63;
    /// Shifting `bits` left by this puts the write flag in the sign bit.
    const WRITE_TO_SIGN: i32 = AccessRecord::WRITE.leading_zeros() as i32;
    const _: () = assert!(AccessRecord::WRITE << WRITE_TO_SIGN == SIGN);
    // `access_term`'s rotate of `bits` by 47 puts the Tracked flag in the
    // sign bit, and the stack flag where `STACK_ROT` has it.
    const _: () = assert!(AccessRecord::TRACKED.rotate_left(47) == SIGN);
    /// The stack flag rotated as `access_term` rotates `bits`.
    const STACK_ROT: u64 = AccessRecord::STACK.rotate_left(47);

    /// The stack caches' bounds broadcast to all lanes, flipped for a
    /// signed compare: (stack lo, stack len, other lo, other len), each
    /// `^ SIGN`. `addr - lo < len` unsigned is `len ^ SIGN > addr - (lo ^
    /// SIGN)` signed (subtracting `lo ^ SIGN` is subtracting `lo` and
    /// flipping the sign bit).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn broadcast(c: &StackCache) -> [__m256i; 4] {
        let [(slo, slen), (olo, olen)] = c.bounds();
        [slo, slen, olo, olen].map(|x| _mm256_set1_epi64x((x ^ SIGN) as i64))
    }

    /// The low 64 bits of `a · k` lane by lane (AVX2 has no 64-bit
    /// multiply-low), `kh` holding `k >> 32`: `lo(a)·lo(k) + (hi(a)·lo(k) +
    /// lo(a)·hi(k)) << 32`, three `vpmuludq`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn mul_lo(a: __m256i, k: __m256i, kh: __m256i) -> __m256i {
        let lo = _mm256_mul_epu32(a, k);
        let cross = _mm256_add_epi64(
            _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), k),
            _mm256_mul_epu32(a, kh),
        );
        _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(cross))
    }

    /// The sign bits of the four lanes, lane *j* in bit *j*.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn signs(x: __m256i) -> u32 {
        _mm256_movemask_pd(_mm256_castsi256_pd(x)) as u32
    }

    /// [`super::count_and_sum`] with AVX2: four records (three 32-byte
    /// loads, 12 words) are split into address, PC and bits vectors by two
    /// blends each, the lanes holding records 1, 0, 3, 2 (where the PCs
    /// fall), the addresses and bits brought there by one `vpermq` each.
    /// The stack test is two compares against the cached intervals,
    /// unsigned made signed by flipping the sign bits (a lane in neither
    /// takes the scalar search); the counts are popcounts of lane sign
    /// masks (the write flag shifted to the sign bit, the Tracked flag is
    /// there after the hash's rotate). The terms are [`access_term`]'s
    /// arithmetic lane by lane: the 64-bit multiplies from `vpmuludq`, the
    /// rotate by 32 a dword shuffle, the rotate by 47 two shifts; the lanes'
    /// keys follow the lanes' records. The rest (< 4 records) goes the
    /// scalar way.
    ///
    /// # Safety
    /// The CPU must have AVX2 and POPCNT.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn count_and_sum(
        records: &[AccessRecord],
        stacks: &StackMap,
        ow: u64,
        key: u64,
    ) -> BatchSum {
        let _ = access_term; // (the arithmetic mirrored below)
        let n4 = records.len() / 4 * 4;
        let mut cache = stacks.cache();
        let [mut slo, mut slen, mut olo, mut olen] = broadcast(&cache);
        let k = |i: u64| key.wrapping_add(K0.wrapping_mul(i)) as i64;
        // Lanes hold records 1, 0, 3, 2 of a step.
        let mut keys = _mm256_setr_epi64x(k(2), k(1), k(4), k(3));
        let step = _mm256_set1_epi64x(K0.wrapping_mul(4) as i64);
        let (k1, k1h) = (
            _mm256_set1_epi64x(K1 as i64),
            _mm256_set1_epi64x((K1 >> 32) as i64),
        );
        let (k2, k2h) = (
            _mm256_set1_epi64x(K2 as i64),
            _mm256_set1_epi64x((K2 >> 32) as i64),
        );
        let owv = _mm256_set1_epi64x(ow as i64);
        let stack_rot = _mm256_set1_epi64x(STACK_ROT as i64);
        let mut sums = _mm256_setzero_si256();
        // Writes, Tracked, Tracked writes, untracked stack, untracked stack
        // writes.
        let (mut nw, mut nt, mut ntw, mut ns, mut nsw) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let base = records.as_ptr().cast::<u64>();
        let mut i = 0;
        while i < n4 {
            // The words of records 0-3 by lane: y0 = a0 p0 b0 a1,
            // y1 = p1 b1 a2 p2, y2 = b2 a3 p3 b3.
            let p = base.add(3 * i);
            let y0 = _mm256_loadu_si256(p.cast());
            let y1 = _mm256_loadu_si256(p.add(4).cast());
            let y2 = _mm256_loadu_si256(p.add(8).cast());
            // a0 a3 a2 a1 -> a1 a0 a3 a2
            let addr = _mm256_blend_epi32::<0x0c>(_mm256_blend_epi32::<0x30>(y0, y1), y2);
            let addr = _mm256_permute4x64_epi64::<0x93>(addr);
            // p1 p0 p3 p2
            let pc = _mm256_blend_epi32::<0x30>(_mm256_blend_epi32::<0xc3>(y0, y1), y2);
            // b2 b1 b0 b3 -> b1 b0 b3 b2
            let bits = _mm256_blend_epi32::<0xc3>(_mm256_blend_epi32::<0x0c>(y0, y1), y2);
            let bits = _mm256_permute4x64_epi64::<0x39>(bits);
            let mut s = _mm256_cmpgt_epi64(slen, _mm256_sub_epi64(addr, slo));
            let o = _mm256_cmpgt_epi64(olen, _mm256_sub_epi64(addr, olo));
            if signs(_mm256_or_si256(s, o)) != 0xf {
                // A lane in neither cached interval: the scalar test for
                // all four, in order (it searches and refreshes the caches).
                let mut st = [0i64; 4];
                for (j, r) in records[i..i + 4].iter().enumerate() {
                    st[j] = -i64::from(stacks.classify(&mut cache, r.addr));
                }
                s = _mm256_setr_epi64x(st[1], st[0], st[3], st[2]);
                [slo, slen, olo, olen] = broadcast(&cache);
            }
            let rot = _mm256_or_si256(_mm256_slli_epi64::<47>(bits), _mm256_srli_epi64::<17>(bits));
            let w = signs(_mm256_slli_epi64::<WRITE_TO_SIGN>(bits));
            let t = signs(rot);
            let us = signs(s) & !t;
            nw += w.count_ones();
            nt += t.count_ones();
            ntw += (t & w).count_ones();
            ns += us.count_ones();
            nsw += (us & w).count_ones();
            // rotl(bits | STACK, 47) = rotl(bits, 47) | STACK_ROT.
            let a = mul_lo(_mm256_xor_si256(addr, keys), k1, k1h);
            let b = _mm256_xor_si256(
                _mm256_xor_si256(pc, owv),
                _mm256_or_si256(rot, _mm256_and_si256(s, stack_rot)),
            );
            // rotl(x, 32): the dwords of each lane swapped.
            let b = _mm256_shuffle_epi32::<0xb1>(mul_lo(b, k2, k2h));
            sums = _mm256_add_epi64(sums, _mm256_xor_si256(a, b));
            keys = _mm256_add_epi64(keys, step);
            i += 4;
        }
        let mut lanes = [0u64; 4];
        _mm256_storeu_si256(lanes.as_mut_ptr().cast(), sums);
        let sum = lanes.iter().fold(0u64, |s, &x| s.wrapping_add(x));
        let key4 = key.wrapping_add(K0.wrapping_mul(n4 as u64));
        let tail = count_and_sum_scalar(&records[n4..], stacks, &mut cache, ow, key4);
        vector_batch_sum(n4, [nw, nt, ntw, ns, nsw], sum, tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*).
    fn next(s: &mut u64) -> u64 {
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Every form of the pass this CPU has (AVX-512, AVX2; a form it lacks
    /// is reported and skipped) gives the one-record-at-a-time pass's sum,
    /// last key and counts, and all give the terms and classes of the stack
    /// map's search, for batches of every length around the vector widths,
    /// addresses that hit and miss the caches, stack and non-stack lanes,
    /// and every flag combination.
    #[test]
    fn the_vector_pass_equals_the_scalar_pass_and_the_search() {
        let mut forms = vec![Simd::Scalar];
        for simd in [Simd::Avx2, Simd::Avx512] {
            if simd.available() {
                forms.push(simd);
            } else {
                eprintln!("this CPU lacks {simd:?}: not tested");
            }
        }
        let mut stacks = StackMap::default();
        stacks.add(0x7000, 0x8000);
        stacks.add(0x9000, 0xa000);
        stacks.add(0x7ff0_0000_0000, 0x7ff0_0010_0000);
        let near = [
            0x1000u64,
            0x6ff8,
            0x7000,
            0x7ff8,
            0x8000,
            0x9010,
            0xa000,
            0x7ff0_0000_0100,
        ];
        // Random: a vector step rarely finds all its lanes in the two
        // cached intervals. Local: stretches of 64 records alternate
        // between one stack and one non-stack address, so most steps do.
        let local = [[0, 2], [4, 5], [6, 7], [1, 3]];
        let mut seed = 0x1234_5678_9abc_def1u64;
        for (len, is_local) in (0..40)
            .chain([255, 256, 257, 4096])
            .flat_map(|len| [(len, false), (len, true)])
        {
            let records: Vec<AccessRecord> = (0..len)
                .map(|i| {
                    let x = next(&mut seed);
                    let at = if is_local {
                        local[i / 64 % 4][(x & 1) as usize]
                    } else {
                        (x & 7) as usize
                    };
                    let addr = near[at].wrapping_add(x >> 60);
                    AccessRecord {
                        addr,
                        pc: next(&mut seed) >> 16,
                        bits: AccessRecord::pack(
                            1 << (x >> 8 & 3),
                            x >> 10 & 1 == 1,
                            x >> 11 & 3 == 0,
                            false,
                        ),
                    }
                })
                .collect();
            let (ow, key) = (next(&mut seed), next(&mut seed));
            let scalar = count_and_sum_scalar(&records, &stacks, &mut stacks.cache(), ow, key);
            for &simd in &forms {
                let got = count_and_sum(&records, &stacks, ow, key, simd);
                assert_eq!(got, scalar, "{simd:?}, {len} records, local {is_local}");
            }
            let mut want = BatchSum {
                sum: 0,
                key,
                classes: [[0; 2]; 3],
            };
            for r in &records {
                let stack = stacks.search(r.addr);
                let tracked = r.bits & AccessRecord::TRACKED != 0;
                let w = usize::from(r.bits & AccessRecord::WRITE != 0);
                let class = if tracked {
                    0
                } else if stack {
                    2
                } else {
                    1
                };
                want.classes[class][w] += 1;
                want.key = want.key.wrapping_add(K0);
                let r = AccessRecord {
                    bits: r.bits | (u64::from(stack) * AccessRecord::STACK),
                    ..*r
                };
                want.sum = want.sum.wrapping_add(access_term(&r, ow, want.key));
            }
            assert_eq!(scalar, want, "{len} records, local {is_local}");
        }
    }
}
