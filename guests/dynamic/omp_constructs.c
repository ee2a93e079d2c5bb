/* SPDX-License-Identifier: MIT OR Apache-2.0
 * libgomp under the dynamic loader: parallel with a reduction, a parallel
 * loop with critical, barrier and single. */
#include <omp.h>
#include <stdio.h>
int main(){ long sum=0; int n=0;
#pragma omp parallel num_threads(4) reduction(+:sum)
 { for(int i=omp_get_thread_num();i<100000;i+=omp_get_num_threads()) sum+=i; }
#pragma omp parallel for num_threads(3)
 for(int i=0;i<30;i++){
#pragma omp critical
  n++; }
#pragma omp parallel num_threads(4)
 {
#pragma omp barrier
#pragma omp single
  printf("single from a team of %d\n", omp_get_num_threads());
 }
 printf("sum=%ld n=%d\n",sum,n); return 0;}
