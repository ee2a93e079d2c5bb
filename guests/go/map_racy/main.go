// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: the main goroutine looks a key up while a worker may still be
// inserting; the map's own accesses race (Go reports the map operations).
package main

import (
	"fmt"
	"time"
)

func main() {
	m := map[int]int{}
	done := make(chan bool)
	go func() {
		m[1] = 1 // RACE
		done <- true
	}()
	time.Sleep(10 * time.Millisecond)
	_, ok := m[1] // RACE
	<-done
	fmt.Println("len", len(m), ok || !ok)
}
