/* Race-free: the chunks of dynamic, guided and unsigned long long loops
 * write different elements and their own private, firstprivate, lastprivate
 * and reduction copies (one copy per implicit task, reused by the chunks
 * that task runs); the barrier at the end of each loop orders every chunk
 * before what follows. */
#include <stdio.h>
#define N 24
static int a[N], b[N], out;
static unsigned long long n = N;
int main(void)
{
    int sum = 0, last = 0, base = 10, mx = 0;
    for (int team = 1; team <= 2; team++) {
#pragma omp parallel num_threads(team)
        {
            int tmp;
#pragma omp for schedule(dynamic, 2) private(tmp) firstprivate(base) lastprivate(last) \
    reduction(+ : sum)
            for (int i = 0; i < N; i++) {
                tmp = base + i;
                a[i] = tmp;
                sum += tmp;
                last = i;
            }
#pragma omp for schedule(guided) reduction(max : mx)
            for (int i = 0; i < N; i++) {
                b[i] = a[N - 1 - i] - base;
                if (b[i] > mx)
                    mx = b[i];
            }
#pragma omp for schedule(dynamic, 3)
            for (unsigned long long i = 0; i < n; i++)
                a[i] = b[i] + 1;
#pragma omp single
            out += a[0] + a[N - 1];
        }
    }
    printf("sum = %d last = %d max = %d out = %d\n", sum, last, mx, out);
    return 0;
}
