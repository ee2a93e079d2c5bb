// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: goroutines started round after round, each round waited for with
// a WaitGroup, but the first goroutine of a round writes the shared
// variable after Done: nothing orders that write with the next round's.
package main

import (
	"fmt"
	"sync"
)

var last int

func main() {
	for r := 0; r < 300; r++ {
		var wg sync.WaitGroup
		for i := 0; i < 3; i++ {
			wg.Add(1)
			go func(i, r int) {
				wg.Done()
				if i == 0 {
					last = r // RACE
				}
			}(i, r)
		}
		wg.Wait()
	}
	fmt.Println("rounds", 300)
}
