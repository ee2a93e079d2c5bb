// Racy: two std::threads update a shared struct field without a lock.
#include <cstdio>
#include <thread>
struct Stats {
    long hits = 0;
};
static Stats stats;
static void count(int n)
{
    for (int i = 0; i < n; i++)
        stats.hits++; // RACE
}
int main()
{
    std::thread a(count, 10), b(count, 10);
    a.join();
    b.join();
    std::printf("done %d\n", stats.hits > 0);
    return 0;
}
