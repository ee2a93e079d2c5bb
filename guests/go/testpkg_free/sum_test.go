// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free tests: partial sums handed back over a channel.
package testpkg

import "testing"

func TestSumsOverChannel(t *testing.T) {
	parts := make(chan int)
	for i := 0; i < 4; i++ {
		go func(i int) { parts <- i * 10 }(i)
	}
	total := 0
	for i := 0; i < 4; i++ {
		total += <-parts
	}
	if total != 60 {
		t.Fatalf("total %d", total)
	}
}
