// Race-free: heap objects with virtual functions created by one thread,
// handed over through a mutex-protected queue, used and deleted by another.
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
struct Shape {
    virtual ~Shape() = default;
    virtual int area() const = 0;
};
struct Square : Shape {
    int s;
    explicit Square(int s) : s(s) {}
    int area() const override { return s * s; }
};
static std::mutex mu;
static std::deque<Shape *> q;
int main()
{
    std::thread prod([] {
        for (int i = 1; i <= 10; i++) {
            Shape *sh = new Square(i);
            std::lock_guard<std::mutex> g(mu);
            q.push_back(sh);
        }
    });
    long total = 0;
    int taken = 0;
    while (taken < 10) {
        Shape *sh = nullptr;
        {
            std::lock_guard<std::mutex> g(mu);
            if (!q.empty()) {
                sh = q.front();
                q.pop_front();
            }
        }
        if (sh) {
            total += sh->area();
            delete sh;
            taken++;
        }
    }
    prod.join();
    std::printf("total = %ld\n", total);
    return 0;
}
