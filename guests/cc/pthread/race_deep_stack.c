/* Racy, two calls deep in both threads: the writer thread runs
 * writer -> deposit -> store_balance, the main thread runs
 * main -> audit -> load_balance, and nothing orders the store with the
 * load.  A report names both call stacks (tests/tests/lard_cc.rs checks
 * every frame against the CALL markers). */
#include <pthread.h>
#include <stdio.h>

static long balance;

__attribute__((noinline)) static void store_balance(long v)
{
    balance = v; /* RACE */
}

__attribute__((noinline)) static void deposit(long amount)
{
    store_balance(amount + 1); /* CALL deposit */
}

static void *writer(void *arg)
{
    deposit((long)arg); /* CALL writer */
    return NULL;
}

__attribute__((noinline)) static long load_balance(void)
{
    return balance; /* RACE */
}

__attribute__((noinline)) static long audit(void)
{
    return load_balance() >= 0; /* CALL audit */
}

int main(void)
{
    pthread_t t;
    long ok;
    pthread_create(&t, NULL, writer, (void *)41);
    ok = audit(); /* CALL main */
    pthread_join(t, NULL);
    printf("balance %ld ok %ld\n", balance, ok);
    return 0;
}
