/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, race-free: libc_ranges.c with every access under one
 * mutex. */
#define LOCKED
#include "libc_ranges.c"
