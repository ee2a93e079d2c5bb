/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: iteration windows (included by cc/gomp.c). */

/* ------------------------------------------------------ iteration windows */

/* The units of a static loop (its chunks, or its iterations without a
 * chunk size) and the lanes of a simd loop are language threads of their
 * own; a lard-cc build runs them in a window of W language threads by
 * default (lard-cc --lard-omp-iterations=window:W).  The k-th unit a task
 * runs in one loop runs as the language thread of slot k mod W, so unit k
 * comes after unit k - W and is concurrent with the W - 1 units before it
 * and with every unit of another task.  A simd loop with safelen(l) has a
 * window of l chained: lane j also comes after every lane up to j - l,
 * which is exactly the order safelen gives (window_chain).  Starting
 * a unit in a slot used before costs a Thread op and a tick, not a clock:
 * a task that runs many units pays W forks per loop.  Iterations W or
 * more apart on one thread are ordered — the races between them are the
 * ones a window cannot see (docs/lard-cc-openmp.md); every unit its own
 * (lard-cc --lard-omp-iterations) sees those too at a fork per unit.
 *
 * A report names a unit by the epoch of its access: the slot's note says
 * its holders from `start` on are the units at index `index`, `index +
 * step W`, ... — one tick each — and a unit that ticked itself (a release
 * in its body) gets notes of its own. */

#define WINDOW_MAX 1024

/* A unit of slot `s` started at own entry `clock`: a note naming it, and
 * (stride non-zero) the slot's later units, one tick each. */
static void window_note(const struct window *win, const struct window_slot *sl, uint64_t clock,
                        long stride)
{
    struct lardcc_unit_note n = {sl->id,
                                 clock,
                                 win->kind,
                                 win->site,
                                 (uint64_t)sl->index,
                                 (uint64_t)win->count,
                                 (uint64_t)stride};
    lardcc_note_unit(&n);
}

/* The loop's units start: `w` slots of `kind` (LARDCC_UNIT_ITERATIONS:
 * `count` iterations per unit; LARDCC_UNIT_LANE: safelen `count`); with
 * `chain`, unit k comes after every unit up to k - w. */
static void window_open(struct window *win, long w, int chain, uint64_t kind, uintptr_t site,
                        long count)
{
    win->w = w < WINDOW_MAX ? w : WINDOW_MAX;
    win->chain = chain;
    lardcc_vc_clear(&win->before);
    win->units = 0;
    win->running = -1;
    win->kind = kind;
    win->site = site;
    win->count = count;
    if (win->slot == NULL && thr.spare_slots != NULL) {
        win->slot = thr.spare_slots;
        thr.spare_slots = NULL;
    } else if (win->slot == NULL) {
        uint32_t i;
        win->slot = xmalloc(WINDOW_MAX * sizeof *win->slot);
        for (i = 0; i < WINDOW_MAX; i++)
            win->slot[i].id = LARD__NO_THREAD;
    }
}

/* The running unit ends (it stays its slot's language thread). */
static void window_leave(struct window *win, uintptr_t top)
{
    struct window_slot *sl;
    if (win->running < 0)
        return;
    sl = &win->slot[win->running];
    if (top != 0)
        lardcc_clear_stack_below(top);
    else
        lardcc_clear_dead_stack();
    if (lardcc_own(sl->id) != sl->start) {
        /* It ticked (a release): its later epochs are its own. */
        window_note(win, sl, sl->start + 1, 0);
        sl->renote = 1;
    }
    win->running = -1;
}

/* Chain: the unit now starting in its slot (whose clock holds the end of
 * the unit w before it) acquires the ends of every earlier unit up to
 * there — `before`, the previous unit's clock before its tick — and leaves
 * its own clock before its tick for the next; then it ticks, so that its
 * accesses come after what the next unit acquires. */
static void window_chain(struct window *win)
{
    lardcc_acquire_vc(&win->before);
    lardcc_vc_copy(&win->before, lardcc_my_clock());
    lardcc_tick();
}

/* The next unit, whose first iteration variable is `index`, starts on
 * this kernel thread; `top`: the implicit task's frames, whose private
 * copies its units share (0: only the dead frames below the caller). */
static void window_next(struct window *win, long index, uintptr_t top)
{
    unsigned long k = win->units++;
    long s = (long)(k % (unsigned long)win->w);
    struct window_slot *sl = &win->slot[s];
    struct task *me = current_task();
    uint32_t prev = win->running >= 0 ? win->slot[win->running].id : LARD__NO_THREAD;
    window_leave(win, top);
    if (k == 0) {
        win->creator = lardcc_me();
        win->first = index;
        win->step = 0;
    } else if (k == 1) {
        win->step = index - win->first;
    }
    sl->index = index;
    if (sl->id == LARD__NO_THREAD) {
        sl->id = lardcc_id_alloc(lardcc_clock(win->creator));
        if (k == 0)
            lardcc_tick(); /* the creator, after its first fork */
        lardcc_switch(sl->id);
        if (win->chain)
            window_chain(win);
        sl->start = lardcc_own(sl->id);
        sl->renote = k == 0; /* the step is not known yet */
        window_note(win, sl, sl->start, k == 0 ? 0 : win->step * win->w);
    } else {
        if (win->chain) {
            lardcc_switch(sl->id);
            window_chain(win);
            sl->start = lardcc_own(sl->id);
        } else {
            sl->start = lardcc_switch_tick(sl->id);
        }
        if (sl->renote) {
            sl->renote = 0;
            window_note(win, sl, sl->start, win->step * win->w);
        }
    }
    /* While its task has thread-bound state, a unit comes after the
     * previous ones. */
    if (thread_bound(me)) {
        lardcc_acquire_vc(&me->units_fin);
        if (prev != LARD__NO_THREAD)
            lardcc_acquire_vc(lardcc_clock(prev));
    }
    win->running = s;
}

/* The loop ends: every slot's clock joins `fin` (and, while the task has
 * thread-bound state, its units' ends), its id is retired — or, with
 * `keep`, stays there — and the thread continues as the creator. */
static void window_close(struct window *win, struct lardcc_dvc *fin, uintptr_t top,
                         struct kept_units *keep)
{
    struct task *me = current_task();
    long s, used = win->units < (unsigned long)win->w ? (long)win->units : win->w;
    if (win->units == 0)
        return;
    window_leave(win, top);
    for (s = 0; s < used; s++) {
        struct window_slot *sl = &win->slot[s];
        uint64_t final = lardcc_own(sl->id);
        lardcc_dvc_join(fin, lardcc_clock(sl->id));
        if (thread_bound(me))
            lardcc_vc_join(&me->units_fin, lardcc_clock(sl->id));
        if (keep != NULL) {
            kept_add(keep, sl->id);
        } else {
            lardcc_id_drop_clock(sl->id);
            lardcc_id_retire(sl->id, final);
        }
        sl->id = LARD__NO_THREAD;
    }
    win->units = 0;
    lardcc_switch(win->creator);
}
