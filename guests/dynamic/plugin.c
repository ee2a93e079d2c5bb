/* SPDX-License-Identifier: MIT OR Apache-2.0
 * The plugin plugin_host.c loads with dlopen. */
#include <stdlib.h>
#include <string.h>

static int table[16];

const char *plugin_name(void) { return "the plugin"; }

int plugin_answer(int x) {
    for (int i = 0; i < 16; i++) table[i] = i * x;
    return table[6];
}

void plugin_crash(void) {
    volatile int *p = (volatile int *)(table[0] ? (int *)table : NULL);
    *p = 1;
}
