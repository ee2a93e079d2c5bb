// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: four goroutines add to a counter; one of them forgets the lock.
// The unlocked increment races with every locked one.
package main

import (
	"fmt"
	"sync"
)

var counter int

func careful(mu *sync.Mutex) {
	mu.Lock()
	counter++ // RACE
	mu.Unlock()
}

func careless() {
	counter++ // RACE
}

func main() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if i == 3 {
					careless()
				} else {
					careful(&mu)
				}
			}
		}(i)
	}
	wg.Wait()
	fmt.Println("done")
}
