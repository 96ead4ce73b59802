package cloud

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

func TestAuthOptions(t *testing.T) {
	secret := config.NewSecret
	tests := []struct {
		name string
		g    GlobalSection
		want gophercloud.AuthOptions
	}{
		{
			name: "user name, project name, shared domain",
			g:    GlobalSection{AuthURL: "https://k/v3", Username: "u", Password: secret("p"), TenantName: "proj", DomainName: "Default"},
			want: gophercloud.AuthOptions{IdentityEndpoint: "https://k/v3", Username: "u", Password: "p", DomainName: "Default",
				Scope: &gophercloud.AuthScope{ProjectName: "proj", DomainName: "Default"}},
		},
		{
			name: "user and project domains of their own",
			g: GlobalSection{AuthURL: "https://k/v3", Username: "u", Password: secret("p"), UserDomainID: "ud", DomainName: "ignored",
				TenantName: "proj", TenantDomainName: "pd"},
			want: gophercloud.AuthOptions{IdentityEndpoint: "https://k/v3", Username: "u", Password: "p", DomainID: "ud",
				Scope: &gophercloud.AuthScope{ProjectName: "proj", DomainName: "pd"}},
		},
		{
			name: "user ID and project ID",
			g:    GlobalSection{AuthURL: "https://k/v3", UserID: "uid", Username: "ignored", UserDomainName: "ignored", Password: secret("p"), TenantID: "pid", TenantName: "ignored"},
			want: gophercloud.AuthOptions{IdentityEndpoint: "https://k/v3", UserID: "uid", Password: "p",
				Scope: &gophercloud.AuthScope{ProjectID: "pid"}},
		},
		{
			name: "application credential ID",
			g:    GlobalSection{AuthURL: "https://k/v3", ApplicationCredentialID: "ac", ApplicationCredentialSecret: secret("s"), Username: "ignored", TenantID: "ignored"},
			want: gophercloud.AuthOptions{IdentityEndpoint: "https://k/v3", ApplicationCredentialID: "ac", ApplicationCredentialSecret: "s"},
		},
		{
			name: "application credential name",
			g:    GlobalSection{AuthURL: "https://k/v3", ApplicationCredentialName: "ac", ApplicationCredentialSecret: secret("s"), Username: "u", UserDomainName: "Default"},
			want: gophercloud.AuthOptions{IdentityEndpoint: "https://k/v3", ApplicationCredentialName: "ac", ApplicationCredentialSecret: "s",
				Username: "u", DomainName: "Default"},
		},
		{
			name: "trust",
			g:    GlobalSection{AuthURL: "https://k/v3", TrustID: "t", TrusteeID: "trustee", TrusteePassword: secret("tp"), UserID: "ignored", Password: secret("ignored")},
			want: gophercloud.AuthOptions{IdentityEndpoint: "https://k/v3", UserID: "trustee", Password: "tp",
				Scope: &gophercloud.AuthScope{TrustID: "t"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := authOptions(&tt.g)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuthBodyRedacted: the Keystone request gophercloud sends, as the
// transport would log it, holds no secret. (cloudapi redacts everything
// under "auth", and X-Auth-Token and X-Subject-Token headers.)
func TestAuthBodyRedacted(t *testing.T) {
	for _, g := range []GlobalSection{
		{Username: "u", UserDomainName: "Default", Password: config.NewSecret("pw-secret"), TenantName: "p", TenantDomainName: "Default"},
		{ApplicationCredentialID: "ac", ApplicationCredentialSecret: config.NewSecret("ac-secret")},
	} {
		ao, err := authOptions(&g)
		if err != nil {
			t.Fatal(err)
		}
		body, err := ao.ToTokenV3CreateMap(nil)
		if err != nil {
			t.Fatal(err)
		}
		scope, err := ao.ToTokenV3ScopeMap()
		if err != nil {
			t.Fatal(err)
		}
		if scope != nil {
			body["auth"].(map[string]any)["scope"] = scope
		}
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		logged := string(cloudapi.RedactBody(raw))
		if strings.Contains(logged, "pw-secret") || strings.Contains(logged, "ac-secret") || !strings.Contains(logged, cloudapi.Redacted) {
			t.Errorf("logged body reveals a secret: %s", logged)
		}
	}
	var _ tokens.AuthOptionsBuilder = &gophercloud.AuthOptions{}
	h := cloudapi.RedactHeader(http.Header{"X-Auth-Token": {"tok-1"}, "X-Subject-Token": {"tok-2"}})
	if strings.Contains(h.Get("X-Auth-Token")+h.Get("X-Subject-Token"), "tok-") {
		t.Errorf("token headers not redacted: %v", h)
	}
}

func TestEndpointAvailability(t *testing.T) {
	for in, want := range map[string]gophercloud.Availability{
		"": gophercloud.AvailabilityPublic, "public": gophercloud.AvailabilityPublic, "publicURL": gophercloud.AvailabilityPublic,
		"Internal": gophercloud.AvailabilityInternal, "internalURL": gophercloud.AvailabilityInternal, "admin": gophercloud.AvailabilityAdmin,
	} {
		if got, err := EndpointAvailability(in); err != nil || got != want {
			t.Errorf("endpointAvailability(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := EndpointAvailability("private"); err == nil {
		t.Error("private: no error")
	}
}

func TestIsAPINotFound(t *testing.T) {
	json404 := gophercloud.ErrUnexpectedResponseCode{Actual: 404, Body: []byte(`{"itemNotFound": {"code": 404, "message": "Instance x could not be found."}}`),
		ResponseHeader: http.Header{"Content-Type": {"application/json"}}}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"Nova's 404", json404, true},
		{"after re-authentication", &gophercloud.ErrErrorAfterReauthentication{ErrOriginal: json404}, true},
		{"wrapped", ServiceError(json404), true},
		{"HTML 404 of a proxy", gophercloud.ErrUnexpectedResponseCode{Actual: 404, Body: []byte("<html>Not Found</html>"),
			ResponseHeader: http.Header{"Content-Type": {"text/html"}}}, false},
		{"JSON body, text content type", gophercloud.ErrUnexpectedResponseCode{Actual: 404, Body: json404.Body,
			ResponseHeader: http.Header{"Content-Type": {"text/plain"}}}, false},
		{"empty 404", gophercloud.ErrUnexpectedResponseCode{Actual: 404}, false},
		{"Octavia's 404", gophercloud.ErrUnexpectedResponseCode{Actual: 404, Body: []byte(`{"faultcode": "Client", "faultstring": "Load Balancer x not found.", "debuginfo": null}`),
			ResponseHeader: json404.ResponseHeader}, true},
		{"another API's JSON 404", gophercloud.ErrUnexpectedResponseCode{Actual: 404, Body: []byte(`{"detail": "Not Found"}`),
			ResponseHeader: json404.ResponseHeader}, false},
		{"JSON body, no content type", gophercloud.ErrUnexpectedResponseCode{Actual: 404, Body: json404.Body}, false},
		{"401", gophercloud.ErrUnexpectedResponseCode{Actual: 401, Body: json404.Body}, false},
		{"nil", nil, false},
	} {
		if got := IsAPINotFound(tt.err); got != tt.want {
			t.Errorf("%s: isAPINotFound = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := ServiceError(json404).Error(); got != " : 404 Instance x could not be found." {
		t.Errorf("serviceError = %q", got)
	}
}
