/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Counts forever: a guest only an interrupt stops (tests/tests/gdb.rs
 * interrupts it under `lard run --gdb`). */
volatile unsigned long spins;

int main(void)
{
    for (;;)
        spins++;
}
