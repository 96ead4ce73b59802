package simkit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// MutationKind is what Mutation does to a JSON body: the first fuzz byte
// chooses it (modulo NumMutationKinds).
type MutationKind byte

// The mutations of a JSON body. The fuzz bytes after the kind choose the
// value it applies to, in the order a walk of the decoded body meets
// them (object keys sorted), and what it becomes.
const (
	// MutateTruncate cuts the body at an offset the next two bytes
	// choose (scaled to the body's length).
	MutateTruncate MutationKind = iota
	// MutateRetype gives a value another type: a string, a number (also
	// a fraction and one no integer holds), a bool, null, an object or
	// an array.
	MutateRetype
	// MutateUnknownEnum replaces a string with a value the API never
	// sends: an unknown word, "", or the string in the other case.
	MutateUnknownEnum
	// MutateDropField removes a member of an object.
	MutateDropField
	// MutateHugeArray repeats an element of an array until it holds
	// HugeArrayItems elements or HugeArrayBytes bytes.
	MutateHugeArray
	// MutateDuplicate inserts a copy of an array element after it.
	MutateDuplicate
	// MutateEmpty empties an array or an object.
	MutateEmpty
	// NumMutationKinds counts the kinds.
	NumMutationKinds
)

// Bounds of MutateHugeArray, and of the values a mutation walks.
const (
	HugeArrayItems = 10_000
	HugeArrayBytes = 4 << 20
	maxWalkedNodes = 20_000
)

// UnknownEnumValue is the unknown word MutateUnknownEnum writes.
const UnknownEnumValue = "fuzz-unknown-value"

// Mutation returns a Fault.Mutate driven by data, a fuzzer's bytes: the
// same data mutates the same body the same way. A JSON body is decoded,
// one of its values chosen and changed as the MutationKind in data[0]
// says, and encoded again (object keys sorted); a body that is not JSON
// gets a byte-level mutation (cut, a byte flipped, bytes inserted or
// removed); an empty body stays empty. A mutation with nothing to apply
// to (no array to grow) cuts the body instead.
func Mutation(data []byte) func(status int, body []byte) []byte {
	data = slices.Clone(data)
	return func(_ int, body []byte) []byte {
		if len(body) == 0 {
			return body
		}
		in := &fuzzBytes{data: data}
		kind := MutationKind(in.next() % byte(NumMutationKinds))
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var root any
		if err := dec.Decode(&root); err != nil || dec.More() {
			return mutateBytes(kind, in, body)
		}
		if kind != MutateTruncate {
			if out, ok := mutateJSON(kind, in, root); ok {
				return out
			}
		}
		return body[:in.offset(len(body))]
	}
}

// TruncateHalf is the mutation Fault.Truncate applies: the body's first
// half.
func TruncateHalf(_ int, body []byte) []byte { return body[:len(body)/2] }

// mutation is what f does to an answer it lets through, nil for nothing.
func (f Fault) mutation() func(int, []byte) []byte {
	switch {
	case f.Mutate != nil && f.Truncate:
		return func(status int, body []byte) []byte { return TruncateHalf(status, f.Mutate(status, body)) }
	case f.Truncate:
		return TruncateHalf
	default:
		return f.Mutate
	}
}

// fuzzBytes hands out the fuzzer's bytes; past their end, zeros.
type fuzzBytes struct{ data []byte }

func (f *fuzzBytes) next() byte {
	if len(f.data) == 0 {
		return 0
	}
	b := f.data[0]
	f.data = f.data[1:]
	return b
}

// intn is a choice among n, from the next two bytes (modulo n): a seed
// names the kth candidate with 0, k.
func (f *fuzzBytes) intn(n int) int {
	v := int(f.next())<<8 | int(f.next())
	if n <= 1 {
		return 0
	}
	return v % n
}

// offset is a position in a body of n bytes, from the next two bytes
// scaled to n, so that the same bytes cut a small body and a large one
// alike.
func (f *fuzzBytes) offset(n int) int {
	v := int(f.next())<<8 | int(f.next())
	return v * n / (1 << 16)
}

// mutateBytes changes a body that is not JSON.
func mutateBytes(kind MutationKind, in *fuzzBytes, body []byte) []byte {
	at := in.offset(len(body))
	switch kind % 4 {
	case 1:
		out := slices.Clone(body)
		out[at] ^= in.next() | 1
		return out
	case 2:
		n := int(in.next()%8) + 1
		ins := make([]byte, n)
		for i := range ins {
			ins[i] = in.next()
		}
		return slices.Insert(slices.Clone(body), at, ins...)
	case 3:
		end := min(len(body), at+int(in.next())+1)
		return slices.Delete(slices.Clone(body), at, end)
	default:
		return body[:at]
	}
}

// jsonNode is a value met walking a decoded body, with how to change it
// where it sits.
type jsonNode struct {
	// path is where the value sits, as a JSON pointer ("" for the root).
	path  string
	value any
	// set replaces the value in its parent (or the root).
	set func(any)
	// remove deletes an object member, nil for any other value.
	remove func()
	// duplicate inserts a copy of an array element after it, nil for any
	// other value.
	duplicate func()
}

// mutateJSON applies kind to a value of root that in chooses and encodes
// the result; false when root has no value kind applies to.
func mutateJSON(kind MutationKind, in *fuzzBytes, root any) ([]byte, bool) {
	n, ok := pick(kind, in, &root)
	if !ok {
		return nil, false
	}
	switch kind {
	case MutateRetype:
		n.set(retype(n.value, in.next()))
	case MutateUnknownEnum:
		n.set(unknownEnum(n.value.(string), in.next()))
	case MutateDropField:
		n.remove()
	case MutateHugeArray:
		arr := n.value.([]any)
		n.set(huge(arr[in.intn(len(arr))]))
	case MutateDuplicate:
		n.duplicate()
	case MutateEmpty:
		if _, ok := n.value.([]any); ok {
			n.set([]any{})
		} else {
			n.set(map[string]any{})
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, false
	}
	return out.Bytes(), true
}

// pick chooses, by in, the value of root that kind changes.
func pick(kind MutationKind, in *fuzzBytes, root *any) (jsonNode, bool) {
	var candidates []jsonNode
	for _, n := range walk(root) {
		if applies(kind, n) {
			candidates = append(candidates, n)
		}
	}
	if len(candidates) == 0 {
		return jsonNode{}, false
	}
	return candidates[in.intn(len(candidates))], true
}

// MutatesArray reports whether Mutation(data) changes body by emptying
// an array (a list the cloud answers with none of its items: a
// well-formed answer, unlike the others), and where (a JSON pointer).
func MutatesArray(data, body []byte) (path string, ok bool) {
	kind, path, value, ok := mutated(data, body)
	if _, isArray := value.([]any); !ok || kind != MutateEmpty || !isArray {
		return "", false
	}
	return path, true
}

// MutatedPath reports which value of body Mutation(data) changes, as a
// JSON pointer, and how; false for a body that is not JSON, or a mutation
// that cuts it.
func MutatedPath(data, body []byte) (kind MutationKind, path string, ok bool) {
	kind, path, _, ok = mutated(data, body)
	return kind, path, ok
}

func mutated(data, body []byte) (MutationKind, string, any, bool) {
	in := &fuzzBytes{data: data}
	kind := MutationKind(in.next() % byte(NumMutationKinds))
	if kind == MutateTruncate {
		return kind, "", nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil || dec.More() {
		return kind, "", nil, false
	}
	n, found := pick(kind, in, &root)
	return kind, n.path, n.value, found
}

// pointerEscaper escapes a key as a JSON pointer's segment (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// applies reports whether kind can change n.
func applies(kind MutationKind, n jsonNode) bool {
	switch kind {
	case MutateRetype:
		return true
	case MutateUnknownEnum:
		_, ok := n.value.(string)
		return ok
	case MutateDropField:
		return n.remove != nil
	case MutateDuplicate:
		return n.duplicate != nil
	case MutateHugeArray:
		arr, ok := n.value.([]any)
		return ok && len(arr) > 0
	case MutateEmpty:
		switch v := n.value.(type) {
		case []any:
			return len(v) > 0
		case map[string]any:
			return len(v) > 0
		}
	}
	return false
}

// walk lists root's values, root first, then depth first with object
// keys in sorted order, at most maxWalkedNodes of them.
func walk(root *any) []jsonNode {
	var nodes []jsonNode
	var visit func(n jsonNode)
	visit = func(n jsonNode) {
		if len(nodes) >= maxWalkedNodes {
			return
		}
		nodes = append(nodes, n)
		switch v := n.value.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				visit(jsonNode{path: n.path + "/" + pointerEscaper.Replace(k), value: v[k], set: func(x any) { v[k] = x }, remove: func() { delete(v, k) }})
			}
		case []any:
			for j := range v {
				visit(jsonNode{
					path:      n.path + "/" + strconv.Itoa(j),
					value:     v[j],
					set:       func(x any) { v[j] = x },
					duplicate: func() { n.set(slices.Insert(slices.Clone(v), j+1, deepCopy(v[j]))) },
				})
			}
		}
	}
	visit(jsonNode{value: *root, set: func(v any) { *root = v }})
	return nodes
}

// retypeValues are what MutateRetype writes: one of each JSON type, and
// numbers that decode into no integer.
var retypeValues = []any{
	UnknownEnumValue, json.Number("-1"), json.Number("1.5"), json.Number("1e300"),
	true, false, nil, map[string]any{}, []any{},
}

// retype returns a value of another JSON type than v, chosen by b.
func retype(v any, b byte) any {
	var others []any
	for _, x := range retypeValues {
		if jsonType(x) != jsonType(v) {
			others = append(others, x)
		}
	}
	return others[int(b)%len(others)]
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// unknownEnum returns a string that s never is, chosen by b.
func unknownEnum(s string, b byte) string {
	other := strings.ToUpper(s)
	if other == s {
		other = strings.ToLower(s)
	}
	choices := []string{UnknownEnumValue, "", other}
	if other == s {
		choices = choices[:2]
	}
	if s == "" {
		choices = choices[:1]
	}
	return choices[int(b)%len(choices)]
}

// huge repeats elem HugeArrayItems times, or fewer to stay within
// HugeArrayBytes.
func huge(elem any) []any {
	data, _ := json.Marshal(elem)
	n := min(HugeArrayItems, HugeArrayBytes/cmp.Or(len(data)+1, 1))
	out := make([]any, max(n, 2))
	for i := range out {
		out[i] = elem
	}
	return out
}

// deepCopy copies a decoded JSON value, so that a duplicate changes
// apart from its original.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// mutatingWriter holds an answer back and sends the body its mutation
// makes of it, with a Content-Length to match (Fault.Mutate,
// Fault.Truncate).
type mutatingWriter struct {
	http.ResponseWriter
	mutate func(int, []byte) []byte
	status int
	body   []byte
}

func (m *mutatingWriter) WriteHeader(status int) { m.status = status }

func (m *mutatingWriter) Write(p []byte) (int, error) {
	m.body = append(m.body, p...)
	return len(p), nil
}

func (m *mutatingWriter) flush() {
	status := cmp.Or(m.status, http.StatusOK)
	body := m.mutate(status, m.body)
	m.ResponseWriter.Header().Set("Content-Length", strconv.Itoa(len(body)))
	m.ResponseWriter.WriteHeader(status)
	_, _ = m.ResponseWriter.Write(body)
}
