package simkit

import (
	"slices"
	"testing"
)

func TestLifecycle(t *testing.T) {
	var settled []string
	settle := func(id string) func() { return func() { settled = append(settled, id) } }

	l := NewLifecycle(0)
	if l.Reads() != DefaultProvisioningReads {
		t.Fatalf("Reads = %d", l.Reads())
	}
	l.Start("a", settle("a"))
	l.Start("b", settle("b"))
	if l.Read("a") || !l.Pending("a") {
		t.Error("settled on the first read")
	}
	if !l.Read("a") || l.Pending("a") || !slices.Equal(settled, []string{"a"}) {
		t.Errorf("the second read: pending %v, settled %v", l.Pending("a"), settled)
	}
	if l.Read("a") || l.Read("never") {
		t.Error("a read of what is not pending settled something")
	}
	l.Read("b")
	l.Start("b", settle("b")) // changed again: its reads start over
	l.Read("b")
	if !l.Pending("b") {
		t.Error("a restarted resource kept its old reads")
	}
	l.Start("c", settle("c"))
	l.Start("d", settle("d"))
	l.Stop("c")
	l.Advance()
	if !slices.Equal(settled, []string{"a", "b", "d"}) || l.Pending("b") || l.Pending("c") {
		t.Errorf("after Advance: settled %v", settled)
	}

	// A settle function that starts its resource again leaves it pending,
	// and one that stops another keeps it from settling.
	settled = nil
	l.Start("e", func() { settled = append(settled, "e"); l.Start("e", settle("e again")); l.Stop("f") })
	l.Start("f", settle("f"))
	l.Advance()
	if !slices.Equal(settled, []string{"e"}) || !l.Pending("e") || l.Pending("f") {
		t.Errorf("settle functions that change the lifecycle: settled %v", settled)
	}

	settled = nil
	now := NewLifecycle(-1)
	now.Start("x", settle("x"))
	if !slices.Equal(settled, []string{"x"}) || now.Pending("x") {
		t.Errorf("negative reads: settled %v", settled)
	}
}
