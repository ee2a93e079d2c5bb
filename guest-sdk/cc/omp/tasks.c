/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: explicit tasks, taskloop, taskwait and taskgroup
 * (included by cc/gomp.c). */

/* ---------------------------------------------------------------- tasks */

/* Where a task's creation puts it: its parent's children (taskwait), its
 * taskgroup, and the barrier phase it completes in. */
static void task_link(struct task *t, struct task *parent)
{
    t->parent = parent;
    t->team = parent->team ? parent->team : thr.cur_team;
    t->cg = thr.cur_cg;
    if (parent->implicit)
        t->slot = t->team ? (int)(__atomic_load_n(&t->team->bar.gen, __ATOMIC_ACQUIRE) & 1) : 0;
    else
        t->slot = parent->slot;
    t->group = parent->cur_group ? parent->cur_group : parent->group;
    lard__lock(&task_lock);
    push(&parent->children, &parent->nchildren, &parent->capchildren, t);
    task_ref(t);
    if (t->group) {
        push(&t->group->tasks, &t->group->n, &t->group->cap, t);
        task_ref(t);
    }
    lard__unlock(&task_lock);
}

/* Creation: the creator's clock so far happens before the task. */
static void task_fork(struct task *t)
{
    lardcc_vc_copy(&t->start_vc, lardcc_my_clock());
    lardcc_starts_pending(1); /* until it (a taskloop: every task) started */
    lardcc_tick();
}

static struct dep *dep_slot(struct task *parent, const void *addr)
{
    size_t i;
    for (i = 0; i < parent->ndeps; i++)
        if (parent->deps[i].addr == addr)
            return &parent->deps[i];
    if (parent->ndeps == parent->capdeps) {
        size_t c = parent->capdeps ? parent->capdeps * 2 : 8;
        struct dep *nd = xmalloc(c * sizeof *nd);
        if (parent->ndeps)
            memcpy(nd, parent->deps, parent->ndeps * sizeof *nd);
        free(parent->deps);
        parent->deps = nd;
        parent->capdeps = c;
    }
    memset(&parent->deps[parent->ndeps], 0, sizeof parent->deps[0]);
    parent->deps[parent->ndeps].addr = addr;
    return &parent->deps[parent->ndeps++];
}

/* Sibling dependences (OpenMP 5.2 §15.9.5): an in-dependence follows the
 * last out/inout sibling on the same address; an out/inout (and
 * mutexinoutset, treated like inout) follows the last out/inout and every in
 * since.  The predecessors' final clocks are acquired when the task starts.
 * With t == NULL (taskwait depend) the predecessors are acquired at once. */
static void deps_apply(struct task *parent, void **depend, struct task *t)
{
    size_t ndep, nout, nmut = 0, nin = 0, first, i;
    struct task **preds = NULL;
    size_t npreds = 0, cap = 0;
    if (depend == NULL)
        return;
    if ((uintptr_t)depend[0] != 0) {
        ndep = (uintptr_t)depend[0];
        nout = (uintptr_t)depend[1];
        nin = ndep - nout;
        first = 2;
    } else {
        ndep = (uintptr_t)depend[1];
        nout = (uintptr_t)depend[2];
        nmut = (uintptr_t)depend[3];
        nin = (uintptr_t)depend[4];
        first = 5;
    }
    lard__lock(&task_lock);
    for (i = 0; i < ndep; i++) {
        const void *addr = depend[first + i];
        int out;
        struct dep *d;
        size_t k;
        if (i < nout + nmut)
            out = 1;
        else if (i < nout + nmut + nin)
            out = 0;
        else {
            /* depobj: {address, kind}; kind 1 = in. */
            void **o = (void **)depend[first + i];
            addr = o[0];
            out = (uintptr_t)o[1] != 1;
        }
        d = dep_slot(parent, addr);
        if (d->last_out) {
            push(&preds, &npreds, &cap, d->last_out);
            task_ref(d->last_out);
        }
        if (out) {
            for (k = 0; k < d->n; k++) {
                push(&preds, &npreds, &cap, d->ins[k]);
                task_ref(d->ins[k]);
            }
            if (t) {
                if (d->last_out)
                    task_unref(d->last_out);
                for (k = 0; k < d->n; k++)
                    task_unref(d->ins[k]);
                d->last_out = t;
                task_ref(t);
                d->n = 0;
            }
        } else if (t) {
            push(&d->ins, &d->n, &d->cap, t);
            task_ref(t);
        }
    }
    lard__unlock(&task_lock);
    if (t) {
        t->preds = preds;
        t->npreds = npreds;
    } else {
        for (i = 0; i < npreds; i++) {
            acquire_vc(&preds[i]->fin);
            task_unref(preds[i]);
        }
        free(preds);
    }
}

/* Takes t's list of children not yet waited for (n of them), leaving it
 * empty. */
static struct task **take_children(struct task *t, size_t *n)
{
    struct task **kids;
    lard__lock(&task_lock);
    kids = t->children;
    *n = t->nchildren;
    t->children = NULL;
    t->nchildren = t->capchildren = 0;
    lard__unlock(&task_lock);
    return kids;
}

/* Task t has ended: the references its own lists held go (its children
 * that it did not wait for complete by a barrier, which does not need the
 * list; its dependence table orders only tasks it created). */
static void task_drop_lists(struct task *t)
{
    size_t n, i, k;
    struct task **kids = take_children(t, &n);
    for (i = 0; i < n; i++)
        task_unref(kids[i]);
    free(kids);
    for (i = 0; i < t->ndeps; i++) {
        struct dep *d = &t->deps[i];
        if (d->last_out)
            task_unref(d->last_out);
        for (k = 0; k < d->n; k++)
            task_unref(d->ins[k]);
        free(d->ins);
    }
    free(t->deps);
    t->deps = NULL;
    t->ndeps = t->capdeps = 0;
}

/* Runs task t's body on this kernel thread under t's own identity. */
static void run_task(struct task *t, void (*fn)(void *), void *arg)
{
    struct task *prev = current_task();
    uint32_t prev_id = lardcc_me(), id, stack, prev_cg = thr.cur_cg;
    size_t i;
    lardcc_clear_dead_stack();
    id = lardcc_id_alloc(&t->start_vc);
    if (!t->in_taskloop)
        lardcc_starts_pending(-1);
    t->id = id;
    lardcc_switch(id);
    note_unit(t->in_taskloop ? LARDCC_UNIT_TASKLOOP_TASK : LARDCC_UNIT_TASK, t->site,
              (uint64_t)(uintptr_t)fn, 0);
    lardcc_vc_free(&t->start_vc);
    for (i = 0; i < t->npreds; i++) {
        lardcc_acquire_vc(&t->preds[i]->fin);
        task_unref(t->preds[i]);
    }
    free(t->preds);
    t->preds = NULL;
    t->npreds = 0;
    thr.cur_task = t;
    thr.cur_cg = t->cg;
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(fn(arg));
    lardcc_stack_attach(stack);
    lardcc_clear_dead_stack();
    lardcc_vc_copy(&t->fin, lardcc_clock(id));
    lard_note_thread_exit();
    if (t->team)
        lardcc_barrier_contribute(&t->team->bar, t->slot, &t->fin);
    lardcc_id_drop_clock(id); /* t->fin has it */
    lardcc_id_retire(id, lardcc_vc_get(&t->fin, id));
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    thr.cur_task = prev;
    thr.cur_cg = prev_cg;
    lardcc_switch(prev_id);
    task_drop_lists(t);
    task_unref(t);
}

/* The argument block lard-cc hands to libgomp: 16 bytes libgomp may fill
 * (taskloop bounds), the header, then the program's data at `off`. */
struct hdr {
    struct task *t;                     /* GOMP_task */
    struct loop *loop;                  /* GOMP_taskloop */
    size_t off;
    void *orig_data;
    void (*fn)(void *);
    void (*cpyfn)(void *, void *);
};
#define HDR_AT 16

struct loop {
    struct task proto;                  /* start clock, parent, slot, group */
    struct group group;                 /* every task of the taskloop */
    int undeferred;                     /* if(false), included, or bound to no team */
};

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static void task_entry(void *block)
{
    struct hdr *h = (struct hdr *)((char *)block + HDR_AT);
    run_task(h->t, h->fn, (char *)block + h->off);
}

static void task_copy(void *dst, void *src)
{
    struct hdr *h = (struct hdr *)((char *)src + HDR_AT);
    uint32_t stack;
    memcpy(dst, src, h->off);
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(h->cpyfn((char *)dst + h->off, h->orig_data));
    lardcc_stack_attach(stack);
}

void __real_GOMP_task(void (*)(void *), void *, void (*)(void *, void *), long, long, bool,
                      unsigned, void **, int, void *);
void __wrap_GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                      long arg_size, long arg_align, bool if_clause, unsigned flags,
                      void **depend, int priority, void *detach)
{
    struct task *parent = current_task();
    struct task *t = xmalloc(sizeof *t);
    size_t align = arg_align > 16 ? (size_t)arg_align : 16;
    size_t off = round_up(HDR_AT + sizeof(struct hdr), align);
    size_t size = off + (size_t)(arg_size > 0 ? arg_size : 0);
    char *raw = xmalloc(size + align), *block;
    struct hdr *h;
    int included;
    block = (char *)round_up((size_t)(uintptr_t)raw, align);
    h = (struct hdr *)(block + HDR_AT);
    h->t = t;
    h->off = off;
    h->orig_data = data;
    h->fn = fn;
    h->cpyfn = cpyfn;
    if (cpyfn == NULL && arg_size > 0)
        memcpy(block + off, data, (size_t)arg_size);
    t->final = (flags & FLAG_FINAL) != 0 || parent->final;
    t->site = (uintptr_t)__builtin_return_address(0);
    t->refs = 2; /* its run, and this call */
    task_fork(t);
    task_link(t, parent);
    /* Undeferred (if(false)), included (inside a final task), or bound to
     * no team: outside every parallel region, or in a team of a `teams`
     * construct, the binding team is one thread that no team size changes,
     * and that thread runs the task to its end before continuing. */
    included = !if_clause || parent->final || t->team == NULL;
    deps_apply(parent, depend, t);
    IN_LIBGOMP(__real_GOMP_task(task_entry, block, cpyfn ? task_copy : NULL, (long)size,
                                (long)align, if_clause, flags, depend, priority, detach));
    free(raw);
    /* Such a task completes before its creator continues. */
    if (included)
        acquire_vc(&t->fin);
    task_unref(t);
}

static void loop_entry(void *block)
{
    struct hdr *h = (struct hdr *)((char *)block + HDR_AT);
    struct loop *L = h->loop;
    struct task *t = xmalloc(sizeof *t);
    char *data = (char *)block + h->off;
    memcpy(data, block, 2 * sizeof(long)); /* the task's bounds */
    lardcc_vc_copy(&t->start_vc, &L->proto.start_vc);
    t->final = L->proto.final;
    t->parent = L->proto.parent;
    t->team = L->proto.team;
    t->cg = L->proto.cg;
    t->slot = L->proto.slot;
    t->group = L->proto.group;
    t->site = L->proto.site;
    t->in_taskloop = 1;
    /* Its run and its parent's list; the group's below.  The taskloop's
     * own list holds none: it is read only while the parent waits in
     * taskloop_done, and the parent's list keeps the records until then. */
    t->refs = 2;
    lard__lock(&task_lock);
    push(&t->parent->children, &t->parent->nchildren, &t->parent->capchildren, t);
    if (t->group) {
        push(&t->group->tasks, &t->group->n, &t->group->cap, t);
        t->refs++;
    }
    /* Undeferred, the taskloop's tasks run one after another: each after
     * the one before (run_task acquires it). */
    if (L->undeferred && L->group.n > 0) {
        t->preds = xmalloc(sizeof *t->preds);
        t->preds[0] = L->group.tasks[L->group.n - 1];
        t->npreds = 1;
        task_ref(t->preds[0]);
    }
    push(&L->group.tasks, &L->group.n, &L->group.cap, t);
    lard__unlock(&task_lock);
    run_task(t, h->fn, data);
}

static void taskloop_setup(struct loop *L, struct task *parent, unsigned flags)
{
    memset(L, 0, sizeof *L);
    task_fork(&L->proto);
    L->proto.final = (flags & FLAG_FINAL) != 0 || parent->final;
    L->proto.parent = parent;
    /* Its tasks join the parent's list when they start, which may be
     * after the parent's end (nogroup): the parent's record stays. */
    task_ref(parent);
    L->proto.team = parent->team ? parent->team : thr.cur_team;
    L->proto.cg = thr.cur_cg;
    if (parent->implicit)
        L->proto.slot =
            L->proto.team ? (int)(__atomic_load_n(&L->proto.team->bar.gen, __ATOMIC_ACQUIRE) & 1)
                          : 0;
    else
        L->proto.slot = parent->slot;
    L->proto.group = parent->cur_group ? parent->cur_group : parent->group;
    L->undeferred = !(flags & FLAG_IF) || parent->final || L->proto.team == NULL;
}

/* Without nogroup a taskloop is inside an implicit taskgroup: all its tasks
 * happen before the creator continues (likewise when they are undeferred:
 * if(false), included, or bound to no team). */
static void taskloop_done(struct loop *L, unsigned flags)
{
    size_t i;
    if (!(flags & FLAG_NOGROUP) || L->undeferred) {
        for (i = 0; i < L->group.n; i++)
            acquire_vc(&L->group.tasks[i]->fin);
        lardcc_starts_pending(-1); /* every task started */
    }
    /* A nogroup taskloop's tasks may start at any later time: its start
     * clock stays pending, and no floor is raised any more. */
}

#define TASKLOOP(name, T)                                                             \
    void __real_##name(void (*)(void *), void *, void (*)(void *, void *), long, long, \
                       unsigned, unsigned long, int, T, T, T);                        \
    void __wrap_##name(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),  \
                       long arg_size, long arg_align, unsigned flags,                 \
                       unsigned long num_tasks, int priority, T start, T end, T step)  \
    {                                                                                 \
        struct task *parent = current_task();                                         \
        struct loop *L = xmalloc(sizeof *L);                                          \
        size_t align = arg_align > 16 ? (size_t)arg_align : 16;                       \
        size_t off = round_up(HDR_AT + sizeof(struct hdr), align);                    \
        size_t size = off + (size_t)(arg_size > 0 ? arg_size : 0);                    \
        char *raw = xmalloc(size + align), *block;                                    \
        struct hdr *h;                                                                \
        block = (char *)round_up((size_t)(uintptr_t)raw, align);                      \
        h = (struct hdr *)(block + HDR_AT);                                           \
        h->loop = L;                                                                  \
        h->off = off;                                                                 \
        h->orig_data = data;                                                          \
        h->fn = fn;                                                                   \
        h->cpyfn = cpyfn;                                                             \
        if (arg_size > 0)                                                             \
            memcpy(block + off, data, (size_t)arg_size);                              \
        memcpy(block, data, 2 * sizeof(long));                                        \
        taskloop_setup(L, parent, flags);                                             \
        L->proto.site = (uintptr_t)__builtin_return_address(0);                       \
        IN_LIBGOMP(__real_##name(loop_entry, block, cpyfn ? task_copy : NULL, (long)size, \
                      (long)align, flags, num_tasks, priority, start, end, step));     \
        free(raw);                                                                    \
        taskloop_done(L, flags);                                                      \
    }
TASKLOOP(GOMP_taskloop, long)
TASKLOOP(GOMP_taskloop_ull, unsigned long long)

/* taskwait: every child task created so far happens before the waiter
 * continues. */
void __real_GOMP_taskwait(void);
void __wrap_GOMP_taskwait(void)
{
    struct task **kids;
    size_t n, i;
    IN_LIBGOMP(__real_GOMP_taskwait());
    kids = take_children(current_task(), &n);
    for (i = 0; i < n; i++) {
        acquire_vc(&kids[i]->fin);
        task_unref(kids[i]);
    }
    free(kids);
}

void __real_GOMP_taskwait_depend(void **);
void __wrap_GOMP_taskwait_depend(void **depend)
{
    IN_LIBGOMP(__real_GOMP_taskwait_depend(depend));
    deps_apply(current_task(), depend, NULL);
}

void __real_GOMP_taskgroup_start(void);
void __wrap_GOMP_taskgroup_start(void)
{
    struct task *me = current_task();
    struct group *g = xmalloc(sizeof *g);
    g->outer = me->cur_group;
    me->cur_group = g;
    IN_LIBGOMP(__real_GOMP_taskgroup_start());
}

/* taskgroup end: every task of the group (descendants included) happens
 * before the creator continues. */
void __real_GOMP_taskgroup_end(void);
void __wrap_GOMP_taskgroup_end(void)
{
    struct task *me = current_task();
    struct group *g = me->cur_group;
    size_t i;
    IN_LIBGOMP(__real_GOMP_taskgroup_end());
    if (g == NULL)
        return;
    for (i = 0; i < g->n; i++) {
        acquire_vc(&g->tasks[i]->fin);
        task_unref(g->tasks[i]);
    }
    me->cur_group = g->outer;
    free(g->tasks);
    free(g);
}
