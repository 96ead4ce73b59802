package cloudapi

import (
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCounter(t *testing.T) {
	c := NewCounter()
	c.add(http.MethodGet, "GET /v2/droplets")
	c.add(http.MethodGet, "GET /v2/droplets")
	c.add(http.MethodHead, "HEAD /v2/droplets/{id}")
	c.add(http.MethodOptions, "OPTIONS /")
	c.add(http.MethodPost, "POST /v2/load_balancers")
	c.add(http.MethodPut, "PUT /v2/load_balancers/{id}")
	c.add(http.MethodDelete, "DELETE /v2/load_balancers/{id}")
	c.add(http.MethodPatch, "PATCH /v2/load_balancers/{id}")

	want := map[string]int64{
		"GET /v2/droplets":               2,
		"HEAD /v2/droplets/{id}":         1,
		"OPTIONS /":                      1,
		"POST /v2/load_balancers":        1,
		"PUT /v2/load_balancers/{id}":    1,
		"DELETE /v2/load_balancers/{id}": 1,
		"PATCH /v2/load_balancers/{id}":  1,
	}
	if diff := cmp.Diff(want, c.Snapshot()); diff != "" {
		t.Errorf("Snapshot (-want +got):\n%s", diff)
	}
	if got := c.Get("GET /v2/droplets"); got != 2 {
		t.Errorf("Get = %d, want 2", got)
	}
	if got := c.Get("never"); got != 0 {
		t.Errorf("Get(unknown) = %d, want 0", got)
	}
	if got := c.Total(); got != 8 {
		t.Errorf("Total = %d, want 8", got)
	}
	if got := c.Writes(); got != 4 {
		t.Errorf("Writes = %d, want 4 (POST, PUT, DELETE, PATCH)", got)
	}

	snapshot := c.Snapshot()
	snapshot["GET /v2/droplets"] = 100
	if got := c.Get("GET /v2/droplets"); got != 2 {
		t.Errorf("changing a Snapshot changed the Counter: Get = %d", got)
	}

	c.Reset()
	if c.Total() != 0 || c.Writes() != 0 || len(c.Snapshot()) != 0 {
		t.Errorf("after Reset: Total %d, Writes %d, Snapshot %v; want all empty", c.Total(), c.Writes(), c.Snapshot())
	}
}

func TestCounterConcurrentUse(t *testing.T) {
	var c Counter // the zero value works
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 100 {
				c.add(http.MethodPost, "op")
				_ = c.Snapshot()
			}
		})
	}
	wg.Wait()
	if c.Get("op") != 2000 || c.Total() != 2000 || c.Writes() != 2000 {
		t.Errorf("Get %d, Total %d, Writes %d; want 2000 each", c.Get("op"), c.Total(), c.Writes())
	}
}

func TestNilCounter(t *testing.T) {
	var c *Counter
	c.add(http.MethodGet, "op")
	c.Reset()
	if c.Get("op") != 0 || c.Total() != 0 || c.Writes() != 0 || len(c.Snapshot()) != 0 {
		t.Error("a nil Counter counted something")
	}
}

func TestTransportCountsAttemptsPerOperation(t *testing.T) {
	srv := newScriptedServer(t,
		reply{status: http.StatusTooManyRequests},
		reply{status: http.StatusOK},
	)
	counter := NewCounter()
	tr, _ := newFakeTimeTransport(Options{Counter: counter})

	_, _, _ = do(t, tr, newRequest(t, t.Context(), http.MethodGet, srv.URL+"/v2/droplets/42", ""))                                               // 429 + 200
	_, _, _ = do(t, tr, newRequest(t, WithOperation(t.Context(), "lb.create"), http.MethodPost, srv.URL+"/v2/load_balancers", `{"name":"a"}`))   // 200
	_, _, _ = do(t, NewTransport(Options{Counter: counter, MaxRetries: -1}), newRequest(t, t.Context(), http.MethodGet, closedServerURL(t), "")) // no response: not counted

	want := map[string]int64{"GET /v2/droplets/{id}": 2, "lb.create": 1}
	if diff := cmp.Diff(want, counter.Snapshot()); diff != "" {
		t.Errorf("Snapshot (-want +got):\n%s", diff)
	}
	if counter.Total() != 3 || counter.Writes() != 1 {
		t.Errorf("Total %d, Writes %d; want 3 and 1", counter.Total(), counter.Writes())
	}
}
