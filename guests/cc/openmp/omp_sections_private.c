/* Race-free: sections write different variables and their own private,
 * firstprivate, lastprivate and reduction copies (one copy per implicit
 * task, reused by the sections that task runs); the barrier at the end of
 * the construct orders every section before what follows. */
#include <stdio.h>
static int a[4], out;
int main(void)
{
    int sum = 0, last = 0, base = 10;
    for (int team = 1; team <= 2; team++) {
#pragma omp parallel num_threads(team)
        {
            int tmp;
#pragma omp sections private(tmp) firstprivate(base) lastprivate(last) reduction(+ : sum)
            {
#pragma omp section
                {
                    tmp = base + 1;
                    a[0] = tmp;
                    sum += tmp;
                    last = 1;
                }
#pragma omp section
                {
                    tmp = base + 2;
                    a[1] = tmp;
                    sum += tmp;
                    last = 2;
                }
#pragma omp section
                {
                    tmp = base + 3;
                    a[2] = tmp;
                    sum += tmp;
                    last = 3;
                }
            }
#pragma omp single
            out += a[0] + a[1] + a[2];
        }
    }
    printf("sum = %d last = %d out = %d\n", sum, last, out);
    return 0;
}
