// SPDX-License-Identifier: MIT OR Apache-2.0
// Four Java threads add to a counter under a monitor; the main thread joins
// them and prints the total (4000). tests/tests/processes.rs runs it under
// lard when the machine has a JDK.
public class Counter {
    static int n;

    public static void main(String[] args) throws Exception {
        Thread[] t = new Thread[4];
        for (int i = 0; i < t.length; i++) {
            t[i] = new Thread(() -> {
                for (int k = 0; k < 1000; k++) {
                    synchronized (Counter.class) {
                        n++;
                    }
                }
            });
            t[i].start();
        }
        for (Thread x : t) {
            x.join();
        }
        System.out.println("total " + n);
    }
}
