package ranchersim

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dumpSchemas reads the real Rancher v2-beta schema dump that go-rancher's
// module ships (docs/input/schemas.json), by schema ID.
func dumpSchemas(t *testing.T) map[string]map[string]field {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/rancher/go-rancher").Output()
	if err != nil {
		t.Fatalf("locating go-rancher's module: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "docs", "input", "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dump struct {
		Data []struct {
			ID             string           `json:"id"`
			ResourceFields map[string]field `json:"resourceFields"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &dump); err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]field{}
	for _, s := range dump.Data {
		m[s.ID] = s.ResourceFields
	}
	return m
}

// TestSchemaFlagsMatchDump: every field the simulator serves for the
// resources a CCM writes is creatable and updatable exactly as the real
// v2-beta schema says (a PUT drops what is not updatable), but for the
// documented choices below.
func TestSchemaFlagsMatchDump(t *testing.T) {
	// Fields whose flags differ from the dump on purpose.
	deviations := map[string]string{
		// The Rancher 1.2 API docs change a service's launch config by
		// upgrade; the simulator drops it from a PUT (doc.go).
		"loadBalancerService.launchConfig": "dropped on PUT",
		// Hosts are not created through the API here (agents register).
		"host.hostname": "no POST /hosts",
	}
	dump := dumpSchemas(t)
	for _, id := range []string{KindLoadBalancer, KindExternal, "stack", "host", "lbConfig", "portRule", "instanceHealthCheck", "serviceLink", "certificate"} {
		real, ok := dump[id]
		if !ok {
			t.Fatalf("the dump has no schema %s", id)
		}
		for name, f := range mustSchema(id).fields {
			want, ok := real[name]
			if !ok {
				continue // read-only extras (createdTS...) the dump lists elsewhere
			}
			if _, ok := deviations[id+"."+name]; ok {
				continue
			}
			if f.Create != want.Create || f.Update != want.Update {
				t.Errorf("%s.%s: create %v update %v, the v2-beta dump says create %v update %v", id, name, f.Create, f.Update, want.Create, want.Update)
			}
		}
	}
}
