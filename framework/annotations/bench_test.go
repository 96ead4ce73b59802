package annotations

import (
	"net/netip"
	"testing"
	"time"
)

// doConfig is about the size of DigitalOcean's annotation set.
type doConfig struct {
	ID                    string            `annotation:"kubernetes.digitalocean.com/load-balancer-id"`
	Name                  string            `annotation:"name"`
	Disown                bool              `annotation:"service.kubernetes.io/do-loadbalancer-disown"`
	Protocol              string            `annotation:"protocol" enum:"tcp,http,https,http2,http3,udp" default:"tcp"`
	HTTPPorts             []int32           `annotation:"http-ports" min:"1" max:"65535"`
	TLSPorts              []int32           `annotation:"tls-ports" min:"1" max:"65535"`
	HTTP2Ports            []int32           `annotation:"http2-ports" min:"1" max:"65535"`
	HTTP3Port             int32             `annotation:"http3-port" min:"1" max:"65535"`
	CertificateID         string            `annotation:"certificate-id"`
	CertificateName       string            `annotation:"certificate-name"`
	TLSPassthrough        bool              `annotation:"tls-passthrough"`
	RedirectHTTPToHTTPS   bool              `annotation:"redirect-http-to-https"`
	DisableLetsEncryptDNS bool              `annotation:"disable-lets-encrypt-dns-records"`
	OverrideHealthCheck   bool              `annotation:"override-health-check"`
	HealthCheckPath       string            `annotation:"healthcheck-path" default:"/"`
	HealthCheckPort       int32             `annotation:"healthcheck-port" min:"1" max:"65535"`
	HealthCheckProtocol   string            `annotation:"healthcheck-protocol" enum:"tcp,http,https" default:"tcp"`
	HealthCheckInterval   time.Duration     `annotation:"healthcheck-check-interval-seconds" unit:"s" min:"3" max:"300" default:"3"`
	HealthCheckTimeout    time.Duration     `annotation:"healthcheck-response-timeout-seconds" unit:"s" min:"3" max:"300" default:"5"`
	UnhealthyThreshold    int               `annotation:"healthcheck-unhealthy-threshold" min:"2" max:"10" default:"3"`
	HealthyThreshold      int               `annotation:"healthcheck-healthy-threshold" min:"2" max:"10" default:"5"`
	StickyType            string            `annotation:"sticky-sessions-type" enum:"none,cookies" default:"none"`
	StickyCookieName      string            `annotation:"sticky-sessions-cookie-name"`
	StickyCookieTTL       time.Duration     `annotation:"sticky-sessions-cookie-ttl" unit:"s"`
	SizeSlug              string            `annotation:"size-slug"`
	SizeUnit              *int              `annotation:"size-unit" min:"1" max:"100"`
	ProxyProtocol         *bool             `annotation:"enable-proxy-protocol"`
	BackendKeepalive      bool              `annotation:"enable-backend-keepalive"`
	IdleTimeout           time.Duration     `annotation:"http-idle-timeout-seconds" unit:"s" min:"30" max:"600" default:"60"`
	AllowRules            []netip.Prefix    `annotation:"allow-rules"`
	Type                  string            `annotation:"type" enum:"REGIONAL,REGIONAL_NETWORK" default:"REGIONAL_NETWORK"`
	Hostname              string            `annotation:"hostname"`
	Tags                  map[string]string `annotation:"tags"`
}

func BenchmarkDecode(b *testing.B) {
	const prefix = "service.beta.kubernetes.io/do-loadbalancer-"
	svcAnnotations := map[string]string{
		"kubernetes.digitalocean.com/load-balancer-id":     "4de7ac8b-495b-4884-9a69-1050c6793cd6",
		"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Service"}`,
		prefix + "name":                               "web",
		prefix + "protocol":                           "http",
		prefix + "tls-ports":                          "443",
		prefix + "certificate-name":                   "web-cert",
		prefix + "redirect-http-to-https":             "true",
		prefix + "healthcheck-path":                   "/healthz",
		prefix + "healthcheck-protocol":               "http",
		prefix + "healthcheck-check-interval-seconds": "10",
		prefix + "enable-proxy-protocol":              "true",
		prefix + "http-idle-timeout-seconds":          "120",
		prefix + "size-unit":                          "2",
	}
	b.ReportAllocs()
	for b.Loop() {
		var cfg doConfig
		if _, err := Decode(svcAnnotations, prefix, &cfg); err != nil {
			b.Fatal(err)
		}
	}
}
