package cloudapi

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

func TestDefaultOperation(t *testing.T) {
	tests := []struct {
		method, url string
		want        string
	}{
		{method: http.MethodGet, url: "https://api.digitalocean.com/v2/droplets?page=2&per_page=200", want: "GET /v2/droplets"},
		{method: http.MethodGet, url: "https://api.digitalocean.com/v2/droplets/3164444", want: "GET /v2/droplets/{id}"},
		{method: http.MethodPost, url: "https://api.digitalocean.com/v2/droplets/3164444/actions", want: "POST /v2/droplets/{id}/actions"},
		{method: http.MethodPut, url: "https://api.digitalocean.com/v2/load_balancers/4de7ac8b-495b-4884-9a69-1050c6793cd6", want: "PUT /v2/load_balancers/{id}"},
		{method: http.MethodDelete, url: "https://octavia:9876/v2/lbaas/pools/4de7ac8b-495b-4884-9a69-1050c6793cd6/members/0f2c8ba2-6ac8-4b4f-8e14-16b5b3f1a6c1", want: "DELETE /v2/lbaas/pools/{id}/members/{id}"},
		{method: http.MethodGet, url: "https://nova:8774/v2.1/9a1e2f3c4b5d6e7f8a9b0c1d2e3f4a5b/servers/detail", want: "GET /v2.1/{id}/servers/detail"},
		{method: http.MethodGet, url: "https://neutron:9696/v2.0/floatingips", want: "GET /v2.0/floatingips"},
		{method: http.MethodPost, url: "https://keystone:5000/v3/auth/tokens", want: "POST /v3/auth/tokens"},
		{method: http.MethodGet, url: "https://api.gb1.brightbox.com/1.0/servers/srv-lv426", want: "GET /1.0/servers/{id}"},
		{method: http.MethodPost, url: "https://api.gb1.brightbox.com/1.0/load_balancers/lba-abcde/add_nodes", want: "POST /1.0/load_balancers/{id}/add_nodes"},
		{method: http.MethodGet, url: "https://api.gb1.brightbox.com/1.0/cloud_ips/cip-12345", want: "GET /1.0/cloud_ips/{id}"},
		{method: http.MethodGet, url: "https://rancher/v3/projects/c-x7k2p:p-abc12/workloads", want: "GET /v3/projects/{id}/workloads"},
		{method: http.MethodGet, url: "https://rancher/v2-beta/projects/1a5/services/1s12", want: "GET /v2-beta/projects/{id}/services/{id}"},
		{method: http.MethodGet, url: "https://cloudapi/my/machines/deadbeef01/tags", want: "GET /my/machines/{id}/tags"},
		{method: http.MethodGet, url: "https://cloudapi/my/fabrics/default/vlans/2/networks", want: "GET /my/fabrics/default/vlans/{id}/networks"},
		{method: http.MethodGet, url: "https://cloudapi/my/machines/k8s-node-123456789", want: "GET /my/machines/{id}"},
		{method: http.MethodGet, url: "https://api.example.com/v2/load_balancers/", want: "GET /v2/load_balancers/"},
		{method: "", url: "https://api.example.com", want: "GET /"},
		{method: http.MethodGet, url: "https://api.example.com/os-keypairs", want: "GET /os-keypairs"},
		{method: http.MethodGet, url: "https://api.example.com/v1/instances/i-000001", want: "GET /v1/instances/{id}"},
		{method: http.MethodPut, url: "https://api.example.com/v1/load-balancers/lb-000042", want: "PUT /v1/load-balancers/{id}"},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := DefaultOperation(&http.Request{Method: tc.method, URL: u}); got != tc.want {
			t.Errorf("DefaultOperation(%s %s) = %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
	if got := DefaultOperation(nil); got != "GET /" {
		t.Errorf("DefaultOperation(nil) = %q", got)
	}
	if got := DefaultOperation(&http.Request{Method: http.MethodGet}); got != "GET /" {
		t.Errorf("DefaultOperation(no URL) = %q", got)
	}
}

func TestOperationOverride(t *testing.T) {
	named := func(*http.Request) string { return "custom" }
	tests := []struct {
		name string
		ctx  context.Context
		opts Options
		want string
	}{
		{name: "default", ctx: context.Background(), want: "GET /v2/droplets/{id}"},
		{name: "Options.Operation", ctx: context.Background(), opts: Options{Operation: named}, want: "custom"},
		{name: "WithOperation wins", ctx: WithOperation(context.Background(), "droplets.get"), opts: Options{Operation: named}, want: "droplets.get"},
		{name: "empty WithOperation ignored", ctx: WithOperation(context.Background(), ""), want: "GET /v2/droplets/{id}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(tc.ctx, http.MethodGet, "https://api.example.com/v2/droplets/12", nil)
			if got := newTransport(tc.opts).operation(req); got != tc.want {
				t.Errorf("operation = %q, want %q", got, tc.want)
			}
		})
	}
}
