// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: a worker writes its result and then signals on a channel, but
// the main goroutine reads the result before it receives.
package main

import "fmt"

type result struct{ sum int }

func main() {
	r := &result{}
	done := make(chan bool, 1)
	go func() {
		for j := 0; j < 100; j++ {
			r.sum += j // RACE
		}
		done <- true
	}()
	early := r.sum // RACE
	<-done
	fmt.Println("late", r.sum, early >= 0)
}
