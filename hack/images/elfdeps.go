package main

import (
	"bytes"
	"debug/elf"
	"errors"
)

// errNotELF is elfDeps's error for a file that is no ELF file (a script).
var errNotELF = errors.New("not an ELF file")

// elfDeps is the dynamic loader (PT_INTERP) and the shared libraries
// (DT_NEEDED) of the ELF file b; a static file has neither.
func elfDeps(b []byte) (interp string, needed []string, err error) {
	if !bytes.HasPrefix(b, []byte(elf.ELFMAG)) {
		return "", nil, errNotELF
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		raw := make([]byte, p.Filesz)
		if _, err := p.ReadAt(raw, 0); err != nil {
			return "", nil, err
		}
		interp = string(bytes.TrimRight(raw, "\x00"))
	}
	needed, err = f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return "", nil, err
	}
	return interp, needed, nil
}
