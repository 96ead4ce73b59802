package simkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mutateBody is the body TestMutation mutates. Walked, its values are:
// 0 the root, 1 items, 2 items[0], 3 items[0].id, 4 items[0].status,
// 5 items[1], 6 items[1].id, 7 items[1].status, 8 total.
const mutateBody = `{"items":[{"id":1,"status":"active"},{"id":2,"status":"new"}],"total":2}` + "\n"

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", data, err)
	}
	return v
}

// TestMutation: each kind changes the value the fuzz bytes choose, and
// only that one.
func TestMutation(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"retype a number to null", []byte{byte(MutateRetype), 0, 8, 3}, `{"items":[{"id":1,"status":"active"},{"id":2,"status":"new"}],"total":null}`},
		{"retype an object to a string", []byte{byte(MutateRetype), 0, 2, 0}, `{"items":["fuzz-unknown-value",{"id":2,"status":"new"}],"total":2}`},
		{"retype an array to a number", []byte{byte(MutateRetype), 0, 1, 3}, `{"items":1e300,"total":2}`},
		{"unknown enum", []byte{byte(MutateUnknownEnum), 0, 1, 0}, `{"items":[{"id":1,"status":"active"},{"id":2,"status":"fuzz-unknown-value"}],"total":2}`},
		{"enum in the other case", []byte{byte(MutateUnknownEnum), 0, 0, 2}, `{"items":[{"id":1,"status":"ACTIVE"},{"id":2,"status":"new"}],"total":2}`},
		{"empty enum", []byte{byte(MutateUnknownEnum), 0, 0, 1}, `{"items":[{"id":1,"status":""},{"id":2,"status":"new"}],"total":2}`},
		{"drop a field", []byte{byte(MutateDropField), 0, 2}, `{"items":[{"id":1},{"id":2,"status":"new"}],"total":2}`},
		{"duplicate an element", []byte{byte(MutateDuplicate), 0, 0}, `{"items":[{"id":1,"status":"active"},{"id":1,"status":"active"},{"id":2,"status":"new"}],"total":2}`},
		{"empty an array", []byte{byte(MutateEmpty), 0, 1}, `{"items":[],"total":2}`},
		{"empty an object", []byte{byte(MutateEmpty), 0, 3}, `{"items":[{"id":1,"status":"active"},{}],"total":2}`},
		{"empty the root", []byte{byte(MutateEmpty), 0, 0}, `{}`},
		{"the kind wraps around", []byte{byte(MutateDropField + NumMutationKinds), 0, 2}, `{"items":[{"id":1},{"id":2,"status":"new"}],"total":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Mutation(tc.data)(http.StatusOK, []byte(mutateBody))
			if diff := cmp.Diff(decodeJSON(t, []byte(tc.want)), decodeJSON(t, got)); diff != "" {
				t.Errorf("mutated body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMutationTruncates(t *testing.T) {
	got := Mutation([]byte{byte(MutateTruncate), 0x80, 0})(http.StatusOK, []byte(mutateBody))
	if want := mutateBody[:len(mutateBody)/2]; string(got) != want {
		t.Errorf("truncated = %q, want %q", got, want)
	}
	// A mutation with nothing to apply to cuts the body instead.
	noArrays := []byte(`{"a":"b"}`)
	if got := Mutation([]byte{byte(MutateHugeArray), 0x80, 0})(http.StatusOK, noArrays); string(got) != `{"a"` {
		t.Errorf("huge array of a body without arrays = %q, want it cut in half", got)
	}
}

func TestMutationHugeArray(t *testing.T) {
	mutate := Mutation([]byte{byte(MutateHugeArray), 0, 0, 0, 1})
	got := mutate(http.StatusOK, []byte(mutateBody))
	var body struct {
		Items []map[string]any `json:"items"`
		Total int              `json:"total"`
	}
	if err := json.Unmarshal(got, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Items) != HugeArrayItems || body.Total != 2 {
		t.Fatalf("huge array: %d items, total %d; want %d items", len(body.Items), body.Total, HugeArrayItems)
	}
	for i, it := range body.Items {
		if it["status"] != "new" {
			t.Fatalf("item %d = %v, want a copy of items[1]", i, it)
		}
	}
	if again := mutate(http.StatusOK, []byte(mutateBody)); !bytes.Equal(got, again) {
		t.Error("the same fuzz bytes mutated the same body differently")
	}
	// A large element repeats only up to HugeArrayBytes.
	big, _ := json.Marshal([]string{string(bytes.Repeat([]byte("x"), 1<<20))})
	if got := mutate(http.StatusOK, big); len(got) > HugeArrayBytes+1<<20 {
		t.Errorf("huge array of a 1 MB element: %d bytes, want at most about %d", len(got), HugeArrayBytes)
	}
}

func TestMutationOfNonJSON(t *testing.T) {
	page := []byte("<html>Bad Gateway</html>")
	for kind, check := range map[MutationKind]func([]byte) bool{
		0: func(b []byte) bool { return string(b) == "<html>Bad " },
		1: func(b []byte) bool { return len(b) == len(page) && !bytes.Equal(b, page) },
		2: func(b []byte) bool { return len(b) == len(page)+2 },
		3: func(b []byte) bool { return len(b) == len(page)-2 },
	} {
		got := Mutation([]byte{byte(kind), 0x70, 0, 1, 'a', 'b'})(http.StatusBadGateway, page)
		if !check(got) {
			t.Errorf("byte-level mutation %d of %q = %q", kind, page, got)
		}
	}
	if got := Mutation([]byte{byte(MutateHugeArray)})(http.StatusNoContent, nil); len(got) != 0 {
		t.Errorf("an empty body became %q", got)
	}
	// JSON followed by more is not JSON.
	if got := Mutation([]byte{byte(MutateHugeArray), 0, 0})(http.StatusOK, []byte(`{"a":1} {}`)); string(got) != "" {
		t.Errorf("two JSON values: %q, want a byte-level cut", got)
	}
}

// TestMutateFault: a fault's Mutate changes the answer the endpoint
// produced and keeps its status, with a Content-Length to match.
func TestMutateFault(t *testing.T) {
	k, ts := newTestServer(t, Options{})
	var seen []int
	k.Inject(Fault{Op: "GET /things/{id}", Count: 1, Mutate: func(status int, body []byte) []byte {
		seen = append(seen, status)
		return append([]byte(`{"x":`), body...)
	}})
	r := do(t, ts, "GET", "/things/abc", "", true)
	body, err := io.ReadAll(r.Body)
	want := `{"x":{"id":"abc"}` + "\n"
	if err != nil || r.StatusCode != http.StatusOK || string(body) != want || r.ContentLength != int64(len(want)) {
		t.Errorf("mutated: %d %q (length %d), %v; want 200 %q", r.StatusCode, body, r.ContentLength, err, want)
	}
	if !cmp.Equal(seen, []int{http.StatusOK}) {
		t.Errorf("Mutate saw statuses %v, want [200]", seen)
	}
	// Mutate and Truncate: the mutated body's first half.
	k.Inject(Fault{Op: "GET /things/{id}", Count: 1, Truncate: true, Mutate: func(_ int, b []byte) []byte { return append(b, b...) }})
	r = do(t, ts, "GET", "/things/abc", "", true)
	if body, _ := io.ReadAll(r.Body); string(body) != `{"id":"abc"}`+"\n" {
		t.Errorf("mutated and truncated: %q", body)
	}
	// An unauthorized answer is mutated too: it is what the client gets.
	k.Inject(Fault{Count: 1, Mutate: Mutation([]byte{byte(MutateUnknownEnum), 0, 0, 0})})
	r = do(t, ts, "GET", "/things/abc", "", false)
	if body, _ := io.ReadAll(r.Body); r.StatusCode != http.StatusUnauthorized || string(body) != `{"error":"fuzz-unknown-value"}`+"\n" {
		t.Errorf("mutated 401: %d %q", r.StatusCode, body)
	}
}

func TestMutatesArray(t *testing.T) {
	if path, ok := MutatesArray([]byte{byte(MutateEmpty), 0, 1}, []byte(mutateBody)); !ok || path != "/items" {
		t.Errorf("emptying items: %q, %v; want /items, true", path, ok)
	}
	if path, ok := MutatesArray([]byte{byte(MutateEmpty), 0, 3}, []byte(mutateBody)); ok {
		t.Errorf("emptying an object: %q, true; want false", path)
	}
	if _, ok := MutatesArray([]byte{byte(MutateDropField), 0, 1}, []byte(mutateBody)); ok {
		t.Error("dropping a field empties no array")
	}
}

func TestMutatedPath(t *testing.T) {
	body := []byte(`{"labels":{"a/b":"x","c~d":"y"},"name":"n"}`)
	for _, c := range []struct {
		data []byte
		kind MutationKind
		path string
	}{
		// Members in the walk's order: /labels, /labels/a~1b, /labels/c~0d, /name.
		{[]byte{byte(MutateDropField), 0, 1}, MutateDropField, "/labels/a~1b"},
		{[]byte{byte(MutateDropField), 0, 2}, MutateDropField, "/labels/c~0d"},
		{[]byte{byte(MutateEmpty), 0, 1}, MutateEmpty, "/labels"}, // 0 is the root
	} {
		kind, path, ok := MutatedPath(c.data, body)
		if !ok || kind != c.kind || path != c.path {
			t.Errorf("MutatedPath(%x) = %v, %q, %v; want %v, %q, true", c.data, kind, path, ok, c.kind, c.path)
		}
	}
	if _, _, ok := MutatedPath([]byte{byte(MutateTruncate), 0, 1}, body); ok {
		t.Error("a cut body has no mutated path")
	}
	if _, _, ok := MutatedPath([]byte{byte(MutateDropField), 0, 1}, []byte("not json")); ok {
		t.Error("a body that is not JSON has no mutated path")
	}
}
