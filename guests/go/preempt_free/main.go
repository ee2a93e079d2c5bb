// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: with one processor, a goroutine that never yields (a loop
// with no call Go may stop at, only the race runtime's) keeps running
// until the runtime preempts it by a signal (asynchronous preemption,
// acted on only at a safe point of Go code); main then wakes from its
// sleep and ends the program. Only the spinning goroutine touches its counter.
package main

import (
	"fmt"
	"runtime"
	"time"
)

var counter int

func spin() {
	for {
		counter++
	}
}

func main() {
	runtime.GOMAXPROCS(1)
	go spin()
	time.Sleep(20 * time.Millisecond)
	fmt.Println("OK")
}
