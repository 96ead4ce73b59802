package main

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A slow check of the simulator is spaced out so that it holds the
// simulator at most a fifth of the time; a quick one runs every pollEvery.
func TestPacing(t *testing.T) {
	for _, c := range []struct{ took, want time.Duration }{
		{0, pollEvery},
		{10 * time.Millisecond, pollEvery},
		{pollEvery / 4, pollEvery},
		{time.Second, 4 * time.Second},
	} {
		if got := pacing(c.took); got != c.want {
			t.Errorf("pacing(%s) = %s, want %s", c.took, got, c.want)
		}
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	err := waitFor(context.Background(), time.Minute, func(context.Context) (bool, error) {
		n++
		return n == 2, nil
	})
	if err != nil || n != 2 {
		t.Errorf("waitFor = %v after %d checks, want nil after 2", err, n)
	}
	boom := errors.New("boom")
	if err := waitFor(context.Background(), time.Minute, func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("waitFor = %v, want the check's error", err)
	}
	err = waitFor(context.Background(), time.Millisecond, func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waitFor past its timeout = %v, want a deadline error", err)
	}
}
