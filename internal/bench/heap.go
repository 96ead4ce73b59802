package main

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// holder is a place in the CCM that holds heap memory: the bytes in use,
// in a heap profile, that were allocated under it.
type holder struct {
	Where string `json:"where"`
	Bytes int64  `json:"bytes"`
}

// heapAtPeak is what held the CCM's heap when its anonymous memory was at
// its largest during a step: the profile taken then, summarized.
type heapAtPeak struct {
	// AnonBytes is the anonymous RSS that triggered the profile.
	AnonBytes int64 `json:"anonBytes"`
	// InUseBytes is the profile's heap in use (sampled, so approximate).
	InUseBytes int64    `json:"inUseBytes"`
	Top        []holder `json:"top"`
}

// topHolders sums a heap profile's inuse_space by holder and returns the
// n largest, and the total in use.
func topHolders(prof []byte, n int) ([]holder, int64, error) {
	p, err := profile.Parse(bytes.NewReader(prof))
	if err != nil {
		return nil, 0, fmt.Errorf("parsing the heap profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, 0, fmt.Errorf("the heap profile has no inuse_space")
	}
	by := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		if v == 0 {
			continue
		}
		total += v
		by[attribute(s.Location)] += v
	}
	out := make([]holder, 0, len(by))
	for where, b := range by {
		out = append(out, holder{where, b})
	}
	slices.SortFunc(out, func(a, b holder) int { return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Where, b.Where)) })
	return out[:min(n, len(out))], total, nil
}

// attribute names the holder of an allocation from its stack (leaf
// first): the innermost frame of ccmkit's own code says which of our
// jobs holds it; without one, the innermost informer or client-go cache
// frame (the watch caches); without either, the innermost frame outside
// the standard library and the runtime's helpers.
func attribute(stack []*profile.Location) string {
	var frames []string
	for _, loc := range stack {
		for _, line := range loc.Line {
			if line.Function != nil {
				frames = append(frames, line.Function.Name)
			}
		}
	}
	for _, prefer := range []func(string) bool{
		func(f string) bool { return strings.HasPrefix(f, "github.com/ccmkit/ccmkit/") },
		func(f string) bool {
			return strings.HasPrefix(f, "k8s.io/client-go/tools/cache.") || strings.HasPrefix(f, "k8s.io/client-go/informers")
		},
		func(f string) bool {
			host, _, module := strings.Cut(f, "/") // a module's path starts with a host name
			return module && strings.Contains(host, ".") && !strings.HasPrefix(f, "k8s.io/apimachinery/") && !strings.HasPrefix(f, "sigs.k8s.io/json")
		},
	} {
		for _, f := range frames {
			if prefer(f) {
				return shortFunc(f)
			}
		}
	}
	if len(frames) > 0 {
		return shortFunc(frames[0])
	}
	return "?"
}

// shortFunc drops the module path of ccmkit's functions:
// "github.com/ccmkit/ccmkit/framework.(*x).y" is "framework.(*x).y".
func shortFunc(f string) string {
	return strings.TrimPrefix(f, "github.com/ccmkit/ccmkit/")
}

// String is the summary as the table prints it.
func (h *heapAtPeak) String() string {
	if h == nil {
		return ""
	}
	parts := make([]string, len(h.Top))
	for i, t := range h.Top {
		parts[i] = fmt.Sprintf("%s %.1f", t.Where, mib(t.Bytes))
	}
	return fmt.Sprintf("at %.0f MiB anon, heap in use %.1f MiB: %s", mib(h.AnonBytes), mib(h.InUseBytes), strings.Join(parts, "; "))
}
