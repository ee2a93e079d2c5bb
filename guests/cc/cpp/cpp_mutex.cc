// Race-free: std::thread, std::mutex with lock_guard and unique_lock,
// std::condition_variable, and a release/acquire std::atomic hand-off.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
static std::mutex mu;
static std::condition_variable cv;
static bool go;
static int shared;
static int payload;
static std::atomic<bool> published{false};
int main()
{
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++)
        ts.emplace_back([i] {
            std::unique_lock<std::mutex> lk(mu);
            cv.wait(lk, [] { return go; });
            shared += i;
        });
    {
        std::lock_guard<std::mutex> g(mu);
        go = true;
    }
    cv.notify_all();
    for (auto &t : ts)
        t.join();
    std::thread p([] {
        payload = 5;
        published.store(true, std::memory_order_release);
    });
    while (!published.load(std::memory_order_acquire))
        std::this_thread::yield();
    int got = payload;
    p.join();
    std::printf("shared = %d payload = %d\n", shared, got);
    return 0;
}
