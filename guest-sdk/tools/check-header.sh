#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# Checks that lard.h emits exactly the bytes of lardx86.inc:
#  1. the macros embedded in lard.h are the generated copy of lardx86.inc;
#  2. lardx86.inc assembles to the encoding of the spec (recomputed here);
#  3. for every op and every register in every operand slot (both spellings),
#     assembling through lard.h's embedded macros (with $CC) gives the same
#     bytes as assembling through lardx86.inc (with $CC as an assembler).
# usage: check-header.sh SDKDIR BUILDDIR   (CC defaults to cc)
set -eu
sdk=$1; out=$2; cc=${CC:-cc}
mkdir -p "$out"
python3 "$sdk/tools/gen-header-asm.py" "$sdk/include/lardx86.inc" "$sdk/include/lard.h"
python3 - "$out" <<'PY'
import sys
out = sys.argv[1]
regs = "rax rcx rdx rbx rsp rbp rsi rdi r8 r9 r10 r11 r12 r13 r14 r15".split()
ops = []  # (num, op1, op2, op3)
for i, r in enumerate(regs):
    p = ("%" + r) if i % 2 else r
    q = r if i % 2 else ("%" + r)
    ops.append((1, p, "rax", "rax"))
    for j, s in enumerate(regs):
        for num in (2, 3, 4, 6):
            ops.append((num, p, s if j % 2 else "%" + s, "rax"))
        ops.append((5, q, regs[(i + j) % 16], "%" + s))
        ops.append((5, s, q, regs[(i * 3 + j) % 16]))
names = {1: "lard_thread", 2: "lard_readvc", 3: "lard_writevc",
         4: "lard_clearhistory", 5: "lard_copyhistory", 6: "lard_floorvc"}
nargs = {1: 1, 2: 2, 3: 2, 4: 2, 5: 3, 6: 2}
num_of = lambda r: regs.index(r.lstrip("%"))
with open(out + "/check-spec.bin", "wb") as f:  # the encoding, from the spec
    for num, a, b, c in ops:
        o1, o2, o3 = num_of(a), num_of(b), num_of(c)
        f.write(bytes([0x48 | (o1 >> 3) << 2 | (o3 >> 3) << 1 | o2 >> 3, 0x0F, 0x1F,
                       0x84 | (o1 & 7) << 3, (o3 & 7) << 3 | (o2 & 7),
                       num, 0x4C, 0x52, 0x44]))
with open(out + "/check-inc.s", "w") as f:
    f.write('.include "lardx86.inc"\n.text\n')
    for num, a, b, c in ops:
        f.write("%s %s\n" % (names[num], ", ".join((a, b, c)[:nargs[num]])))
with open(out + "/check-h.c", "w") as f:
    f.write('#include "lard.h"\nvoid lard_check_header(void) {\n')
    for num, a, b, c in ops:
        use = "__lardh_op %d, %s, %s, %s" % (num, a, b, c)
        f.write('  __asm__ __volatile__(LARD__OP("%s") : : );\n' % use.replace("%", "%%"))
    f.write("}\n")
PY
$cc -c -x assembler "$out/check-inc.s" -I"$sdk/include" -o "$out/check-inc.o"
$cc -c -O0 -std=c99 -I"$sdk/include" "$out/check-h.c" -o "$out/check-h.o"
objcopy -O binary -j .text "$out/check-inc.o" "$out/check-inc.bin"
objcopy -O binary -j .text "$out/check-h.o" "$out/check-h.bin"
# check-h.o's function has a prologue/epilogue: look for the op bytes inside it.
python3 - "$out/check-inc.bin" "$out/check-h.bin" "$out/check-spec.bin" <<'PY'
import sys
a = open(sys.argv[1], "rb").read()
b = open(sys.argv[2], "rb").read()
assert len(a) > 0 and len(a) % 9 == 0, len(a)
if a != open(sys.argv[3], "rb").read():
    sys.exit("lardx86.inc does not follow the encoding spec")
if a not in b:
    sys.exit("lard.h and lardx86.inc encodings differ")
print("lard.h encodings match lardx86.inc: %d ops" % (len(a) // 9))
PY
