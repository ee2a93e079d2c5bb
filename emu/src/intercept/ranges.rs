//! The memory a library function reads or writes on its caller's behalf
//! (guest-sdk/cc/ranges.def, the one table the lard-cc runtime shares):
//! `memcpy`'s source and destination, `strlen`'s string, `read`'s buffer.
//! Binary mode checks a call from program code as these ranged accesses
//! of the calling thread at the call (emu/src/machine/binary/calls/ranges.rs).

use crate::cpu::memory::{Memory, PAGE};
use lard_detector_hw::event::AccessKind;
use std::sync::LazyLock;

/// The table's text.
const TABLE: &str = include_str!("../../../guest-sdk/cc/ranges.def");

/// How a function's arguments (`a`, `b`, `c`: argument indices) and result
/// give the memory it touches (the shapes of guest-sdk/cc/ranges.def).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Reads `b[c]`, writes `a[c]`.
    Copy,
    /// Writes `a[b]`.
    Fill,
    /// Reads `a[b]`.
    Read,
    /// Reads `a[b*c]`.
    ReadMul,
    /// Reads and writes `a[b*c]`.
    Array,
    /// Reads `a[c]` and `b[c]`.
    MemCmp,
    /// Reads `a` up to byte `b` (inclusive) or `c` bytes.
    MemChr,
    /// Reads string `a` with its NUL.
    StrLen,
    /// Reads at most `b` bytes of string `a`, with its NUL if within.
    StrNLen,
    /// Reads string `a` up to char `b` or its NUL, inclusive.
    StrChr,
    /// Reads needle `b` with its NUL and haystack `a` to the match's end.
    StrStr,
    /// Reads strings `a` and `b` up to the first difference or NUL.
    StrCmp,
    /// As `StrCmp`, at most `c` bytes.
    StrNCmp,
    /// Reads string `b` with its NUL and writes as many bytes at `a`.
    StrCpy,
    /// Reads `min(strnlen(b, c) + 1, c)` bytes of `b`, writes `a[c]`.
    StrNCpy,
    /// Reads `a` and `b` with their NULs, writes `b` over `a`'s NUL on.
    StrCat,
    /// As `StrCat` with at most `c` bytes of `b`, and a NUL.
    StrNCat,
    /// At return: writes `result + 1` bytes at `a`.
    Print,
    /// At return: writes `min(result + 1, b)` bytes at `a`.
    PrintN,
    /// At return: writes `a[result * b]`.
    FRead,
    /// At return: a non-null result wrote string `a` with its NUL.
    FGets,
    /// At return: writes `a[result]`.
    RetWrite,
    /// At return: reads `a[result]`.
    RetRead,
    /// At return: writes `result` bytes across iovec array `a` of `b`.
    IovWrite,
    /// At return: reads `result` bytes across iovec array `a` of `b`.
    IovRead,
    /// At return: writes `result` bytes across msghdr `a`'s iovecs.
    MsgWrite,
    /// At return: reads `result` bytes across msghdr `a`'s iovecs.
    MsgRead,
}

impl Shape {
    fn parse(s: &str) -> Option<Shape> {
        Some(match s {
            "COPY" => Shape::Copy,
            "FILL" => Shape::Fill,
            "READ" => Shape::Read,
            "READ_MUL" => Shape::ReadMul,
            "ARRAY" => Shape::Array,
            "MEMCMP" => Shape::MemCmp,
            "MEMCHR" => Shape::MemChr,
            "STRLEN" => Shape::StrLen,
            "STRNLEN" => Shape::StrNLen,
            "STRCHR" => Shape::StrChr,
            "STRSTR" => Shape::StrStr,
            "STRCMP" => Shape::StrCmp,
            "STRNCMP" => Shape::StrNCmp,
            "STRCPY" => Shape::StrCpy,
            "STRNCPY" => Shape::StrNCpy,
            "STRCAT" => Shape::StrCat,
            "STRNCAT" => Shape::StrNCat,
            "PRINT" => Shape::Print,
            "PRINTN" => Shape::PrintN,
            "FREAD" => Shape::FRead,
            "FGETS" => Shape::FGets,
            "RET_WRITE" => Shape::RetWrite,
            "RET_READ" => Shape::RetRead,
            "IOV_WRITE" => Shape::IovWrite,
            "IOV_READ" => Shape::IovRead,
            "MSG_WRITE" => Shape::MsgWrite,
            "MSG_READ" => Shape::MsgRead,
            _ => return None,
        })
    }

    /// The ranges are known only when the call returns (from its result).
    pub fn at_return(self) -> bool {
        matches!(
            self,
            Shape::Print
                | Shape::PrintN
                | Shape::FRead
                | Shape::FGets
                | Shape::RetWrite
                | Shape::RetRead
                | Shape::IovWrite
                | Shape::IovRead
                | Shape::MsgWrite
                | Shape::MsgRead
        )
    }
}

/// One function of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeFn {
    /// Its symbol.
    pub name: String,
    /// How it touches memory.
    pub shape: Shape,
    /// The argument indices `a`, `b`, `c` (`None`: -1).
    pub args: [Option<u8>; 3],
}

/// The table, parsed: a line `LARD_RANGE(name, SHAPE, a, b, c)` each.
pub fn parse(text: &str) -> Result<Vec<RangeFn>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("LARD_RANGE(") else {
            continue;
        };
        let bad = |why: &str| format!("guest-sdk/cc/ranges.def:{}: {why}", n + 1);
        let inner = rest
            .strip_suffix(')')
            .ok_or_else(|| bad("no closing parenthesis"))?;
        let f: Vec<&str> = inner.split(',').map(str::trim).collect();
        let [name, shape, a, b, c] = f[..] else {
            return Err(bad("five fields expected"));
        };
        let shape = Shape::parse(shape).ok_or_else(|| bad("unknown shape"))?;
        let arg = |s: &str| -> Result<Option<u8>, String> {
            match s.parse::<i8>() {
                Ok(-1) => Ok(None),
                Ok(i @ 0..=5) => Ok(Some(i as u8)),
                _ => Err(bad("an argument index is 0 to 5, or -1")),
            }
        };
        out.push(RangeFn {
            name: name.to_string(),
            shape,
            args: [arg(a)?, arg(b)?, arg(c)?],
        });
    }
    Ok(out)
}

/// The table (guest-sdk/cc/ranges.def), by index.
pub fn table() -> &'static [RangeFn] {
    static T: LazyLock<Vec<RangeFn>> =
        LazyLock::new(|| parse(TABLE).unwrap_or_else(|e| panic!("{e}")));
    &T
}

/// The index of function `name` in [`table`].
pub fn index_of(name: &str) -> Option<u8> {
    table()
        .iter()
        .position(|f| f.name == name)
        .and_then(|i| u8::try_from(i).ok())
}

/// A range a call touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    /// First byte.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// Read or written.
    pub kind: AccessKind,
}

/// Strings are followed at most this far (a missing NUL in mapped memory
/// ends the scan; so does unmapped memory).
const MAX_STRING: u64 = 1 << 30;

/// Guest memory as the table's shapes read it.
struct Guest<'a>(&'a Memory);

impl Guest<'_> {
    /// The bytes `[addr, addr+len)` a page at a time, while mapped.
    fn pages(&self, addr: u64, len: u64) -> impl Iterator<Item = &[u8]> + '_ {
        let mut at = addr;
        let end = addr.saturating_add(len);
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let n = (PAGE - at % PAGE).min(end - at);
            let s = self.0.slice(at, n)?;
            at += n;
            Some(s)
        })
    }

    /// Bytes from `addr` up to and including the first `stop` byte, at
    /// most `max` (the scan ends early at unmapped memory).
    fn scan(&self, addr: u64, max: u64, stop: impl Fn(u8) -> bool) -> u64 {
        let mut n = 0;
        for page in self.pages(addr, max) {
            if let Some(i) = page.iter().position(|&b| stop(b)) {
                return n + i as u64 + 1;
            }
            n += page.len() as u64;
        }
        n
    }

    /// `strnlen(s, max)`: the bytes before the NUL, at most `max` (or up
    /// to unmapped memory).
    fn strnlen(&self, s: u64, max: u64) -> u64 {
        let mut n = 0;
        for page in self.pages(s, max) {
            if let Some(i) = page.iter().position(|&b| b == 0) {
                return n + i as u64;
            }
            n += page.len() as u64;
        }
        n
    }

    /// The bytes of string `s` read with its NUL: `strnlen(s, max) + 1`,
    /// at most `max`.
    fn str_len(&self, s: u64, max: u64) -> u64 {
        (self.strnlen(s, max) + 1).min(max)
    }

    /// The bytes two strings are read up to: through the first position
    /// where they differ or both end, at most `max`.
    fn cmp_len(&self, a: u64, b: u64, max: u64) -> u64 {
        let mut i = 0;
        while i < max {
            let (Some(x), Some(y)) = (self.0.slice(a + i, 1), self.0.slice(b + i, 1)) else {
                return i;
            };
            i += 1;
            if x[0] != y[0] || x[0] == 0 {
                break;
            }
        }
        i
    }

    /// The iovecs `(base, len)` of array `iov` of `n`, covering `total`
    /// bytes.
    fn iovecs(&self, iov: u64, n: u64, mut total: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for i in 0..n.min(1024) {
            if total == 0 {
                break;
            }
            let (Some(base), Some(len)) = (
                self.0.read_u64(iov + 16 * i),
                self.0.read_u64(iov + 16 * i + 8),
            ) else {
                break;
            };
            let len = len.min(total);
            out.push((base, len));
            total -= len;
        }
        out
    }
}

/// The ranges a call to `f` touches, from its arguments `args` (by
/// index) and, for shapes that act at return, its result `ret`.
pub fn touches(f: &RangeFn, args: &[u64; 3], ret: u64, mem: &Memory) -> Vec<Touch> {
    use AccessKind::{Read as R, Write as W};
    let g = Guest(mem);
    let arg = |i: usize| f.args[i].map_or(0, |j| args[usize::from(j)]);
    let (a, b, c) = (arg(0), arg(1), arg(2));
    let t = |addr: u64, len: u64, kind: AccessKind| Touch { addr, len, kind };
    let ret_len = ret as i64;
    let mut out = Vec::new();
    match f.shape {
        Shape::Copy => out.extend([t(b, c, R), t(a, c, W)]),
        Shape::Fill => out.push(t(a, b, W)),
        Shape::Read => out.push(t(a, b, R)),
        Shape::ReadMul => out.push(t(a, b.saturating_mul(c), R)),
        Shape::Array => {
            let n = b.saturating_mul(c);
            out.extend([t(a, n, R), t(a, n, W)]);
        }
        Shape::MemCmp => out.extend([t(a, c, R), t(b, c, R)]),
        Shape::MemChr => out.push(t(a, g.scan(a, c, |x| x == b as u8), R)),
        Shape::StrLen => out.push(t(a, g.str_len(a, MAX_STRING), R)),
        Shape::StrNLen => out.push(t(a, g.str_len(a, b), R)),
        Shape::StrChr => out.push(t(a, g.scan(a, MAX_STRING, |x| x == b as u8 || x == 0), R)),
        Shape::StrStr => {
            let needle = g.str_len(b, MAX_STRING);
            let hay = g.str_len(a, MAX_STRING);
            let bytes = |p: u64, n: u64| -> Vec<u8> { g.pages(p, n).flatten().copied().collect() };
            let (h, nd) = (bytes(a, hay), bytes(b, needle.saturating_sub(1)));
            let end = if nd.is_empty() {
                0
            } else {
                h.windows(nd.len())
                    .position(|w| w == nd.as_slice())
                    .map_or(hay, |i| (i + nd.len()) as u64)
            };
            out.extend([t(a, end, R), t(b, needle, R)]);
        }
        Shape::StrCmp => {
            let n = g.cmp_len(a, b, MAX_STRING);
            out.extend([t(a, n, R), t(b, n, R)]);
        }
        Shape::StrNCmp => {
            let n = g.cmp_len(a, b, c);
            out.extend([t(a, n, R), t(b, n, R)]);
        }
        Shape::StrCpy => {
            let n = g.str_len(b, MAX_STRING);
            out.extend([t(b, n, R), t(a, n, W)]);
        }
        Shape::StrNCpy => out.extend([t(b, g.str_len(b, c), R), t(a, c, W)]),
        Shape::StrCat => {
            let (d, s) = (g.str_len(a, MAX_STRING), g.str_len(b, MAX_STRING));
            out.extend([t(a, d, R), t(b, s, R), t(a + d.saturating_sub(1), s, W)]);
        }
        Shape::StrNCat => {
            let d = g.str_len(a, MAX_STRING);
            let copied = g.strnlen(b, c);
            out.extend([
                t(a, d, R),
                t(b, (copied + 1).min(c), R),
                t(a + d.saturating_sub(1), copied + 1, W),
            ]);
        }
        Shape::Print if ret_len >= 0 => out.push(t(a, ret + 1, W)),
        Shape::PrintN if ret_len >= 0 => out.push(t(a, (ret + 1).min(b), W)),
        Shape::FRead => out.push(t(a, ret.saturating_mul(b), W)),
        Shape::FGets if ret != 0 => out.push(t(a, g.str_len(a, MAX_STRING), W)),
        Shape::RetWrite if ret_len > 0 => out.push(t(a, ret, W)),
        Shape::RetRead if ret_len > 0 => out.push(t(a, ret, R)),
        Shape::IovWrite | Shape::IovRead if ret_len > 0 => {
            let kind = if f.shape == Shape::IovWrite { W } else { R };
            out.extend(g.iovecs(a, b, ret).into_iter().map(|(p, n)| t(p, n, kind)));
        }
        Shape::MsgWrite | Shape::MsgRead if ret_len > 0 => {
            // struct msghdr: msg_iov at 16, msg_iovlen at 24.
            let kind = if f.shape == Shape::MsgWrite { W } else { R };
            if let (Some(iov), Some(n)) = (mem.read_u64(a + 16), mem.read_u64(a + 24)) {
                out.extend(
                    g.iovecs(iov, n, ret)
                        .into_iter()
                        .map(|(p, n)| t(p, n, kind)),
                );
            }
        }
        _ => {}
    }
    out.retain(|r| r.len > 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::uc::prot;
    use crate::cpu::uc::Uc;

    const A: u64 = 0x10_0000;

    /// Each shape's ranges over guest memory holding `"hello\0"` at A,
    /// `"help\0"` at A+0x100, an iovec array at A+0x200 (two vectors of
    /// 4 bytes at A+0x300 and A+0x400) and a msghdr at A+0x280 pointing
    /// at it: (function, arguments, result, ranges as (offset from A,
    /// length, written)).
    #[test]
    fn every_shape_touches_what_its_function_does() {
        type Case = (&'static str, [u64; 3], u64, &'static [(u64, u64, bool)]);
        let cases: &[Case] = &[
            (
                "memcpy",
                [A + 0x500, A, 6],
                0,
                &[(0, 6, false), (0x500, 6, true)],
            ),
            (
                "bcopy",
                [A, A + 0x500, 6],
                0,
                &[(0, 6, false), (0x500, 6, true)],
            ),
            ("memset", [A, 0, 16], 0, &[(0, 16, true)]),
            ("bzero", [A, 16, 0], 0, &[(0, 16, true)]),
            (
                "memcmp",
                [A, A + 0x100, 6],
                0,
                &[(0, 6, false), (0x100, 6, false)],
            ),
            ("memchr", [A, b'l' as u64, 6], 0, &[(0, 3, false)]),
            ("memchr", [A, b'z' as u64, 6], 0, &[(0, 6, false)]),
            ("strlen", [A, 0, 0], 0, &[(0, 6, false)]),
            ("strnlen", [A, 3, 0], 0, &[(0, 3, false)]),
            ("strnlen", [A, 10, 0], 0, &[(0, 6, false)]),
            ("strchr", [A, b'e' as u64, 0], 0, &[(0, 2, false)]),
            ("strchr", [A, b'z' as u64, 0], 0, &[(0, 6, false)]),
            ("strrchr", [A, b'l' as u64, 0], 0, &[(0, 6, false)]),
            (
                "strstr",
                [A, A + 0x100, 0],
                0,
                &[(0, 6, false), (0x100, 5, false)],
            ),
            (
                "strcmp",
                [A, A + 0x100, 0],
                0,
                &[(0, 4, false), (0x100, 4, false)],
            ),
            (
                "strncmp",
                [A, A + 0x100, 2],
                0,
                &[(0, 2, false), (0x100, 2, false)],
            ),
            (
                "strcpy",
                [A + 0x500, A, 0],
                0,
                &[(0, 6, false), (0x500, 6, true)],
            ),
            (
                "strncpy",
                [A + 0x500, A, 3],
                0,
                &[(0, 3, false), (0x500, 3, true)],
            ),
            (
                "strncpy",
                [A + 0x500, A, 9],
                0,
                &[(0, 6, false), (0x500, 9, true)],
            ),
            (
                "strcat",
                [A, A + 0x100, 0],
                0,
                &[(0, 6, false), (0x100, 5, false), (5, 5, true)],
            ),
            (
                "strncat",
                [A, A + 0x100, 2],
                0,
                &[(0, 6, false), (0x100, 2, false), (5, 3, true)],
            ),
            ("qsort", [A, 4, 8], 0, &[(0, 32, false), (0, 32, true)]),
            ("fwrite", [A, 4, 3], 12, &[(0, 12, false)]),
            ("sprintf", [A, 0, 0], 5, &[(0, 6, true)]),
            ("snprintf", [A, 4, 0], 5, &[(0, 4, true)]),
            ("snprintf", [A, 4, 0], u64::MAX, &[]),
            ("fread", [A, 4, 0], 3, &[(0, 12, true)]),
            ("fgets", [A, 16, 0], A, &[(0, 6, true)]),
            ("fgets", [A, 16, 0], 0, &[]),
            ("read", [3, A, 64], 10, &[(0, 10, true)]),
            ("read", [3, A, 64], u64::MAX, &[]),
            ("write", [1, A, 64], 5, &[(0, 5, false)]),
            (
                "readv",
                [3, A + 0x200, 2],
                6,
                &[(0x300, 4, true), (0x400, 2, true)],
            ),
            ("writev", [3, A + 0x200, 2], 3, &[(0x300, 3, false)]),
            (
                "recvmsg",
                [3, A + 0x280, 0],
                8,
                &[(0x300, 4, true), (0x400, 4, true)],
            ),
        ];
        let uc = Uc::new_x86_64().expect("engine");
        let mut m = Memory::new(uc.r(), false);
        m.map(A, 2 * PAGE, prot::READ | prot::WRITE, "t").unwrap();
        m.poke(A, b"hello\0");
        m.poke(A + 0x100, b"help\0");
        for (i, base) in [A + 0x300, A + 0x400].into_iter().enumerate() {
            m.poke(A + 0x200 + 16 * i as u64, &base.to_le_bytes());
            m.poke(A + 0x208 + 16 * i as u64, &4u64.to_le_bytes());
        }
        m.poke(A + 0x280 + 16, &(A + 0x200).to_le_bytes());
        m.poke(A + 0x280 + 24, &2u64.to_le_bytes());
        for &(name, args, ret, want) in cases {
            let f = &table()[usize::from(index_of(name).unwrap())];
            let got: Vec<(u64, u64, bool)> = touches(f, &args, ret, &m)
                .iter()
                .map(|t| (t.addr - A, t.len, t.kind == AccessKind::Write))
                .collect();
            assert_eq!(got, want, "{name}{args:x?} -> {ret}");
        }
    }

    #[test]
    fn the_table_parses_and_names_each_function_once() {
        let t = parse(TABLE).unwrap();
        assert!(t.len() > 50);
        let mut names: Vec<&str> = t.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a function listed twice");
        assert!(u8::try_from(t.len()).is_ok());
        for f in &t {
            // Every shape's arguments are within what binary mode reads.
            assert!(f.args.iter().flatten().all(|&i| i < 3), "{}", f.name);
        }
    }

    #[test]
    fn bad_lines_are_refused_with_their_line() {
        for (text, why) in [
            ("LARD_RANGE(f, COPY, 0, 1)", "five fields"),
            ("\nLARD_RANGE(f, NOPE, 0, 1, 2)", ":2: unknown shape"),
            ("LARD_RANGE(f, COPY, 0, 9, 2)", "argument index"),
            ("LARD_RANGE(f, COPY, 0, 1, 2", "parenthesis"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
