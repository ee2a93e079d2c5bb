// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: the writer sets the atomic flag before it writes the last
// element, so the reader's read of that element is not ordered after the
// write.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

var data [4]int
var ready int32

func main() {
	done := make(chan bool)
	go func() {
		data[0], data[1], data[2] = 1, 2, 3
		atomic.StoreInt32(&ready, 1)
		data[3] = 4 // RACE
		done <- true
	}()
	for atomic.LoadInt32(&ready) == 0 {
		runtime.Gosched()
	}
	last := data[3] // RACE
	<-done
	fmt.Println("first", data[0]+data[1]+data[2], last >= 0)
}
