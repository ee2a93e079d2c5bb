//! [`InlineVec`]: a list stored inside its owner up to `N` items and on the
//! heap beyond.
//!
//! Why: every byte of the variable map has a list of last reads and a
//! permission slot per core. As `Vec`s they were two heap blocks per byte,
//! i.e. two dependent host cache misses per byte checked — the largest part
//! of `Lardish::access`'s own time. Inline, a byte's metadata is one
//! contiguous block next to its neighbours' (the bytes of one access).
//! Behaviour is that of a `Vec` (same items, same order).

use std::ops::{Deref, DerefMut};

/// A value to fill unused inline slots with.
pub trait Filler: Copy {
    /// The filler.
    const FILL: Self;
}

/// A `Vec`-like list kept inline up to `N` items.
#[derive(Clone, Debug)]
pub enum InlineVec<T: Filler, const N: usize> {
    /// Up to `N` items: the first `.0` of `.1`.
    Inline(u8, [T; N]),
    /// More than `N` items (or once more than `N` were held).
    Heap(Vec<T>),
}

impl<T: Filler, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        InlineVec::Inline(0, [T::FILL; N])
    }
}

impl<T: Filler, const N: usize> InlineVec<T, N> {
    /// `n` copies of `item`.
    pub fn from_elem(item: T, n: usize) -> Self {
        if n <= N && N <= usize::from(u8::MAX) {
            InlineVec::Inline(n as u8, [item; N])
        } else {
            InlineVec::Heap(vec![item; n])
        }
    }

    /// Appends `item`.
    #[inline]
    pub fn push(&mut self, item: T) {
        match self {
            InlineVec::Inline(n, items) if usize::from(*n) < N && *n < u8::MAX => {
                items[usize::from(*n)] = item;
                *n += 1;
            }
            InlineVec::Inline(n, items) => {
                let mut v = items[..usize::from(*n)].to_vec();
                v.push(item);
                *self = InlineVec::Heap(v);
            }
            InlineVec::Heap(v) => v.push(item),
        }
    }

    /// Removes every item.
    #[inline]
    pub fn clear(&mut self) {
        match self {
            InlineVec::Inline(n, _) => *n = 0,
            InlineVec::Heap(v) => v.clear(),
        }
    }
}

impl<T: Filler, const N: usize> Deref for InlineVec<T, N> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            InlineVec::Inline(n, items) => &items[..usize::from(*n)],
            InlineVec::Heap(v) => v,
        }
    }
}

impl<T: Filler, const N: usize> DerefMut for InlineVec<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            InlineVec::Inline(n, items) => &mut items[..usize::from(*n)],
            InlineVec::Heap(v) => v,
        }
    }
}

/// Equal when the items are (inline or not).
impl<T: Filler + PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl<T: Filler + Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<'a, T: Filler, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Filler, const N: usize> FromIterator<T> for InlineVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = InlineVec::default();
        for x in iter {
            v.push(x);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Filler for u32 {
        const FILL: u32 = 0;
    }

    #[test]
    fn behaves_like_a_vec() {
        let mut a: InlineVec<u32, 2> = InlineVec::default();
        let mut b: Vec<u32> = Vec::new();
        for i in 1..6 {
            a.push(i);
            b.push(i);
            assert_eq!(&a[..], &b[..]);
            if i == 3 {
                a.clear();
                b.clear();
                assert!(a.is_empty());
            }
        }
        a[0] = 9;
        assert_eq!(&a[..], &[9, 5]);
        let c: InlineVec<u32, 2> = [1, 2, 3].into_iter().collect();
        assert_eq!(&c[..], &[1, 2, 3]);
        assert_eq!(&InlineVec::<u32, 2>::from_elem(7, 2)[..], &[7, 7]);
        assert_eq!(&InlineVec::<u32, 2>::from_elem(7, 3)[..], &[7, 7, 7]);
    }
}
