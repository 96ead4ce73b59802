// Command floor is what `go run ./internal/bench -floor` measures: a
// process that links a set of packages, runs their initialization and
// does nothing else. Each build tag links one more layer of what a CCM is
// made of (floorLayers in ../floor.go names them); its memory when main
// starts is what that layer costs before the CCM does any work.
//
// It writes one byte to stdout once main runs, then waits for its stdin
// to close, so that the bench reads its /proc/<pid>/status at that point.
package main

import "os"

func main() {
	if _, err := os.Stdout.Write([]byte{'\n'}); err != nil {
		os.Exit(1)
	}
	_, _ = os.Stdin.Read(make([]byte, 1))
}
