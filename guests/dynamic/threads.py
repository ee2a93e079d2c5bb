# SPDX-License-Identifier: MIT OR Apache-2.0
# A small threaded Python program: four threads sum squares under a lock,
# a queue hands results back, and the exit status is chosen by the script.
import queue
import sys
import threading

lock = threading.Lock()
results = queue.Queue()
total = 0


def work(k):
    global total
    s = sum(i * i for i in range(1000 * (k + 1)))
    with lock:
        total += s
    results.put((k, s))


threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("total", total)
print("parts", sorted(results.get() for _ in threads))
sys.exit(3)
