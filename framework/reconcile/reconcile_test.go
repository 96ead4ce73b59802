package reconcile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// member is a load-balancer pool member as a cloud reports it.
type member struct {
	ID       string // assigned by the cloud
	Instance string
	Port     int
	Weight   int
}

func memberKey(m member) string { return fmt.Sprintf("%s:%d", m.Instance, m.Port) }

// listener is keyed by an int.
type listener struct {
	Port     int
	Protocol string
}

func listenerKey(l listener) int { return l.Port }

// sameWeight ignores the cloud-assigned ID.
func sameWeight(d, a member) bool { return d.Weight == a.Weight }

func TestDiff(t *testing.T) {
	tests := []struct {
		name      string
		desired   []member
		actual    []member
		equal     func(d, a member) bool
		want      Plan[member]
		wantEmpty bool
	}{
		{
			name:      "both empty",
			want:      Plan[member]{},
			wantEmpty: true,
		},
		{
			name:    "create all",
			desired: []member{{Instance: "b", Port: 80}, {Instance: "a", Port: 80}},
			want: Plan[member]{
				Create: []member{{Instance: "a", Port: 80}, {Instance: "b", Port: 80}},
			},
		},
		{
			name:   "delete all",
			actual: []member{{ID: "2", Instance: "b", Port: 80}, {ID: "1", Instance: "a", Port: 80}},
			want: Plan[member]{
				Delete: []member{{ID: "1", Instance: "a", Port: 80}, {ID: "2", Instance: "b", Port: 80}},
			},
		},
		{
			name:      "all unchanged",
			desired:   []member{{Instance: "a", Port: 80, Weight: 1}, {Instance: "a", Port: 443, Weight: 1}},
			actual:    []member{{Instance: "a", Port: 443, Weight: 1}, {Instance: "a", Port: 80, Weight: 1}},
			want:      Plan[member]{Unchanged: []member{{Instance: "a", Port: 443, Weight: 1}, {Instance: "a", Port: 80, Weight: 1}}},
			wantEmpty: true,
		},
		{
			name: "mixed",
			desired: []member{
				{Instance: "d", Port: 80, Weight: 1}, // create
				{Instance: "b", Port: 80, Weight: 2}, // update
				{Instance: "a", Port: 80, Weight: 1}, // unchanged
			},
			actual: []member{
				{Instance: "c", Port: 80, Weight: 1}, // delete
				{Instance: "a", Port: 80, Weight: 1},
				{Instance: "b", Port: 80, Weight: 1},
			},
			want: Plan[member]{
				Create: []member{{Instance: "d", Port: 80, Weight: 1}},
				Update: []Change[member]{{
					Desired: member{Instance: "b", Port: 80, Weight: 2},
					Actual:  member{Instance: "b", Port: 80, Weight: 1},
				}},
				Delete:    []member{{Instance: "c", Port: 80, Weight: 1}},
				Unchanged: []member{{Instance: "a", Port: 80, Weight: 1}},
			},
		},
		{
			name:    "default equal sees cloud-assigned fields",
			desired: []member{{Instance: "a", Port: 80}},
			actual:  []member{{ID: "m-1", Instance: "a", Port: 80}},
			want: Plan[member]{Update: []Change[member]{{
				Desired: member{Instance: "a", Port: 80},
				Actual:  member{ID: "m-1", Instance: "a", Port: 80},
			}}},
		},
		{
			name:      "custom equal ignores cloud-assigned fields; Unchanged holds actual",
			desired:   []member{{Instance: "a", Port: 80, Weight: 1}},
			actual:    []member{{ID: "m-1", Instance: "a", Port: 80, Weight: 1}},
			equal:     sameWeight,
			want:      Plan[member]{Unchanged: []member{{ID: "m-1", Instance: "a", Port: 80, Weight: 1}}},
			wantEmpty: true,
		},
		{
			name:    "custom equal detects change",
			desired: []member{{Instance: "a", Port: 80, Weight: 2}},
			actual:  []member{{ID: "m-1", Instance: "a", Port: 80, Weight: 1}},
			equal:   sameWeight,
			want: Plan[member]{Update: []Change[member]{{
				Desired: member{Instance: "a", Port: 80, Weight: 2},
				Actual:  member{ID: "m-1", Instance: "a", Port: 80, Weight: 1},
			}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Diff(tt.desired, tt.actual, memberKey, tt.equal)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Diff() mismatch (-want +got):\n%s", diff)
			}
			if got.Empty() != tt.wantEmpty {
				t.Errorf("Empty() = %v, want %v", got.Empty(), tt.wantEmpty)
			}
			if w := len(tt.want.Create) + len(tt.want.Update) + len(tt.want.Delete); got.Writes() != w {
				t.Errorf("Writes() = %d, want %d", got.Writes(), w)
			}
		})
	}
}

func TestDiffSortsByOrderedKey(t *testing.T) {
	desired := []listener{{443, "TCP"}, {80, "TCP"}, {8080, "TCP"}}
	actual := []listener{{9000, "UDP"}, {53, "UDP"}, {80, "HTTP"}}
	got, err := Diff(desired, actual, listenerKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted numerically, not as strings: 443 before 8080.
	want := Plan[listener]{
		Create: []listener{{443, "TCP"}, {8080, "TCP"}},
		Update: []Change[listener]{{Desired: listener{80, "TCP"}, Actual: listener{80, "HTTP"}}},
		Delete: []listener{{53, "UDP"}, {9000, "UDP"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Diff() mismatch (-want +got):\n%s", diff)
	}
}

func TestDiffDuplicateKeys(t *testing.T) {
	tests := []struct {
		name            string
		desired, actual []member
		wantInErr       []string
	}{
		{
			name:      "in desired",
			desired:   []member{{Instance: "b", Port: 80}, {Instance: "a", Port: 80}, {Instance: "b", Port: 80, Weight: 3}},
			wantInErr: []string{`"b:80"`, "desired"},
		},
		{
			name:      "in actual",
			actual:    []member{{ID: "1", Instance: "a", Port: 443}, {ID: "2", Instance: "a", Port: 443}},
			wantInErr: []string{`"a:443"`, "actual"},
		},
		{
			name:      "smallest duplicate named whatever the order",
			desired:   []member{{Instance: "z", Port: 1}, {Instance: "c", Port: 1}, {Instance: "z", Port: 1}, {Instance: "c", Port: 1}},
			wantInErr: []string{`"c:1"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Diff(tt.desired, tt.actual, memberKey, nil)
			if !errors.Is(err, ErrDuplicateKey) {
				t.Fatalf("Diff() error = %v, want ErrDuplicateKey", err)
			}
			for _, s := range tt.wantInErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %s", err, s)
				}
			}
		})
	}
}

func TestDiffDeterministicUnderShuffle(t *testing.T) {
	desired, actual := members(200)
	want, err := Diff(desired, actual, memberKey, sameWeight)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Create) == 0 || len(want.Update) == 0 || len(want.Delete) == 0 || len(want.Unchanged) == 0 {
		t.Fatalf("test data should produce every kind of change, got %d/%d/%d/%d",
			len(want.Create), len(want.Update), len(want.Delete), len(want.Unchanged))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		r.Shuffle(len(desired), func(i, j int) { desired[i], desired[j] = desired[j], desired[i] })
		r.Shuffle(len(actual), func(i, j int) { actual[i], actual[j] = actual[j], actual[i] })
		got, err := Diff(desired, actual, memberKey, sameWeight)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("shuffle %d: plan changed (-first +now):\n%s", i, diff)
		}
	}
}

func TestDiffDoesNotModifyInputs(t *testing.T) {
	desired := []member{{Instance: "b"}, {Instance: "a"}}
	actual := []member{{Instance: "c"}, {Instance: "b", Weight: 1}}
	wantDesired, wantActual := append([]member(nil), desired...), append([]member(nil), actual...)
	if _, err := Diff(desired, actual, memberKey, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantDesired, desired); diff != "" {
		t.Errorf("desired modified (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantActual, actual); diff != "" {
		t.Errorf("actual modified (-want +got):\n%s", diff)
	}
}

// members returns n desired members and the actual members of a pool in
// which about a tenth are missing, a tenth stale and a tenth reweighted.
func members(n int) (desired, actual []member) {
	for i := range n {
		m := member{Instance: fmt.Sprintf("droplet-%05d", i), Port: 30080, Weight: 1}
		desired = append(desired, m)
		m.ID = fmt.Sprintf("m-%d", i)
		switch i % 10 {
		case 0: // not yet in the pool
		case 1: // reweighted
			m.Weight = 2
			actual = append(actual, m)
		case 2: // node gone
			m.Instance += "-old"
			actual = append(actual, m)
		default:
			actual = append(actual, m)
		}
	}
	return desired, actual
}

func BenchmarkDiff(b *testing.B) {
	desired, actual := members(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Diff(desired, actual, memberKey, sameWeight); err != nil {
			b.Fatal(err)
		}
	}
}
