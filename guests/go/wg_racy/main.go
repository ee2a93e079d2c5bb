// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: the main goroutine reads one worker's slot before
// WaitGroup.Wait.
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
			out[i] = i * i // RACE
		}(i)
	}
	peek := out[7] // RACE
	wg.Wait()
	fmt.Println("sum", out[7]+out[6], peek >= 0)
}
