/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Thread identity: the language-thread ids and which language thread each
 * kernel thread runs.  One for the whole program: liblard's own threads
 * and those of a runtime linked with it (the lard-cc runtime, cc/clock.c)
 * take their ids from the one counter and run through the one `current`,
 * so no two language threads ever share an id.  Each runtime keeps the
 * clocks of the ids it uses; an adopted kernel thread's fresh clock is set
 * up in each (docs/sdk.md, "Ids").
 */
#include "internal.h"

static uint32_t next_id = 1;  /* 0 is the main thread's */
static uint32_t main_claimed; /* 1 once id 0 has been taken */
__thread uint32_t lard__cur = LARD__NO_THREAD;

uint32_t lard__nids(void)
{
    return __atomic_load_n(&next_id, __ATOMIC_ACQUIRE);
}

uint32_t lard__id_fresh(void)
{
    return __atomic_fetch_add(&next_id, 1, __ATOMIC_ACQ_REL);
}

/* A kernel thread that runs no language thread yet becomes a fresh one:
 * the main thread (first caller, from the constructor below) gets id 0,
 * any other kernel thread a new id.  The clock is the detector's fresh
 * clock (own entry 1, others 0); the own entry is written anyway so that
 * nothing depends on that convention.  The Thread op and that WriteVC are
 * issued once per kernel thread, whichever runtime asks first. */
uint32_t lard__adopt(void)
{
    uint32_t id, zero = 0;
    if (__atomic_compare_exchange_n(&main_claimed, &zero, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
        id = 0;
    else
        id = lard__id_fresh();
    lard__fresh_clock(id);
    if (lard__adopt_hook)
        lard__adopt_hook(id);
    lard__cur = id;
    lard_thread(id);
    lard_write_vc(id, 1);
    return id;
}

void lard__run(uint32_t id)
{
    lard_thread(id);
    lard__cur = id;
}

__attribute__((constructor)) static void lard__init(void)
{
    if (lard__cur == LARD__NO_THREAD)
        lard__adopt();
}
