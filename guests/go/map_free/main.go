// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a map filled by a worker and read by the main goroutine
// after the worker's channel send.
package main

import "fmt"

func main() {
	m := map[int]int{}
	done := make(chan bool)
	go func() {
		for i := 0; i < 10; i++ {
			m[i] = i * i
		}
		done <- true
	}()
	<-done
	fmt.Println("m[9]", m[9], len(m))
}
