// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: data published with sync/atomic: the writer stores the data,
// then the flag; the reader waits for the flag, then reads the data.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

var data [4]int
var ready int32
var hits int64

func main() {
	go func() {
		for i := range data {
			data[i] = i + 1
		}
		atomic.StoreInt32(&ready, 1)
	}()
	for atomic.LoadInt32(&ready) == 0 {
		runtime.Gosched()
	}
	sum := 0
	for _, v := range data {
		sum += v
	}
	done := make(chan bool)
	for i := 0; i < 3; i++ {
		go func() { atomic.AddInt64(&hits, 1); done <- true }()
	}
	for i := 0; i < 3; i++ {
		<-done
	}
	fmt.Println("sum", sum, "hits", atomic.LoadInt64(&hits))
}
