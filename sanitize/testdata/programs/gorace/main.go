// Two goroutines bump a counter without a lock.
package main

import (
	"fmt"
	"sync"
)

var counter int

func bump(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 1000; i++ {
		counter++
	}
}

func main() {
	var wg sync.WaitGroup
	wg.Add(2)
	go bump(&wg)
	go bump(&wg)
	wg.Wait()
	fmt.Println(counter > 0)
}
