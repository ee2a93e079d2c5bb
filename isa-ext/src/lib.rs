//! LARDx86: the ISA extension of the LARD paper (§4.1) for x86-64.
//!
//! Six operations let a language runtime tell a hardware race detector what
//! is language-level: the **Tracked** prefix marks program accesses to check,
//! **Thread** declares the language thread a kernel thread runs, **ReadVC** and
//! **WriteVC** read and write entries of the current thread's vector clock, and
//! **ClearHistory** / **CopyHistory** discard and copy access histories when
//! memory is reused or moved. The byte-level encoding, the semantics and the
//! faults are specified in `docs/lardx86.md`; every op is a no-op on ordinary
//! x86-64 processors.
//!
//! ```
//! use lard_isa_ext::{decode, encode, format, DecodedKind, Gpr, LardOp};
//!
//! let op = LardOp::ClearHistory { addr: Gpr::Rdi, len: Gpr::Rsi };
//! let bytes = encode(&op);
//! let d = decode(&bytes, 0x1000).unwrap();
//! assert_eq!(d.kind, DecodedKind::Op(op));
//! assert_eq!(format(&d), "lard.clearhistory rdi, rsi");
//! ```

#![deny(missing_docs)]

pub mod decode;
pub mod encode;
pub mod fault;
pub mod format;
pub mod known;
pub mod op;
pub mod reg;

pub use decode::{
    decode, tracked_fault, DecodeError, Decoded, DecodedKind, Step, Sweep, Swept, MAX_INSN_LEN,
};
pub use encode::{encode, encode_tracked, EncodeError, OP_LEN, SIGNATURE, TRACKED_PREFIX};
pub use fault::{check_region, LardFault, PAGE_SIZE};
pub use format::{format, LardFormatter};
pub use known::KnownLengths;
pub use op::{LardOp, OpKind};
pub use reg::Gpr;
