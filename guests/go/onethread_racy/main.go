// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: with GOMAXPROCS=1 the goroutines never run at the same time, yet
// nothing orders their increments: distinct language threads on one kernel
// thread race (LARD's M:N case).
package main

import (
	"fmt"
	"runtime"
	"sync"
)

var shared int

func main() {
	runtime.GOMAXPROCS(1)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				shared++ // RACE
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	fmt.Println("done")
}
