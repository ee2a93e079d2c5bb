//! The ownership model of von Praun and Gross (§3.2, Figure 4) and the
//! object access protocol's transitions (§4.2), as pure functions so that
//! every transition is defined once and tested from a table.
//!
//! * **Virgin**: allocated, not accessed yet. The first access makes the
//!   accessing thread the *first owner* (the paper's constructor phase has
//!   no boundary in a binary, so "constructor done" is "first access").
//! * **Exclusive**: accessed by its owner only. A foreign access *inherits*
//!   the object when the owner has terminated (the accessor becomes the
//!   owner, the state stays), and otherwise *transfers* it to the accessor,
//!   the *second owner*: while the owner is active (the paper's accessor
//!   blocks until the owner polls; lard counts it, it cannot hold a guest
//!   thread) or by *stealing* while the owner is blocked.
//! * **Exclusive2**: accessed by the second owner only. A foreign access —
//!   the first owner's included — inherits when the second owner has
//!   terminated and otherwise *revokes* ownership: the object becomes
//!   shared and its lockset starts as the accessor's locks.
//! * **SharedRead** / **SharedModified**: every access refines the lockset
//!   (intersection with the accessor's locks). A write makes the object
//!   shared-modified; a shared-modified object whose lockset is empty is an
//!   *object race* and goes to **Conflict**, which checks nothing more, so
//!   every object is reported at most once.

/// An object's ownership state (Figure 4). The order is the paper's
/// "monotonic hierarchy": an object only moves to later states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OwnershipState {
    /// Allocated, never accessed.
    Virgin,
    /// Owned by its first owner.
    Exclusive,
    /// Owned by a second owner after a transfer.
    Exclusive2,
    /// Shared, only read since it became shared: lockset refined, no races.
    SharedRead,
    /// Shared and written: the lockset must never become empty.
    SharedModified,
    /// An object race was reported: no further checks.
    Conflict,
}

impl OwnershipState {
    /// Every state in hierarchy order.
    pub const ALL: [OwnershipState; 6] = [
        OwnershipState::Virgin,
        OwnershipState::Exclusive,
        OwnershipState::Exclusive2,
        OwnershipState::SharedRead,
        OwnershipState::SharedModified,
        OwnershipState::Conflict,
    ];

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            OwnershipState::Virgin => "virgin",
            OwnershipState::Exclusive => "exclusive",
            OwnershipState::Exclusive2 => "exclusive2",
            OwnershipState::SharedRead => "shared-read",
            OwnershipState::SharedModified => "shared-modified",
            OwnershipState::Conflict => "conflict",
        }
    }

    /// Position in [`OwnershipState::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// True in the states that keep an owner (virgin has none yet).
    #[inline]
    pub fn is_owned(self) -> bool {
        matches!(self, OwnershipState::Exclusive | OwnershipState::Exclusive2)
    }
}

/// What the owner of an object is doing when a foreign thread accesses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnerStatus {
    /// Running (or runnable).
    Active,
    /// Blocked (a lock, a condition, a join, a futex wait).
    Blocked,
    /// Terminated.
    Terminated,
}

/// Who accesses an object, relative to its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Accessor {
    /// The current owner (or anyone, for a virgin object).
    Owner,
    /// Another thread; the owner is in the given status.
    Foreign(OwnerStatus),
}

/// What the ownership protocol did on one access (the paper's Table 3
/// incidents and Table 4 categories).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Incident {
    /// The owner's access to its object: nothing to do.
    Own,
    /// First access to a virgin object: the accessor is the first owner.
    FirstOwner,
    /// Ownership transferred to a second owner while the owner was active
    /// (the paper's "block": its accessor waits for the owner to poll).
    Transfer,
    /// Ownership transferred while the owner was blocked ("steal").
    Steal,
    /// The owner had terminated: the accessor inherits the object.
    Inherit,
    /// The second owner lost the object: it becomes shared and its lockset
    /// starts as the accessor's locks.
    Revoke,
    /// An access to a shared object: one lockset refinement.
    Lockset,
    /// An access to an object in conflict: no check.
    Unchecked,
}

impl Incident {
    /// True when the accessor becomes the object's owner.
    #[inline]
    pub fn takes_ownership(self) -> bool {
        matches!(
            self,
            Incident::FirstOwner | Incident::Transfer | Incident::Steal | Incident::Inherit
        )
    }

    /// True when the access refines (or starts) the object's lockset.
    #[inline]
    pub fn uses_lockset(self) -> bool {
        matches!(self, Incident::Revoke | Incident::Lockset)
    }
}

/// The ownership step of an access: the next state (for shared states
/// before lockset refinement decides on a conflict, see [`lockset_step`])
/// and the incident. `write` only matters when the object becomes or is
/// shared.
#[inline]
pub fn ownership_step(
    state: OwnershipState,
    who: Accessor,
    write: bool,
) -> (OwnershipState, Incident) {
    use Accessor::{Foreign, Owner};
    use OwnershipState::*;
    let shared = if write { SharedModified } else { SharedRead };
    match (state, who) {
        (Virgin, _) => (Exclusive, Incident::FirstOwner),
        (Exclusive | Exclusive2, Owner) => (state, Incident::Own),
        (Exclusive | Exclusive2, Foreign(OwnerStatus::Terminated)) => (state, Incident::Inherit),
        (Exclusive, Foreign(OwnerStatus::Active)) => (Exclusive2, Incident::Transfer),
        (Exclusive, Foreign(OwnerStatus::Blocked)) => (Exclusive2, Incident::Steal),
        (Exclusive2, Foreign(_)) => (shared, Incident::Revoke),
        (SharedRead, _) => (shared, Incident::Lockset),
        (SharedModified, _) => (SharedModified, Incident::Lockset),
        (Conflict, _) => (Conflict, Incident::Unchecked),
    }
}

/// The lockset step in a shared state: a shared-modified object whose
/// lockset became empty is in conflict (an object race, reported once).
#[inline]
pub fn lockset_step(state: OwnershipState, lockset_empty: bool) -> OwnershipState {
    if state == OwnershipState::SharedModified && lockset_empty {
        OwnershipState::Conflict
    } else {
        state
    }
}
