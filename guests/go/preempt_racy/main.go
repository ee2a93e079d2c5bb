// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: as preempt_free, but main reads the spinning goroutine's counter
// after its sleep, and nothing orders that read after the increments.
package main

import (
	"fmt"
	"runtime"
	"time"
)

var counter int

func spin() {
	for {
		counter++ // RACE
	}
}

func main() {
	runtime.GOMAXPROCS(1)
	go spin()
	time.Sleep(20 * time.Millisecond)
	if counter < 0 { // RACE
		fmt.Println("negative")
	}
	fmt.Println("OK")
}
