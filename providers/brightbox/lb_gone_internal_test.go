package brightbox

import (
	"context"
	"testing"
)

// TestGoneFoundByAnotherSync: syncs run side by side. One whose write was
// refused while another's lookup found the server gone retries without
// it, with no lookup of its own (the client is nil: a call would panic).
func TestGoneFoundByAnotherSync(t *testing.T) {
	d := &lbDriver{}
	d.gone.add("srv-gone1")
	if !d.leaveOutGone(context.Background(), []string{"srv-live1", "srv-gone1"}) {
		t.Error("leaveOutGone = false for a write adding a server known to be gone; want a retry without it")
	}
	if got := d.gone.without([]string{"srv-live1", "srv-gone1"}); len(got) != 1 || got[0] != "srv-live1" {
		t.Errorf("without = %v, want [srv-live1]", got)
	}
}
