// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: 10,000 goroutines alive at once, each writing its own slot;
// they wait on a channel the main goroutine closes, then finish.
package main

import (
	"fmt"
	"sync"
)

const n = 10000

func main() {
	var wg sync.WaitGroup
	start := make(chan struct{})
	out := make([]int32, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i] = 1
			<-start
			out[i]++
		}(i)
	}
	close(start)
	wg.Wait()
	sum := 0
	for _, v := range out {
		sum += int(v)
	}
	fmt.Println("sum", sum)
}
