/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm workload 3: racy lazy initialization.  Expected: racy.
 *
 * Eight Holder objects each have a lazily created Config.  Two language
 * threads walk the holders and "get" each one's config with the classic
 * broken idiom -- check the field, create and publish if null -- with no
 * synchronization, then use it.  For every holder the second thread either
 * reads the reference the first one published (a write-read race on the
 * check, and on the use of the config's field, written by the other thread
 * without synchronization) or also sees null and publishes its own (a race
 * between the two publications and the check).  Which of the three lines is
 * reported depends on the interleaving; at least one always is.  Creating a
 * config allocates a scratch buffer, and thread 1 requests a collection half
 * way, so objects move (semispace) or memory is reused between the racing
 * accesses.  The output (the value every thread saw) does not depend on the
 * interleaving.
 */
#include <minivm.h>
#include <stdio.h>

#define HOLDERS 8
#define THREADS 2

enum { H_CONFIG, H_SLOTS };
enum { CF_VALUE, CF_SCRATCH, CF_SLOTS };
enum { W_ID, W_HOLDERS, W_OK, W_SLOTS };

static uint32_t cls_holder, cls_config, cls_work;

static vm_ref get_config(vm_ref holder)
{
    vm_ref cfg = vm_get_ref(holder, H_CONFIG); /* RACE */
    if (vm_is_null(cfg)) {
        vm_ref scratch = vm_new_int_array(64);
        vm_assign(cfg, vm_new(cls_config));
        vm_aset_int(scratch, 0, 42);
        vm_set_int(cfg, CF_VALUE, vm_aget_int(scratch, 0));
        vm_set_ref(cfg, CF_SCRATCH, scratch);
        vm_set_ref(holder, H_CONFIG, cfg); /* RACE */
    }
    return cfg;
}

static void work(vm_ref w)
{
    int64_t id = vm_get_int(w, W_ID), ok = 0;
    vm_ref holders = vm_get_ref(w, W_HOLDERS);
    for (uint32_t i = 0; i < HOLDERS; i++) {
        size_t f = vm_frame();
        vm_ref holder = vm_aget_ref(holders, i);
        vm_ref cfg = get_config(holder);
        if (vm_get_int(cfg, CF_VALUE) == 42) /* RACE */
            ok++;
        if (id == 1 && i == HOLDERS / 2)
            vm_gc();
        vm_unframe(f);
        vm_yield();
    }
    vm_set_int(w, W_OK, ok);
}

static int lazyinit_main(void)
{
    vm_ref holders, ws[THREADS];
    int tids[THREADS];
    int64_t ok = 0;
    cls_holder = vm_define_class("Holder", H_SLOTS, 1u << H_CONFIG, 0);
    cls_config = vm_define_class("Config", CF_SLOTS, 1u << CF_SCRATCH, 0);
    cls_work = vm_define_class("Work", W_SLOTS, 1u << W_HOLDERS, 0);
    holders = vm_new_ref_array(HOLDERS);
    for (uint32_t i = 0; i < HOLDERS; i++) {
        size_t f = vm_frame();
        vm_aset_ref(holders, i, vm_new(cls_holder));
        vm_unframe(f);
    }
    for (int t = 0; t < THREADS; t++) {
        ws[t] = vm_new(cls_work);
        vm_set_int(ws[t], W_ID, t);
        vm_set_ref(ws[t], W_HOLDERS, holders);
        tids[t] = vm_spawn(work, ws[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        vm_join(tids[t]);
        ok += vm_get_int(ws[t], W_OK);
    }
    printf("holders = %d\nsaw 42 = %lld of %d\n", HOLDERS, (long long)ok,
           HOLDERS * THREADS);
    return 0;
}

int main(int argc, char **argv)
{
    vm_defaults d = {64 * 1024};
    return vm_run(argc, argv, &d, lazyinit_main);
}
