/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm workload 2: allocation-heavy producer/consumer.  Expected:
 * race-free.
 *
 * One producer allocates ITEMS items (an Item object and its int[] payload),
 * fills them in and hands them over through a bounded queue protected by the
 * queue object's monitor; two consumers take items out, read them, and write
 * to them (marking them consumed) after leaving the monitor; then drop them.
 * Every access to an item is ordered by the monitor handoff, so the program
 * is race-free.  The heap is small, so many collections happen: consumed
 * items die, their memory is reclaimed (mark-sweep: ClearHistory, then LIFO
 * reuse by the producer; semispace: the to-space is reused) and live ones
 * move (semispace).  The producer's writes to a new item often land on memory
 * a consumer wrote for an old item with no program synchronization in
 * between: a detector that ignored ClearHistory would report those.  The end
 * of production is published through a volatile field.
 */
#include <minivm.h>
#include <stdio.h>

#define ITEMS 3000
#define CAP 8
#define PAYLOAD 6
#define CONSUMERS 2

enum { Q_HEAD, Q_TAIL, Q_COUNT, Q_BUF, Q_DONE, Q_DONE_VC, Q_SLOTS };
enum { I_ID, I_PAYLOAD, I_CONSUMED, I_SLOTS };
enum { C_QUEUE, C_SUM, C_COUNT, C_SLOTS };

static uint32_t cls_queue, cls_item, cls_consumer;

static void put(vm_ref q, vm_ref item)
{
    for (;;) {
        size_t f = vm_frame();
        int full;
        vm_monitor_enter(q);
        full = vm_get_int(q, Q_COUNT) == CAP;
        if (!full) {
            int64_t tail = vm_get_int(q, Q_TAIL);
            vm_ref buf = vm_get_ref(q, Q_BUF);
            vm_aset_ref(buf, (uint32_t)tail, item);
            vm_set_int(q, Q_TAIL, (tail + 1) % CAP);
            vm_set_int(q, Q_COUNT, vm_get_int(q, Q_COUNT) + 1);
        }
        vm_monitor_exit(q);
        vm_unframe(f);
        if (!full)
            return;
        vm_yield();
    }
}

/* Stores the next item in `out` and returns 1, or returns 0 when the
 * producer is done and the queue is empty. */
static int take(vm_ref q, vm_ref out)
{
    for (;;) {
        size_t f = vm_frame();
        int got = 0;
        int done = vm_volatile_get(q, Q_DONE) != 0;
        vm_monitor_enter(q);
        if (vm_get_int(q, Q_COUNT) > 0) {
            int64_t head = vm_get_int(q, Q_HEAD);
            vm_ref buf = vm_get_ref(q, Q_BUF);
            vm_assign(out, vm_aget_ref(buf, (uint32_t)head));
            vm_aset_ref(buf, (uint32_t)head, NULL);
            vm_set_int(q, Q_HEAD, (head + 1) % CAP);
            vm_set_int(q, Q_COUNT, vm_get_int(q, Q_COUNT) - 1);
            got = 1;
        }
        vm_monitor_exit(q);
        vm_unframe(f);
        if (got)
            return 1;
        if (done)
            return 0;
        vm_yield();
    }
}

static void producer(vm_ref q)
{
    for (int i = 0; i < ITEMS; i++) {
        size_t f = vm_frame();
        vm_ref item = vm_new(cls_item);
        vm_ref payload = vm_new_int_array(PAYLOAD);
        vm_set_int(item, I_ID, i);
        for (uint32_t j = 0; j < PAYLOAD; j++)
            vm_aset_int(payload, j, (int32_t)(i * (int)j + 1));
        vm_set_ref(item, I_PAYLOAD, payload);
        put(q, item);
        vm_unframe(f);
    }
    vm_volatile_set(q, Q_DONE, 1);
}

static void consumer(vm_ref self)
{
    vm_ref q = vm_get_ref(self, C_QUEUE);
    vm_ref item = vm_local();
    int64_t sum = 0, count = 0;
    while (take(q, item)) {
        size_t f = vm_frame();
        vm_ref payload = vm_get_ref(item, I_PAYLOAD);
        int64_t s = vm_get_int(item, I_ID);
        for (uint32_t j = 0; j < PAYLOAD; j++) {
            s += vm_aget_int(payload, j);
            vm_aset_int(payload, j, -1);      /* scribble: consumed */
        }
        vm_set_int(item, I_CONSUMED, 1);
        vm_assign(item, NULL);                /* drop it: garbage now */
        sum += s;
        count++;
        vm_unframe(f);
    }
    vm_set_int(self, C_SUM, sum);
    vm_set_int(self, C_COUNT, count);
}

static int prodcons_main(void)
{
    vm_ref q, cons[CONSUMERS];
    int tids[CONSUMERS + 1];
    int64_t sum = 0, count = 0;
    cls_queue = vm_define_class("Queue", Q_SLOTS, 1u << Q_BUF, 1u << Q_DONE);
    cls_item = vm_define_class("Item", I_SLOTS, 1u << I_PAYLOAD, 0);
    cls_consumer = vm_define_class("Consumer", C_SLOTS, 1u << C_QUEUE, 0);
    q = vm_new(cls_queue);
    {
        vm_ref buf = vm_new_ref_array(CAP);
        vm_set_ref(q, Q_BUF, buf);
    }
    for (int c = 0; c < CONSUMERS; c++) {
        cons[c] = vm_new(cls_consumer);
        vm_set_ref(cons[c], C_QUEUE, q);
        tids[c] = vm_spawn(consumer, cons[c]);
    }
    tids[CONSUMERS] = vm_spawn(producer, q);
    for (int t = 0; t <= CONSUMERS; t++)
        vm_join(tids[t]);
    for (int c = 0; c < CONSUMERS; c++) {
        sum += vm_get_int(cons[c], C_SUM);
        count += vm_get_int(cons[c], C_COUNT);
    }
    printf("items = %lld\nsum = %lld\nmany collections = %s\n",
           (long long)count, (long long)sum,
           vm_gc_count() >= 10 ? "yes" : "no");
    return 0;
}

int main(int argc, char **argv)
{
    vm_defaults d = {32 * 1024};
    return vm_run(argc, argv, &d, prodcons_main);
}
