/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdio.h>
int main(void) { puts("hello, world"); return 0; }
