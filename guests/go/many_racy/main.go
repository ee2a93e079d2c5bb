// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: 10,000 goroutines alive at once; after the start signal each
// also bumps a shared counter without synchronization.
package main

import (
	"fmt"
	"sync"
)

const n = 10000

var bumps int32

func main() {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			bumps++ // RACE
		}()
	}
	close(start)
	wg.Wait()
	fmt.Println("done")
}
