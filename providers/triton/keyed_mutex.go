package triton

import "sync"

// keyedMutex is one mutex per key (a machine UUID): lock waits while
// another caller holds the same key, never for another key. A key's entry
// is counted: lock adds its caller, holding or waiting, and the unlock it
// returns takes it off, deleting the entry when no caller is left. So the
// map holds only the keys in use at the moment, however many machines the
// cluster's nodes come and go on. The zero value is ready to use.
type keyedMutex struct {
	mu      sync.Mutex
	entries map[string]*keyedEntry
}

// keyedEntry is one key's mutex and how many callers hold it or wait for
// it (refs, guarded by keyedMutex.mu).
type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

// lock locks key's mutex and returns its unlock, to be called once.
func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.entries == nil {
		k.entries = map[string]*keyedEntry{}
	}
	e := k.entries[key]
	if e == nil {
		e = &keyedEntry{}
		k.entries[key] = e
	}
	e.refs++
	k.mu.Unlock()

	e.mu.Lock()
	return func() {
		// Unlocked first, then counted off: a caller that found the entry
		// meanwhile waits on it, and the entry goes only when nobody can.
		e.mu.Unlock()
		k.mu.Lock()
		defer k.mu.Unlock()
		if e.refs--; e.refs == 0 {
			delete(k.entries, key)
		}
	}
}
