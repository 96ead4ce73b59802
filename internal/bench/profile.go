package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// heapProfiler fetches the CCM's heap profile from /debug/pprof/heap on
// its secure port (upstream's --profiling, on by default). The admin
// user's client certificate gets through the port's delegated
// authentication and authorization; the port's serving certificate is
// self-signed.
type heapProfiler struct {
	client *http.Client
	url    string
}

func newHeapProfiler(c *cluster.Cluster, port int) (*heapProfiler, error) {
	cfg := c.ControlPlane.RESTConfig()
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg.CAData, cfg.CAFile, cfg.Insecure = nil, "", true
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &heapProfiler{client: client, url: cfg.Host + "/debug/pprof/heap"}, nil
}

// fetch returns the heap profile, gzipped protobuf as Go serves it.
func (h *heapProfiler) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: %s", resp.Status, b)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, resp.Body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// save writes a profile as dir/<step>.pprof (go tool pprof -top <file>).
func saveProfile(dir, step string, prof []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, slug(step)+".pprof")
	if err := os.WriteFile(path, prof, 0o644); err != nil {
		return err
	}
	fmt.Printf("    heap profile: %s\n", path)
	return nil
}

// slug turns a step's name into a file name: "(a) 10 nodes join" is
// "a-10-nodes-join".
func slug(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}), "-")
}
