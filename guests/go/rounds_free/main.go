// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: goroutines started round after round, each round waited
// for with a WaitGroup. The first goroutine of a round writes the shared
// variable before Done, so the next round's goroutines come after it (and
// may take over the ended goroutines' language threads); so does main's
// next increment of the loop variable the goroutines read.
package main

import (
	"fmt"
	"sync"
)

func main() {
	last := 0
	for r := 0; r < 300; r++ {
		var wg sync.WaitGroup
		for i := 0; i < 3; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if i == 0 {
					last = r
				}
			}(i)
		}
		wg.Wait()
	}
	fmt.Println("last", last)
}
