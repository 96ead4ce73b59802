// Command docgen renders the generated reference docs (Service annotations
// and configuration of every provider) from the providers' Go structs, so
// the docs cannot drift from the code. `make docs` writes them; `make
// verify` runs it with -check, which fails when a committed file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", "docs", "docs directory")
	check := flag.Bool("check", false, "fail if a generated file differs from the committed one instead of writing it")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	var stale []string
	for _, p := range pages {
		want, err := p.render()
		if err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
		path := filepath.Join(dir, p.path)
		if check {
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				stale = append(stale, path)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("generated docs are stale, run 'make docs': %v", stale)
	}
	return nil
}
