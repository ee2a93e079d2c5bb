/* Race-free: an unnamed critical and two named criticals, each guarding
 * its own shared variables. */
#include <stdio.h>
static int count, evens, odds;
int main(void)
{
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < 40; i++) {
#pragma omp critical
        count++;
        if (i % 2 == 0) {
#pragma omp critical(even)
            evens += i;
        } else {
#pragma omp critical(odd)
            odds += i;
        }
    }
    printf("count = %d evens = %d odds = %d\n", count, evens, odds);
    return 0;
}
