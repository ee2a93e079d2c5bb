/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Calls the legacy vsyscall page as old binaries and the JVM do:
 * gettimeofday at 0xffffffffff600000, time at +0x400, getcpu at +0x800.
 * Expected: the three answers agree with the system calls' (the kernel
 * emulates the page, or lard does); prints "vsyscall ok". */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

typedef long (*gtod_fn)(struct timeval *, void *);
typedef long (*time_fn)(long *);
typedef long (*getcpu_fn)(unsigned *, unsigned *, void *);

int main(void)
{
    struct timeval tv;
    long t_arg = 0;
    unsigned cpu = 99, node = 99;
    long r1 = ((gtod_fn)0xffffffffff600000UL)(&tv, 0);
    long t = ((time_fn)0xffffffffff600400UL)(&t_arg);
    long r3 = ((getcpu_fn)0xffffffffff600800UL)(&cpu, &node, 0);
    long now = (long)time(NULL);
    int ok = r1 == 0 && t == t_arg && t <= now && now - t < 60 && tv.tv_sec <= now &&
             now - tv.tv_sec < 60 && r3 == 0 && node == 0 && cpu == (unsigned)sched_getcpu();
    printf("vsyscall %s\n", ok ? "ok" : "wrong");
    return !ok;
}
