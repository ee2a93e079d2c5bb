// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: readers read a table under RLock while a writer updates it
// under Lock.
package main

import (
	"fmt"
	"sync"
)

func main() {
	var mu sync.RWMutex
	var wg sync.WaitGroup
	table := map[string]int{"a": 1}
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				mu.RLock()
				_ = table["a"]
				mu.RUnlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for j := 0; j < 20; j++ {
			mu.Lock()
			table["a"]++
			mu.Unlock()
		}
	}()
	wg.Wait()
	fmt.Println("a", table["a"])
}
