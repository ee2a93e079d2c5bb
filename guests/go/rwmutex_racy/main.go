// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: a goroutine writes the shared value under RLock, which orders it
// with writers but not with the other readers.
package main

import (
	"fmt"
	"sync"
)

var hits int

func main() {
	var mu sync.RWMutex
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				mu.RLock()
				hits++ // RACE
				mu.RUnlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println("done")
}
