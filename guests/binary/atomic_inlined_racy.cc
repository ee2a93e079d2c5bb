// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy twin of atomic_inlined.cc: the thread writes `other` before a
// relaxed store, which orders nothing, and the payload's first element
// after its release store; the main thread reads each after it saw the
// flag that follows the write (relaxed loads: the run orders the write
// first, happens-before does not). The reads are the racy accesses.
#include <atomic>
#include <cstdio>
#include <thread>

struct Mailbox {
    std::atomic<bool> ready{false};
    std::atomic<bool> relaxed{false};
    std::atomic<bool> late{false};
    long payload[4];
    long other;
};

int main()
{
    Mailbox *m = new Mailbox;
    std::thread t([m] {
        for (int i = 0; i < 4; i++)
            m->payload[i] = i + 1;
        m->other = 7; // the read in main races with this write
        m->relaxed.store(true, std::memory_order_relaxed);
        m->ready.store(true, std::memory_order_release);
        m->payload[0] = 5; // the read in main races with this write
        m->late.store(true, std::memory_order_relaxed);
    });
    while (!m->relaxed.load(std::memory_order_relaxed)) {
    }
    long other = m->other; /* RACE */
    while (!m->ready.load(std::memory_order_acquire)) {
    }
    long sum = m->payload[1] + m->payload[2] + m->payload[3];
    while (!m->late.load(std::memory_order_relaxed)) {
    }
    long first = m->payload[0]; /* RACE */
    t.join();
    std::printf("other %ld first %ld sum %ld\n", other, first, sum);
    delete m;
    return 0;
}
