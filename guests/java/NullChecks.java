// SPDX-License-Identifier: MIT OR Apache-2.0
// A hot loop whose array access meets null on every other iteration: once
// the JIT compiles f, HotSpot's implicit null check turns each null into a
// SIGSEGV that its handler makes a NullPointerException. Expected output
// (native and under lard): "caught 10000".
public class NullChecks {
    static int f(int[] a) {
        return a[0];
    }

    public static void main(String[] args) {
        int caught = 0;
        int[] one = {1};
        for (int i = 0; i < 20000; i++) {
            try {
                f(i % 2 == 0 ? null : one);
            } catch (NullPointerException e) {
                caught++;
            }
        }
        System.out.println("caught " + caught);
    }
}
