package simkit

import (
	"slices"
	"sync"
	"testing"
	"time"
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

func TestLifecycleWithTimeSettlesUnread(t *testing.T) {
	var mu sync.Mutex
	l := NewLifecycle(5).WithTime(20*time.Millisecond, &mu)
	done := make(chan string, 2)
	settle := func(id string) func() { return func() { done <- id } }

	mu.Lock()
	l.Start("stopped", settle("stopped"))
	l.Stop("stopped") // deleted before its time: never settles
	l.Start("unread", settle("unread"))
	mu.Unlock()

	select {
	case id := <-done:
		if id != "unread" {
			t.Fatalf("settled %q, which was stopped", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a pending resource nobody read did not settle with time")
	}
	mu.Lock()
	defer mu.Unlock()
	if l.Pending("unread") {
		t.Error("settled by time but still pending")
	}
	if len(done) != 0 {
		t.Errorf("also settled %q", <-done)
	}
}

func TestLifecycleWithTimeSettlesOnce(t *testing.T) {
	var mu sync.Mutex
	l := NewLifecycle(1).WithTime(time.Hour, &mu)
	n := 0
	mu.Lock()
	l.Start("a", func() { n++ })
	if !l.Read("a") {
		t.Fatal("did not settle on its read")
	}
	mu.Unlock()
	if n != 1 {
		t.Fatalf("settled %d times", n)
	}
	if NewLifecycle(1).WithTime(0, &mu).after != 0 {
		t.Error("WithTime(0) turned time on")
	}
}
