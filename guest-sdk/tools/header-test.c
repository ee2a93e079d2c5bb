/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Compile test for lard.h: every inline function, with all operand kinds. */
#include "lard.h"
uint64_t g;
uint64_t f(uint64_t a, uint64_t b, void *p) {
  lard_thread(a);
  uint64_t v = lard_read_vc(b);
  lard_write_vc(a, v + 1);
  v += lard_floor_vc(a, v);
  lard_clear_history(p, 10000);
  lard_copy_history(p, (char*)p + 3, 9000);
  lard_store64(&g, 5);
  lard_store8(p, 7);
  lard_store16(p, (uint16_t)a);
  return lard_load64(&g) + lard_load8(p) + lard_load32(p) + lard_load16(p);
}
