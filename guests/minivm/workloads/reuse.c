/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm workload 5: memory reuse across threads by the collector.
 * Expected: race-free.
 *
 * Two language threads take turns, ordered only through the runtime (the
 * collection count, a statistic with no happens-before edge): in its turn a
 * thread allocates TEMPS int arrays, writes them (Tracked), drops them and
 * requests two collections.  The next turn's thread allocates the same
 * number of arrays of the same size -- the collector hands it the very
 * memory the other thread wrote (mark-sweep: the swept tail of the heap;
 * semispace: after two flips the same half, right after the same live data).
 * Different objects, so no race (LARD: ClearHistory on reclaim); a detector
 * that ignored ClearHistory (NoClear) reports the writes to the reused memory
 * in every turn but the first.  The program prints whether the memory was
 * reused (the runtime's addresses, read untracked).
 */
#include <minivm.h>
#include <stdio.h>

#define THREADS 2
#define ROUNDS 6
#define TEMPS 16
#define LEN 12

enum { S_BASE, S_REUSED, S_SLOTS };
enum { W_ID, W_SHARED, W_SLOTS };

static uint32_t cls_shared, cls_work;
static uintptr_t first_addr[THREADS * ROUNDS];  /* runtime statistic */

static void turns(vm_ref w)
{
    int64_t id = vm_get_int(w, W_ID);
    vm_ref s = vm_get_ref(w, W_SHARED);
    uint64_t base = (uint64_t)vm_get_int(s, S_BASE);
    for (int r = 0; r < ROUNDS; r++) {
        int turn = r * THREADS + (int)id;
        size_t f = vm_frame();
        while (vm_gc_count() < base + 2 * (uint64_t)turn)
            vm_yield();
        for (int k = 0; k < TEMPS; k++) {
            size_t g = vm_frame();
            vm_ref a = vm_new_int_array(LEN);
            if (k == 0)
                first_addr[turn] = vm_address(a);
            for (uint32_t j = 0; j < LEN; j++)
                vm_aset_int(a, j, (int32_t)(turn * 100 + k + (int)j));
            vm_unframe(g);
        }
        vm_unframe(f);
        vm_gc();
        vm_gc();
    }
}

static int reuse_main(void)
{
    vm_ref s, ws[THREADS];
    int tids[THREADS], reused = 1;
    cls_shared = vm_define_class("Shared", S_SLOTS, 0, 0);
    cls_work = vm_define_class("Work", W_SLOTS, 1u << W_SHARED, 0);
    s = vm_new(cls_shared);
    for (int t = 0; t < THREADS; t++) {
        ws[t] = vm_new(cls_work);
        vm_set_int(ws[t], W_ID, t);
        vm_set_ref(ws[t], W_SHARED, s);
    }
    vm_set_int(s, S_BASE, (int64_t)vm_gc_count());
    for (int t = 0; t < THREADS; t++)
        tids[t] = vm_spawn(turns, ws[t]);
    for (int t = 0; t < THREADS; t++)
        vm_join(tids[t]);
    for (int i = 1; i < THREADS * ROUNDS; i++)
        if (first_addr[i] != first_addr[0])
            reused = 0;
    printf("turns = %d\nreused across threads = %s\n", THREADS * ROUNDS,
           reused ? "yes" : "no");
    return 0;
}

int main(int argc, char **argv)
{
    vm_defaults d = {64 * 1024};
    return vm_run(argc, argv, &d, reuse_main);
}
