/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A shared library with program data: store_slot writes it with a Tracked
 * store. racy_lib_main.c calls it from two threads without program
 * synchronization, so the report must name this file's line, the function
 * in the library and the library's data symbol. */
#include <lard.h>

uint64_t shared_slot;

void store_slot(uint64_t v)
{
    lard_store64(&shared_slot, v); /* RACE */
}

uint64_t load_slot(void) { return lard_load64(&shared_slot); }
