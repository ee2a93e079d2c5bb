// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: one goroutine stops the world over and over
// (runtime.ReadMemStats) while two others spin until a start time, lock
// their OS threads and yield. Between two stops the world runs only as
// long as the stopping goroutine's next call takes: the woken threads must
// run then, or they never do. With GOMAXPROCS=1 the others run only once
// the runtime's monitor thread, woken at the end of each stop, sees the
// world running and preempts the stopping goroutine.
package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

func main() {
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
		}
	}()
	start := time.Now().Add(10 * time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(2)
	for i := 0; i < 2; i++ {
		go func() {
			for time.Now().Before(start) {
			}
			go func() {}()
			runtime.LockOSThread()
			runtime.Gosched()
			wg.Done()
		}()
	}
	wg.Wait()
	fmt.Println("OK")
}
