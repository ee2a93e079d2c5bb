// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: with GOMAXPROCS=1 goroutines take turns on one kernel
// thread; a channel orders their accesses.
package main

import (
	"fmt"
	"runtime"
)

func main() {
	runtime.GOMAXPROCS(1)
	shared := 0
	token := make(chan bool, 1)
	done := make(chan bool)
	token <- true
	for i := 0; i < 4; i++ {
		go func() {
			for j := 0; j < 10; j++ {
				<-token
				shared++
				token <- true
				runtime.Gosched()
			}
			done <- true
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
	<-token
	fmt.Println("shared", shared)
}
