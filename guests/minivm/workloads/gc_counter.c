/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm workload 4: an unsynchronized shared counter, with a collection
 * between every two racing increments.  Expected: racy.
 *
 * Three language threads increment counter.n with no program
 * synchronization: a data race.  They take turns, but only through the
 * runtime: thread i waits (yielding) until the runtime's collection count
 * (vm_gc_count, a statistic: no happens-before edge, like Java's
 * GarbageCollectorMXBean) reaches its turn, increments, and requests a
 * collection (vm_gc), which stops the world with the runtime's internal,
 * unreported synchronization.  So consecutive increments by different
 * threads are separated by exactly one stop-the-world collection:
 *   - LARD reports the race on every increment but the first;
 *   - a detector that observed the collector's synchronization (AllSync)
 *     sees every increment ordered and misses them all;
 *   - under semispace the counter moves at every collection, so a detector
 *     that ignored CopyHistory (NoCopy) would see every increment hit a
 *     location with no history and miss them all too.
 * The turns make the final count deterministic.
 */
#include <minivm.h>
#include <stdio.h>

#define THREADS 3
#define ROUNDS 10

enum { C_N, C_BASE, C_SLOTS };
enum { W_ID, W_COUNTER, W_SLOTS };

static uint32_t cls_counter, cls_work;

static void incrementer(vm_ref w)
{
    int64_t id = vm_get_int(w, W_ID);
    vm_ref c = vm_get_ref(w, W_COUNTER);
    uint64_t base = (uint64_t)vm_get_int(c, C_BASE);
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t turn = base + (uint64_t)(r * THREADS + id);
        while (vm_gc_count() < turn)
            vm_yield();
        vm_set_int(c, C_N, vm_get_int(c, C_N) + 1); /* RACE */
        vm_gc();
    }
}

static int gc_counter_main(void)
{
    vm_ref c, ws[THREADS];
    int tids[THREADS];
    cls_counter = vm_define_class("Counter", C_SLOTS, 0, 0);
    cls_work = vm_define_class("Work", W_SLOTS, 1u << W_COUNTER, 0);
    c = vm_new(cls_counter);
    for (int t = 0; t < THREADS; t++) {
        ws[t] = vm_new(cls_work);
        vm_set_int(ws[t], W_ID, t);
        vm_set_ref(ws[t], W_COUNTER, c);
    }
    vm_set_int(c, C_BASE, (int64_t)vm_gc_count());
    for (int t = 0; t < THREADS; t++)
        tids[t] = vm_spawn(incrementer, ws[t]);
    for (int t = 0; t < THREADS; t++)
        vm_join(tids[t]);
    printf("count = %lld\n", (long long)vm_get_int(c, C_N));
    return 0;
}

int main(int argc, char **argv)
{
    vm_defaults d = {64 * 1024};
    return vm_run(argc, argv, &d, gc_counter_main);
}
