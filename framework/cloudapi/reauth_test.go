package cloudapi

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestReauthBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	g := NewReauthBackoff(clk)
	if again, err := g.Attempt("token"); err != nil || again {
		t.Fatalf("first re-authentication = %v, %v; want at once", again, err)
	}
	if _, err := g.Attempt("token"); err == nil {
		t.Fatal("a second re-authentication right after the first was let through")
	}
	clk.Step(ReauthMinBackoff + time.Millisecond)
	if again, err := g.Attempt("token"); err != nil || !again {
		t.Fatalf("after the backoff = %v, %v; want let through, as a repeat", again, err)
	}
	g.Accepted()
	if again, err := g.Attempt("token"); err != nil || again {
		t.Fatalf("after a token was accepted = %v, %v; want at once, afresh", again, err)
	}
}
