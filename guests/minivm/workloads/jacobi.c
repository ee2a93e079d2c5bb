/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm workload 1: a Java Grande-like parallel stencil (Jacobi relaxation)
 * on large long-lived int arrays.  Expected: race-free.
 *
 * Two 32x32 grids (reference arrays of int arrays, like Java's int[][]).
 * Four language threads each own a band of rows; every iteration a thread
 * reads its rows and the neighbouring rows of `src` (written by other threads
 * in the previous iteration) and writes its rows of `dst`, then all meet at a
 * program barrier built from a monitor (acquire/release edges), and the grids
 * swap roles.  Each new row is first computed into a freshly allocated
 * int[] (garbage), so collections happen during the run: under semispace the
 * grids move; under both collectors the row buffers of one thread are
 * reclaimed and their memory is reused by other threads.
 */
#include <minivm.h>
#include <stdio.h>

#define N 32
#define THREADS 4
#define ITERS 12

enum { B_COUNT, B_GEN, B_N, B_SLOTS };
enum { T_ID, T_SRC, T_DST, T_BAR, T_SUM, T_SLOTS };

static uint32_t cls_barrier, cls_task;

/* A program-level barrier: a monitor-protected counter and generation. */
static void barrier_wait(vm_ref b)
{
    size_t f = vm_frame();
    int64_t gen, n;
    vm_monitor_enter(b);
    gen = vm_get_int(b, B_GEN);
    n = vm_get_int(b, B_COUNT) + 1;
    if (n == vm_get_int(b, B_N)) {
        vm_set_int(b, B_COUNT, 0);
        vm_set_int(b, B_GEN, gen + 1);
        vm_monitor_exit(b);
    } else {
        vm_set_int(b, B_COUNT, n);
        vm_monitor_exit(b);
        for (;;) {
            int64_t g;
            vm_yield();
            vm_monitor_enter(b);
            g = vm_get_int(b, B_GEN);
            vm_monitor_exit(b);
            if (g != gen)
                break;
        }
    }
    vm_unframe(f);
}

static void worker(vm_ref task)
{
    int64_t id = vm_get_int(task, T_ID);
    vm_ref src = vm_get_ref(task, T_SRC);
    vm_ref dst = vm_get_ref(task, T_DST);
    vm_ref bar = vm_get_ref(task, T_BAR);
    vm_ref tmp = vm_local();
    uint32_t lo = 1 + (uint32_t)id * (N - 2) / THREADS;
    uint32_t hi = 1 + (uint32_t)(id + 1) * (N - 2) / THREADS;
    int64_t sum = 0;
    for (int it = 0; it < ITERS; it++) {
        for (uint32_t i = lo; i < hi; i++) {
            size_t f = vm_frame();
            vm_ref up = vm_aget_ref(src, i - 1);
            vm_ref row = vm_aget_ref(src, i);
            vm_ref down = vm_aget_ref(src, i + 1);
            vm_ref out = vm_aget_ref(dst, i);
            vm_ref buf = vm_new_int_array(N);     /* garbage */
            vm_aset_int(buf, 0, vm_aget_int(row, 0));
            vm_aset_int(buf, N - 1, vm_aget_int(row, N - 1));
            for (uint32_t j = 1; j < N - 1; j++) {
                int32_t v = vm_aget_int(up, j) + vm_aget_int(down, j) +
                            vm_aget_int(row, j - 1) + vm_aget_int(row, j + 1) +
                            4 * vm_aget_int(row, j);
                vm_aset_int(buf, j, v / 8);
            }
            for (uint32_t j = 0; j < N; j++) {
                int32_t v = vm_aget_int(buf, j);
                vm_aset_int(out, j, v);
                sum += v;
            }
            vm_unframe(f);
        }
        barrier_wait(bar);
        vm_assign(tmp, src);
        vm_assign(src, dst);
        vm_assign(dst, tmp);
    }
    vm_set_int(task, T_SUM, sum);
}

static int jacobi_main(void)
{
    vm_ref grids[2], bar, tasks;
    int tids[THREADS];
    int64_t sum = 0, check = 0;
    cls_barrier = vm_define_class("Barrier", B_SLOTS, 0, 0);
    cls_task = vm_define_class("Task", T_SLOTS,
                               1u << T_SRC | 1u << T_DST | 1u << T_BAR, 0);
    for (int g = 0; g < 2; g++) {
        grids[g] = vm_new_ref_array(N);
        for (uint32_t i = 0; i < N; i++) {
            size_t f = vm_frame();
            vm_ref row = vm_new_int_array(N);
            for (uint32_t j = 0; j < N; j++)
                vm_aset_int(row, j, (int32_t)((i * 7 + j * 13) % 100) * 16);
            vm_aset_ref(grids[g], i, row);
            vm_unframe(f);
        }
    }
    bar = vm_new(cls_barrier);
    vm_set_int(bar, B_N, THREADS);
    tasks = vm_new_ref_array(THREADS);
    for (int t = 0; t < THREADS; t++) {
        size_t f = vm_frame();
        vm_ref task = vm_new(cls_task);
        vm_set_int(task, T_ID, t);
        vm_set_ref(task, T_SRC, grids[0]);
        vm_set_ref(task, T_DST, grids[1]);
        vm_set_ref(task, T_BAR, bar);
        vm_aset_ref(tasks, (uint32_t)t, task);
        tids[t] = vm_spawn(worker, task);
        vm_unframe(f);
    }
    for (int t = 0; t < THREADS; t++)
        vm_join(tids[t]);
    for (int t = 0; t < THREADS; t++) {
        size_t f = vm_frame();
        vm_ref task = vm_aget_ref(tasks, (uint32_t)t);
        sum += vm_get_int(task, T_SUM);
        vm_unframe(f);
    }
    /* ITERS is even: the last results are in grids[0] */
    for (uint32_t i = 0; i < N; i++) {
        size_t f = vm_frame();
        vm_ref row = vm_aget_ref(grids[ITERS % 2], i);
        for (uint32_t j = 0; j < N; j++)
            check = check * 31 + vm_aget_int(row, j);
        check &= 0xffffffffffLL;
        vm_unframe(f);
    }
    printf("sum = %lld\nchecksum = %lld\n", (long long)sum, (long long)check);
    return 0;
}

int main(int argc, char **argv)
{
    vm_defaults d = {40 * 1024};
    return vm_run(argc, argv, &d, jacobi_main);
}
