/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A shared library that needs_greet links against (DT_NEEDED). */
#include <stdio.h>
void greet(const char *who) { printf("greetings, %s\n", who); }
