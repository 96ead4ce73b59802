package simkit

import "time"

// WaitTB is the part of testing.TB that WaitFor needs.
type WaitTB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// settleDeadline bounds WaitFor: far beyond any SettleAfter a test sets.
const settleDeadline = 10 * time.Second

// WaitFor polls cond until it holds, for a test of a simulator that
// settles with time (Common.SettleAfter): cond reads the simulator
// through its accessors (under its lock) or /_sim/state. It fails the
// test, naming what, if cond does not hold within 10 seconds.
func WaitFor(t WaitTB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(settleDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, settleDeadline)
		}
		time.Sleep(time.Millisecond)
	}
}
