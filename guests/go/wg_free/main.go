// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: workers fill their own slots; the main goroutine reads them
// after WaitGroup.Wait.
package main

import (
	"fmt"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	out := make([]int, 8)
	for i := range out {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i] = i * i
		}(i)
	}
	wg.Wait()
	sum := 0
	for _, v := range out {
		sum += v
	}
	fmt.Println("sum", sum)
}
