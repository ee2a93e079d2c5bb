/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, racy twin of atomic_locations.c: the same heap and stack
 * flags, but each reader also reads its payload before it waits for the
 * flag, unordered with the writer's write of it: those two payload races
 * are reported (at the writes, which a pipe makes come second without
 * ordering them: lard takes happens-before from synchronization, not from
 * I/O), the flags' own accesses are not. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
struct msg {
    int payload;
    atomic_int ready;
};
static struct msg *heap_msg;
static int stack_payload;
static int heap_fds[2], stack_fds[2];
static void *heap_writer(void *arg) {
    char go;
    (void)arg;
    if (read(heap_fds[0], &go, 1) != 1)
        abort();
    heap_msg->payload = 42; /* RACE */
    atomic_store(&heap_msg->ready, 1);
    return NULL;
}
static void *stack_reader(void *arg) {
    atomic_int *flag = arg;
    long early = stack_payload; /* the write in main races with this read */
    if (write(stack_fds[1], "", 1) != 1)
        abort();
    while (atomic_load(flag) == 0)
        ;
    return (void *)(early + stack_payload);
}
int main(void) {
    pthread_t w, r;
    void *got;
    char go;
    atomic_int flag = 0;
    heap_msg = calloc(1, sizeof *heap_msg);
    if (heap_msg == NULL || pipe(heap_fds) != 0 || pipe(stack_fds) != 0)
        return 1;
    pthread_create(&w, NULL, heap_writer, NULL);
    int early = heap_msg->payload; /* the writer's write races with this read */
    if (write(heap_fds[1], "", 1) != 1)
        return 1;
    while (atomic_load(&heap_msg->ready) == 0)
        ;
    int seen = heap_msg->payload;
    pthread_create(&r, NULL, stack_reader, &flag);
    if (read(stack_fds[0], &go, 1) != 1)
        return 1;
    stack_payload = 7; /* RACE */
    atomic_store(&flag, 1);
    pthread_join(r, &got);
    pthread_join(w, NULL);
    printf("heap payload %d (early %d), stack payload %ld\n", seen, early, (long)got);
    free(heap_msg);
    return 0;
}
