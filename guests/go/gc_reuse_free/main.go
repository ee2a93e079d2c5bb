// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: four goroutines each allocate, fill and drop heap buffers of
// their own while the collector runs; memory the collector frees from one
// goroutine's buffers is reused for another's. Nothing is shared: a
// detector that kept the freed memory's history would report the reuse as
// races.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

// keep[g] holds goroutine g's latest buffer, so that buffers live on the
// heap; each goroutine writes only its own slot.
var keep [4][]int

func churn(g int, rounds int) int {
	sum := 0
	for r := 0; r < rounds; r++ {
		buf := make([]int, 8)
		for i := range buf {
			buf[i] = g*1000 + i
		}
		keep[g] = buf
		sum += buf[r%8]
		if r%64 == 0 {
			runtime.GC()
		}
	}
	return sum
}

func main() {
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			sums[g] = churn(g, 1000)
		}(g)
	}
	wg.Wait()
	fmt.Println("sums", sums)
}
