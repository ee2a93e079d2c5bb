// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: results handed over through channels, unbuffered and
// buffered; each send happens before its receive.
package main

import "fmt"

type result struct{ sum int }

func main() {
	unbuf := make(chan *result)
	buf := make(chan *result, 4)
	for i := 0; i < 4; i++ {
		go func(i int) {
			r := &result{}
			for j := 0; j <= i*10; j++ {
				r.sum += j
			}
			if i%2 == 0 {
				unbuf <- r
			} else {
				buf <- r
			}
		}(i)
	}
	total := 0
	for i := 0; i < 2; i++ {
		total += (<-unbuf).sum
		total += (<-buf).sum
	}
	fmt.Println("total", total)
}
