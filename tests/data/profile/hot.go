// A Go program with one hot function, for the profile tests.
package main

import "os"

//go:noinline
func hotLoop(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + uint64(i)
	}
	return x
}

func main() {
	if hotLoop(60000000) == 42 {
		os.Exit(3)
	}
}
