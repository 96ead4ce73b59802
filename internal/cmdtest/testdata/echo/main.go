// Command echo is the command cmdtest's own tests build and run: it
// prints its environment's variable names to stdout, its arguments to
// stderr, and exits with status 3.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		fmt.Println(name)
	}
	fmt.Fprintln(os.Stderr, strings.Join(os.Args[1:], " "))
	os.Exit(3)
}
