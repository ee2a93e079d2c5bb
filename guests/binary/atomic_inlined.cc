// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a thread fills a heap payload, then sets a heap
// std::atomic<bool> with a release store; the main thread spins on an
// acquire load and reads the payload. Both are plain movs, atomic only in
// the inlined std::atomic<bool>::store/load that DWARF records
// (docs/binary-mode.md, "Atomic operations from inlined frames"). A relaxed
// counter beside them orders nothing and is never read unordered.
#include <atomic>
#include <cstdio>
#include <thread>

struct Mailbox {
    std::atomic<bool> ready{false};
    std::atomic<int> seen{0};
    long payload[4];
};

int main()
{
    Mailbox *m = new Mailbox;
    std::thread t([m] {
        for (int i = 0; i < 4; i++)
            m->payload[i] = i + 1;
        m->seen.store(1, std::memory_order_relaxed);
        m->ready.store(true, std::memory_order_release);
    });
    while (!m->ready.load(std::memory_order_acquire)) {
    }
    long sum = 0;
    for (int i = 0; i < 4; i++)
        sum += m->payload[i];
    t.join();
    std::printf("sum %ld seen %d\n", sum, m->seen.load(std::memory_order_relaxed));
    delete m;
    return 0;
}
