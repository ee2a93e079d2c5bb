// Racy: a lambda captures a vector by reference; two threads write the
// same element, one under a mutex and one without.
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
int main()
{
    std::vector<int> v(8, 0);
    std::mutex mu;
    std::thread a([&] {
        std::lock_guard<std::mutex> g(mu);
        v[3] = 1; // RACE
    });
    std::thread b([&] {
        v[3] = 2; // RACE
    });
    a.join();
    b.join();
    std::printf("done %d\n", v[3] > 0);
    return 0;
}
