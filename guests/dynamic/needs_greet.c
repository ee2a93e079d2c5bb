/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Linked against libgreet.so (found through its RUNPATH): ld.so maps it
 * before main; without it, ld.so reports the missing library. */
void greet(const char *who);
int main(void) {
    greet("ld.so");
    return 5;
}
