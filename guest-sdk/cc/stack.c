/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: call stacks for race reports (docs/lard-cc.md, "Call
 * stacks").
 *
 * Every kernel thread keeps the id of its current call stack in
 * `lardcc_stack_id`.  A call stack is a node of one hash-consed tree:
 * node = (parent node, return address into the caller), node 0 is the empty
 * stack.  `__tsan_func_entry(caller_pc)` moves to the child (parent = the
 * current stack, pc = caller_pc) and remembers the parent on a per-thread
 * shadow stack; `__tsan_func_exit` moves back.  Nodes are never freed, so an
 * id names one stack for the whole run: the access stubs (access.S) hand the
 * current id to the CPU in %ecx at every Tracked access, the detector keeps
 * it beside the access's PC, and the emulator turns an id back into frames by
 * reading `lardcc_stack_nodes` -- only when it prints a report.  Nothing is
 * copied per access and nothing is looked up unless a race is reported.
 *
 * The table is open addressing on (parent, pc); a node's id is its slot.
 * Lookups are lock-free (a slot is published with a release store of
 * `used` after its fields); inserts take one lock.  When the table is 3/4
 * full, new stacks get LARDCC_STACK_UNKNOWN: the report then shows the
 * frames it has and says the rest were not recorded.  A thread deeper than
 * LARDCC_STACK_DEPTH frames stays on one node below its deepest recorded
 * frame, with pc LARDCC_STACK_GAP_PC, until it returns to that depth: the
 * report shows the access's function, a gap line, then the recorded
 * callers.
 */
#define _GNU_SOURCE
#include "rt.h"

struct lardcc_stack_node lardcc_stack_nodes[LARDCC_STACK_SLOTS];
__thread uint32_t lardcc_stack_id;

#define MASK (LARDCC_STACK_SLOTS - 1)
#define PROBES 64

static uint32_t insert_lock;
static uint32_t nodes_used;

/* Per kernel thread: the parent stack and the entry's stack pointer of each
 * open frame (frames deeper than the array are counted, not recorded). */
static __thread uint32_t depth;
static __thread uint32_t gap_parent; /* the stack below the gap node */
static __thread uint32_t parents[LARDCC_STACK_DEPTH];
static __thread uintptr_t entry_sp[LARDCC_STACK_DEPTH];

static uint32_t slot_of(uint32_t parent, uint64_t pc)
{
    uint64_t x = pc * 0x9e3779b97f4a7c15ULL ^ parent;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return (uint32_t)x & MASK;
}

static int reserved(uint32_t i)
{
    return i == 0 || i == LARDCC_STACK_UNKNOWN;
}

/* The slot holding (parent, pc), or the first free slot of its probe
 * sequence (found = 0), or UNKNOWN when the sequence is full. */
static uint32_t probe(uint32_t parent, uint64_t pc, int *found)
{
    uint32_t i = slot_of(parent, pc), n;
    for (n = 0; n < PROBES; n++, i = (i + 1) & MASK) {
        struct lardcc_stack_node *e = &lardcc_stack_nodes[i];
        if (reserved(i))
            continue;
        if (__atomic_load_n(&e->used, __ATOMIC_ACQUIRE) == 0) {
            *found = 0;
            return i;
        }
        if (e->pc == pc && e->parent == parent) {
            *found = 1;
            return i;
        }
    }
    *found = 0;
    return LARDCC_STACK_UNKNOWN;
}

uint32_t lardcc_stack_intern(uint32_t parent, uint64_t pc)
{
    int found;
    uint32_t i;
    if (parent == LARDCC_STACK_UNKNOWN)
        return LARDCC_STACK_UNKNOWN;
    i = probe(parent, pc, &found);
    if (found || i == LARDCC_STACK_UNKNOWN)
        return i;
    lard__lock(&insert_lock);
    i = probe(parent, pc, &found);
    if (!found && i != LARDCC_STACK_UNKNOWN) {
        if (nodes_used >= LARDCC_STACK_SLOTS / 4 * 3) {
            i = LARDCC_STACK_UNKNOWN;
        } else {
            struct lardcc_stack_node *e = &lardcc_stack_nodes[i];
            e->pc = pc;
            e->parent = parent;
            __atomic_store_n(&e->used, 1, __ATOMIC_RELEASE);
            nodes_used++;
        }
    }
    lard__unlock(&insert_lock);
    return i;
}

/* Function entry.  Frames whose entry stack pointer is at or below this
 * one's have returned without __tsan_func_exit (longjmp, an exception
 * unwinding uninstrumented frames): they are closed first. */
void lardcc_stack_enter(uintptr_t sp, uint64_t caller_pc)
{
    uint32_t d = depth;
    while (d > 0 && d <= LARDCC_STACK_DEPTH && entry_sp[d - 1] <= sp) {
        d--;
        lardcc_stack_id = parents[d];
    }
    if (d < LARDCC_STACK_DEPTH) {
        parents[d] = lardcc_stack_id;
        entry_sp[d] = sp;
        lardcc_stack_id = lardcc_stack_intern(lardcc_stack_id, caller_pc);
    } else if (d == LARDCC_STACK_DEPTH) {
        gap_parent = lardcc_stack_id;
        lardcc_stack_id = lardcc_stack_intern(lardcc_stack_id, LARDCC_STACK_GAP_PC);
    }
    depth = d + 1;
}

void lardcc_stack_exit(void)
{
    uint32_t d = depth;
    if (d == 0)
        return;
    d--;
    if (d < LARDCC_STACK_DEPTH)
        lardcc_stack_id = parents[d];
    else if (d == LARDCC_STACK_DEPTH)
        lardcc_stack_id = gap_parent;
    depth = d;
}

uint32_t lardcc_stack_detach(void)
{
    uint32_t saved = lardcc_stack_id;
    lardcc_stack_id = 0;
    return saved;
}

void lardcc_stack_attach(uint32_t saved)
{
    lardcc_stack_id = saved;
}
