package main

import (
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

// writeHeapProfile saves the CCM's heap profile, from /debug/pprof/heap on
// its secure port (upstream's --profiling, on by default), as
// dir/<step>.pprof. The admin user's client certificate gets through the
// port's delegated authentication and authorization; the port's serving
// certificate is self-signed.
func writeHeapProfile(ctx context.Context, c *cluster.Cluster, port int, dir, step string) error {
	cfg := c.ControlPlane.RESTConfig()
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg.CAData, cfg.CAFile, cfg.Insecure = nil, "", true
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/debug/pprof/heap", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, slug(step)+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	fmt.Printf("    heap profile: %s\n", path)
	return f.Close()
}

// slug turns a step's name into a file name: "(a) 10 nodes join" is
// "a-10-nodes-join".
func slug(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}), "-")
}
