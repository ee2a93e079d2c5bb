//! The counting observer's stream hash ([`CountingObserver`]): its
//! arithmetic, and the pass of an every-access run over a batch
//! ([`count_and_sum`]), which classifies, counts and hashes the records in
//! one go — with AVX-512 eight records at a time where the CPU has it.
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

/// The pass of an every-access run over `records` as translated code wrote
/// them (no [`AccessRecord::STACK`] flag yet): each record's stack flag by
/// `stacks` (kept in registers, not written back), its class counted, and
/// its [`access_term`] with its origin's word `ow` at position key
/// `key + (i + 1)·K0` summed. The same answer on every path (tested against
/// [`count_and_sum_scalar`]).
pub(crate) fn count_and_sum(
    records: &[AccessRecord],
    stacks: &StackMap,
    ow: u64,
    key: u64,
) -> BatchSum {
    #[cfg(target_arch = "x86_64")]
    if records.len() >= 8
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
    {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { avx512::count_and_sum(records, stacks, ow, key) };
    }
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

/// The AVX-512 pass: eight records per step.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{access_term, count_and_sum_scalar, BatchSum, K0, K1, K2};
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
        let (nw, nt, ntw, ns, nsw) = (
            u64::from(nw),
            u64::from(nt),
            u64::from(ntw),
            u64::from(ns),
            u64::from(nsw),
        );
        let n = n8 as u64;
        let [t0, u0, s0] = tail.classes;
        BatchSum {
            sum: (_mm512_reduce_add_epi64(sums) as u64).wrapping_add(tail.sum),
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

    /// The dispatching pass (AVX-512 on a CPU that has it) gives the
    /// one-record-at-a-time pass's sum, last key and counts, and both give
    /// the terms and classes of the stack map's search, for batches of
    /// every length around the vector width, addresses that hit and miss
    /// the caches, and every flag combination.
    #[test]
    fn the_vector_pass_equals_the_scalar_pass_and_the_search() {
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
        let mut seed = 0x1234_5678_9abc_def1u64;
        for len in (0..40).chain([255, 256, 257, 4096]) {
            let records: Vec<AccessRecord> = (0..len)
                .map(|_| {
                    let x = next(&mut seed);
                    let addr = near[(x & 7) as usize].wrapping_add(x >> 60);
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
            let got = count_and_sum(&records, &stacks, ow, key);
            let scalar = count_and_sum_scalar(&records, &stacks, &mut stacks.cache(), ow, key);
            assert_eq!(got, scalar, "{len} records");
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
            assert_eq!(got, want, "{len} records");
        }
    }
}
