// SPDX-License-Identifier: MIT OR Apache-2.0
// One racy test among race-free ones: TestSharedTotal's goroutines add to
// one variable without synchronization.
package testpkg

import (
	"sync"
	"testing"
)

func TestFine(t *testing.T) {
	done := make(chan int)
	go func() { done <- 1 }()
	if <-done != 1 {
		t.Fatal("lost")
	}
}

func TestSharedTotal(t *testing.T) {
	var wg sync.WaitGroup
	total := 0
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			total++ // RACE
		}()
	}
	wg.Wait()
	if total == 0 {
		t.Fatal("no increments")
	}
}
