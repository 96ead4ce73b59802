package annotations

import (
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const testPrefix = "example.com/lb-"

// level is a provider-defined type that decodes itself.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New(`must be "low" or "high"`)
	}
	return nil
}

type health struct {
	Protocol string        `annotation:"healthcheck-protocol" enum:"tcp,http,https" default:"tcp" doc:"Protocol of the health check."`
	Port     int32         `annotation:"healthcheck-port" min:"1" max:"65535" doc:"Port to probe; the traffic port when unset."`
	Interval time.Duration `annotation:"healthcheck-interval-seconds" unit:"s" min:"3" max:"300" default:"10" alias:"healthcheck-interval" doc:"Time between probes."`
	Timeout  time.Duration `annotation:"healthcheck-timeout" min:"1s" max:"1m" default:"5s" doc:"Probe timeout."`
	Path     string        `annotation:"healthcheck-path" alias:"healthcheck-http-path,legacy.example.com/path" default:"/" doc:"HTTP path to probe."`
}

type allTypes struct {
	Name      string            `annotation:"name" doc:"Name of the load balancer | shown in the console."`
	Proxy     bool              `annotation:"enable-proxy-protocol" doc:"Send PROXY protocol v1 to the nodes."`
	Sticky    *bool             `annotation:"sticky" doc:"Sticky sessions; the cloud's default when unset."`
	Keepalive *bool             `annotation:"keepalive" default:"true"`
	Conns     int               `annotation:"connection-limit" min:"-1" default:"-1" doc:"Maximum connections; -1 is unlimited."`
	Retries   int64             `annotation:"retries"`
	Port16    uint16            `annotation:"port16"`
	Weight    uint32            `annotation:"weight" max:"256"`
	Limit     *int32            `annotation:"limit" min:"0"`
	Ratio     float64           `annotation:"ratio" min:"0" max:"1"`
	Idle      time.Duration     `annotation:"idle-timeout-ms" unit:"ms"`
	IdleBound time.Duration     `annotation:"idle-bounded" unit:"ms" min:"1500us" max:"30s"`
	Tags      []string          `annotation:"tags"`
	Protocols []string          `annotation:"protocols" enum:"TCP,UDP"`
	TLSPorts  []int32           `annotation:"tls-ports" min:"1" max:"65535" doc:"Ports that terminate TLS."`
	HTTPPorts []int             `annotation:"http-ports"`
	Sources   []netip.Prefix    `annotation:"source-ranges" doc:"Client CIDRs allowed to connect."`
	Selector  map[string]string `annotation:"node-selector"`
	Level     level             `annotation:"level"`
	Addr      netip.Addr        `annotation:"ip"`
	Intervals []time.Duration   `annotation:"intervals" unit:"s"`
	ID        string            `annotation:"example.com/load-balancer-id" doc:"Set by the CCM."`
	Size      string            `annotation:"size" enum:"SMALL,MEDIUM,LARGE" deprecated:"use size-unit instead."`

	HealthCheck health
	Untagged    int // no annotation tag: ignored
}

func ptr[T any](v T) *T { return &v }

// defaults is what Decode produces from no annotations at all.
func defaults() allTypes {
	return allTypes{
		Keepalive: ptr(true),
		Conns:     -1,
		HealthCheck: health{
			Protocol: "tcp",
			Interval: 10 * time.Second,
			Timeout:  5 * time.Second,
			Path:     "/",
		},
	}
}

func with(f func(*allTypes)) allTypes {
	c := defaults()
	f(&c)
	return c
}

var cmpOpts = cmpopts.EquateComparable(netip.Prefix{}, netip.Addr{})

// fieldErrors unpacks Decode's joined error.
func fieldErrors(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("error is not joined: %v", err)
	}
	var msgs []string
	for _, e := range joined.Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("error is not a *FieldError: %v", e)
		}
		msgs = append(msgs, fe.Error())
	}
	return msgs
}

func TestDecode(t *testing.T) {
	k := func(s string) string { return testPrefix + s }
	tests := []struct {
		name        string
		annotations map[string]string
		prefill     *allTypes
		want        allTypes
		wantResult  Result
		wantErrs    []string
	}{
		{
			name: "nil annotations give defaults",
			want: defaults(),
		},
		{
			name:        "empty annotations give defaults",
			annotations: map[string]string{},
			want:        defaults(),
		},
		{
			name: "every type",
			annotations: map[string]string{
				k("name"):                         "web",
				k("enable-proxy-protocol"):        "true",
				k("sticky"):                       "false",
				k("keepalive"):                    "no",
				k("connection-limit"):             "1000",
				k("retries"):                      "-9223372036854775808",
				k("port16"):                       "65535",
				k("weight"):                       "256",
				k("limit"):                        "0",
				k("ratio"):                        "0.25",
				k("idle-timeout-ms"):              "1500",
				k("tags"):                         " a, b ,,c ",
				k("protocols"):                    "tcp,Udp",
				k("tls-ports"):                    "443, 8443",
				k("http-ports"):                   "80",
				k("source-ranges"):                "10.0.0.0/8, 192.168.1.7, 2001:db8::/32, 2001:db8::1, 172.16.5.4/12",
				k("node-selector"):                "pool=web, zone = a,empty=,expr=a=b",
				k("level"):                        "high",
				k("ip"):                           "2001:db8::10",
				k("intervals"):                    "5,1m,250ms",
				"example.com/load-balancer-id":    "lb-123",
				k("size"):                         "medium",
				k("healthcheck-protocol"):         "HTTPS",
				k("healthcheck-port"):             "10256",
				k("healthcheck-interval-seconds"): "15",
				k("healthcheck-timeout"):          "2s",
				k("healthcheck-path"):             "/healthz",
			},
			want: allTypes{
				Name:      "web",
				Proxy:     true,
				Sticky:    ptr(false),
				Keepalive: ptr(false),
				Conns:     1000,
				Retries:   -9223372036854775808,
				Port16:    65535,
				Weight:    256,
				Limit:     ptr[int32](0),
				Ratio:     0.25,
				Idle:      1500 * time.Millisecond,
				Tags:      []string{"a", "b", "c"},
				Protocols: []string{"TCP", "UDP"},
				TLSPorts:  []int32{443, 8443},
				HTTPPorts: []int{80},
				Sources: []netip.Prefix{
					netip.MustParsePrefix("10.0.0.0/8"),
					netip.MustParsePrefix("192.168.1.7/32"),
					netip.MustParsePrefix("2001:db8::/32"),
					netip.MustParsePrefix("2001:db8::1/128"),
					netip.MustParsePrefix("172.16.0.0/12"),
				},
				Selector:  map[string]string{"pool": "web", "zone": "a", "empty": "", "expr": "a=b"},
				Level:     2,
				Addr:      netip.MustParseAddr("2001:db8::10"),
				Intervals: []time.Duration{5 * time.Second, time.Minute, 250 * time.Millisecond},
				ID:        "lb-123",
				Size:      "MEDIUM",
				HealthCheck: health{
					Protocol: "https",
					Port:     10256,
					Interval: 15 * time.Second,
					Timeout:  2 * time.Second,
					Path:     "/healthz",
				},
			},
			wantResult: Result{Set: []string{
				k("connection-limit"), k("enable-proxy-protocol"), k("healthcheck-interval-seconds"),
				k("healthcheck-path"), k("healthcheck-port"), k("healthcheck-protocol"), k("healthcheck-timeout"),
				k("http-ports"), k("idle-timeout-ms"), k("intervals"), k("ip"), k("keepalive"), k("level"),
				k("limit"), k("name"), k("node-selector"), k("port16"), k("protocols"), k("ratio"),
				k("retries"), k("size"), k("source-ranges"), k("sticky"), k("tags"), k("tls-ports"), k("weight"),
				"example.com/load-balancer-id",
			}},
		},
		{
			name:        "pre-filled values are kept when the annotation is absent",
			annotations: map[string]string{k("healthcheck-port"): "8080"},
			prefill: &allTypes{
				Conns:       50,
				Keepalive:   ptr(false),
				Tags:        []string{"cluster"},
				HealthCheck: health{Protocol: "http", Port: 10256, Interval: time.Minute},
			},
			want: with(func(c *allTypes) {
				c.Conns = 50
				c.Keepalive = ptr(false)
				c.Tags = []string{"cluster"}
				c.HealthCheck.Protocol = "http"
				c.HealthCheck.Port = 8080
				c.HealthCheck.Interval = time.Minute
			}),
			wantResult: Result{Set: []string{k("healthcheck-port")}},
		},
		{
			name:        "an empty list annotation clears a pre-filled list",
			annotations: map[string]string{k("tags"): " , ", k("node-selector"): ""},
			prefill:     &allTypes{Tags: []string{"cluster"}, Selector: map[string]string{"a": "b"}},
			want:        defaults(),
			wantResult:  Result{Set: []string{k("node-selector"), k("tags")}},
		},
		{
			name:        "relative alias",
			annotations: map[string]string{k("healthcheck-http-path"): "/old"},
			want:        with(func(c *allTypes) { c.HealthCheck.Path = "/old" }),
			wantResult:  Result{Set: []string{k("healthcheck-http-path")}},
		},
		{
			name:        "alias under another prefix is matched exactly",
			annotations: map[string]string{"legacy.example.com/path": "/legacy", "legacy.example.com/other": "x"},
			want:        with(func(c *allTypes) { c.HealthCheck.Path = "/legacy" }),
			wantResult:  Result{Set: []string{"legacy.example.com/path"}},
		},
		{
			name: "primary key wins over aliases, earlier alias over later",
			annotations: map[string]string{
				k("healthcheck-path"):      "/new",
				k("healthcheck-http-path"): "/old",
				"legacy.example.com/path":  "/legacy",
			},
			want:       with(func(c *allTypes) { c.HealthCheck.Path = "/new" }),
			wantResult: Result{Set: []string{k("healthcheck-path")}},
		},
		{
			name: "earlier alias wins over later",
			annotations: map[string]string{
				k("healthcheck-http-path"): "/old",
				"legacy.example.com/path":  "/legacy",
			},
			want:       with(func(c *allTypes) { c.HealthCheck.Path = "/old" }),
			wantResult: Result{Set: []string{k("healthcheck-http-path")}},
		},
		{
			name:        "a bad alias value is reported under the alias key",
			annotations: map[string]string{k("healthcheck-interval"): "1"},
			want:        defaults(),
			wantErrs:    []string{`annotation "example.com/lb-healthcheck-interval": invalid value "1": must be a whole number of seconds between 3 and 300`},
		},
		{
			name:        "enum is case-insensitive, trimmed and normalised",
			annotations: map[string]string{k("healthcheck-protocol"): " Http ", k("size"): "large"},
			want: with(func(c *allTypes) {
				c.HealthCheck.Protocol = "http"
				c.Size = "LARGE"
			}),
			wantResult: Result{Set: []string{k("healthcheck-protocol"), k("size")}},
		},
		{
			name:        "enum rejects other values",
			annotations: map[string]string{k("healthcheck-protocol"): "udp", k("protocols"): "tcp,sctp"},
			want:        defaults(),
			wantErrs: []string{
				`annotation "example.com/lb-protocols": invalid value "tcp,sctp": item "sctp": must be one of TCP, UDP`,
				`annotation "example.com/lb-healthcheck-protocol": invalid value "udp": must be one of tcp, http, https`,
			},
		},
		{
			name: "bounds are inclusive",
			annotations: map[string]string{
				k("healthcheck-port"):             "65535",
				k("healthcheck-interval-seconds"): "5m",
				k("healthcheck-timeout"):          "1s",
				k("connection-limit"):             "-1",
				k("tls-ports"):                    "1,65535",
				k("ratio"):                        "1",
			},
			want: with(func(c *allTypes) {
				c.HealthCheck.Port = 65535
				c.HealthCheck.Interval = 5 * time.Minute
				c.HealthCheck.Timeout = time.Second
				c.TLSPorts = []int32{1, 65535}
				c.Ratio = 1
			}),
			wantResult: Result{Set: []string{
				k("connection-limit"), k("healthcheck-interval-seconds"), k("healthcheck-port"),
				k("healthcheck-timeout"), k("ratio"), k("tls-ports"),
			}},
		},
		{
			name: "out of bounds",
			annotations: map[string]string{
				k("connection-limit"):             "-2",
				k("port16"):                       "65536",
				k("weight"):                       "257",
				k("limit"):                        "-1",
				k("ratio"):                        "1.5",
				k("tls-ports"):                    "443,0",
				k("healthcheck-port"):             "0",
				k("healthcheck-interval-seconds"): "301",
				k("healthcheck-timeout"):          "61s",
			},
			want: defaults(),
			wantErrs: []string{
				`annotation "example.com/lb-connection-limit": invalid value "-2": must be an integer >= -1`,
				`annotation "example.com/lb-port16": invalid value "65536": must be an integer between 0 and 65535`,
				`annotation "example.com/lb-weight": invalid value "257": must be an integer between 0 and 256`,
				`annotation "example.com/lb-limit": invalid value "-1": must be an integer between 0 and 2147483647`,
				`annotation "example.com/lb-ratio": invalid value "1.5": must be a number between 0 and 1`,
				`annotation "example.com/lb-tls-ports": invalid value "443,0": item "0": must be an integer between 1 and 65535`,
				`annotation "example.com/lb-healthcheck-port": invalid value "0": must be an integer between 1 and 65535`,
				`annotation "example.com/lb-healthcheck-interval-seconds": invalid value "301": must be a whole number of seconds between 3 and 300`,
				`annotation "example.com/lb-healthcheck-timeout": invalid value "61s": must be a duration between 1s and 1m`,
			},
		},
		{
			name: "not numbers",
			annotations: map[string]string{
				k("retries"):                      "1e3",
				k("ratio"):                        "NaN",
				k("http-ports"):                   "80,http",
				k("idle-timeout-ms"):              "1.5",
				k("intervals"):                    "5,-5",
				k("healthcheck-interval-seconds"): "abc",
			},
			want: defaults(),
			wantErrs: []string{
				`annotation "example.com/lb-retries": invalid value "1e3": must be an integer`,
				`annotation "example.com/lb-ratio": invalid value "NaN": must be a number between 0 and 1`,
				`annotation "example.com/lb-idle-timeout-ms": invalid value "1.5": must be a whole number of milliseconds`,
				`annotation "example.com/lb-http-ports": invalid value "80,http": item "http": must be an integer`,
				`annotation "example.com/lb-intervals": invalid value "5,-5": item "-5": must be a whole number of seconds`,
				`annotation "example.com/lb-healthcheck-interval-seconds": invalid value "abc": must be a whole number of seconds between 3 and 300`,
			},
		},
		{
			name:        "unit durations accept bare integers and Go durations",
			annotations: map[string]string{k("healthcheck-interval-seconds"): "3", k("idle-timeout-ms"): "2m"},
			want: with(func(c *allTypes) {
				c.HealthCheck.Interval = 3 * time.Second
				c.Idle = 2 * time.Minute
			}),
			wantResult: Result{Set: []string{k("healthcheck-interval-seconds"), k("idle-timeout-ms")}},
		},
		{
			name:        "bounds of unit durations are shown in the unit",
			annotations: map[string]string{k("idle-bounded"): "1m"},
			want:        defaults(),
			wantErrs:    []string{`annotation "example.com/lb-idle-bounded": invalid value "1m": must be a whole number of milliseconds between 1500us and 30000`},
		},
		{
			name:        "durations without unit need a unit suffix",
			annotations: map[string]string{k("healthcheck-timeout"): "5"},
			want:        defaults(),
			wantErrs:    []string{`annotation "example.com/lb-healthcheck-timeout": invalid value "5": must be a duration between 1s and 1m`},
		},
		{
			name: "bool spellings",
			annotations: map[string]string{
				k("enable-proxy-protocol"): "YES",
				k("sticky"):                "0",
				k("keepalive"):             "False",
			},
			want: with(func(c *allTypes) {
				c.Proxy = true
				c.Sticky = ptr(false)
				c.Keepalive = ptr(false)
			}),
			wantResult: Result{Set: []string{k("enable-proxy-protocol"), k("keepalive"), k("sticky")}},
		},
		{
			name:        "bad bools name the accepted spellings",
			annotations: map[string]string{k("enable-proxy-protocol"): "on", k("sticky"): ""},
			want:        defaults(),
			wantErrs: []string{
				`annotation "example.com/lb-enable-proxy-protocol": invalid value "on": must be one of true, false, yes, no, 1, 0 (case-insensitive)`,
				`annotation "example.com/lb-sticky": invalid value "": must be one of true, false, yes, no, 1, 0 (case-insensitive)`,
			},
		},
		{
			name:        "tri-state pointer set to true",
			annotations: map[string]string{k("sticky"): "true"},
			want:        with(func(c *allTypes) { c.Sticky = ptr(true) }),
			wantResult:  Result{Set: []string{k("sticky")}},
		},
		{
			name: "invalid CIDRs",
			annotations: map[string]string{
				k("source-ranges"): "10.0.0.0/8,10.0.0.0/33",
				k("ip"):            "10.0.0.300",
			},
			want: defaults(),
			wantErrs: []string{
				`annotation "example.com/lb-source-ranges": invalid value "10.0.0.0/8,10.0.0.0/33": item "10.0.0.0/33": must be a CIDR such as 10.0.0.0/8 or 2001:db8::/32, or a single IP address`,
				`annotation "example.com/lb-ip": invalid value "10.0.0.300": ParseAddr("10.0.0.300"): IPv4 field has value >255`,
			},
		},
		{
			name:        "scoped IPv6 addresses are not CIDRs",
			annotations: map[string]string{k("source-ranges"): "fe80::1%eth0"},
			want:        defaults(),
			wantErrs: []string{
				`annotation "example.com/lb-source-ranges": invalid value "fe80::1%eth0": item "fe80::1%eth0": must be a CIDR such as 10.0.0.0/8 or 2001:db8::/32, or a single IP address`,
			},
		},
		{
			name:        "TextUnmarshaler errors are passed through",
			annotations: map[string]string{k("level"): "medium"},
			want:        defaults(),
			wantErrs:    []string{`annotation "example.com/lb-level": invalid value "medium": must be "low" or "high"`},
		},
		{
			name:        "bad maps",
			annotations: map[string]string{k("node-selector"): "a=b,c"},
			want:        defaults(),
			wantErrs:    []string{`annotation "example.com/lb-node-selector": invalid value "a=b,c": item "c": must be key=value`},
		},
		{
			name:        "duplicate map keys",
			annotations: map[string]string{k("node-selector"): "a=b,a=c"},
			want:        defaults(),
			wantErrs:    []string{`annotation "example.com/lb-node-selector": invalid value "a=b,a=c": key "a" is given twice`},
		},
		{
			name: "every bad annotation is reported, in field order, and the rest decoded",
			annotations: map[string]string{
				k("healthcheck-port"):             "http",
				k("name"):                         "web",
				k("connection-limit"):             "many",
				k("healthcheck-interval-seconds"): "abc",
				k("tls-ports"):                    "443",
			},
			prefill: &allTypes{Conns: 10},
			want: with(func(c *allTypes) {
				c.Name = "web"
				c.Conns = 10 // the pre-filled value survives a bad annotation
				c.TLSPorts = []int32{443}
			}),
			wantResult: Result{Set: []string{k("name"), k("tls-ports")}},
			wantErrs: []string{
				`annotation "example.com/lb-connection-limit": invalid value "many": must be an integer >= -1`,
				`annotation "example.com/lb-healthcheck-port": invalid value "http": must be an integer between 1 and 65535`,
				`annotation "example.com/lb-healthcheck-interval-seconds": invalid value "abc": must be a whole number of seconds between 3 and 300`,
			},
		},
		{
			name: "unknown keys under the prefix are reported, others ignored",
			annotations: map[string]string{
				k("nmea"):        "typo",
				k("zzz"):         "x",
				k("a/b"):         "x",
				k("name"):        "web",
				"example.com/lb": "exactly the prefix minus the dash",
				"kubectl.kubernetes.io/last-applied-configuration": "{}",
				"service.beta.kubernetes.io/other-cloud":           "x",
			},
			want:       with(func(c *allTypes) { c.Name = "web" }),
			wantResult: Result{Unknown: []string{k("a/b"), k("nmea"), k("zzz")}, Set: []string{k("name")}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got allTypes
			if tc.prefill != nil {
				got = *tc.prefill
			}
			res, err := Decode(tc.annotations, testPrefix, &got)
			if diff := cmp.Diff(tc.wantErrs, fieldErrors(t, err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, cmpOpts); diff != "" {
				t.Errorf("decoded struct (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResult, res, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldError(t *testing.T) {
	inner := errors.New("must be a whole number of seconds")
	err := error(&FieldError{
		Key:   "service.beta.kubernetes.io/do-loadbalancer-healthcheck-check-interval-seconds",
		Value: "abc",
		Err:   inner,
	})
	want := `annotation "service.beta.kubernetes.io/do-loadbalancer-healthcheck-check-interval-seconds": invalid value "abc": must be a whole number of seconds`
	if got := err.Error(); got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
	if !errors.Is(err, inner) {
		t.Error("errors.Is does not find the wrapped error")
	}
}

func TestDecodeIsRepeatable(t *testing.T) {
	// Defaults of lists must not be shared between calls through the cache.
	type listDefault struct {
		Ports []int `annotation:"ports" default:"80,443"`
	}
	var a, b listDefault
	if _, err := Decode(nil, testPrefix, &a); err != nil {
		t.Fatal(err)
	}
	a.Ports[0] = 1
	if _, err := Decode(nil, testPrefix, &b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{80, 443}, b.Ports); diff != "" {
		t.Errorf("second decode (-want +got):\n%s", diff)
	}
}

func TestDecodeConcurrent(t *testing.T) {
	type fresh struct {
		Port int `annotation:"port" default:"80"`
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			prefix := testPrefix
			if i%2 == 1 {
				prefix = "other.example.com/"
			}
			var got fresh
			if _, err := Decode(map[string]string{prefix + "port": "8080"}, prefix, &got); err != nil || got.Port != 8080 {
				t.Errorf("Decode: %+v, %v", got, err)
			}
		})
	}
	wg.Wait()
}

func TestDecodeProgrammingErrors(t *testing.T) {
	var nilStruct *allTypes
	n := 0
	tests := []struct {
		name    string
		out     any
		wantErr string
	}{
		{"nil", nil, "needs a non-nil pointer to a struct, got <nil>"},
		{"struct value", allTypes{}, "needs a non-nil pointer to a struct, got annotations.allTypes"},
		{"nil pointer", nilStruct, "needs a non-nil pointer to a struct, got *annotations.allTypes"},
		{"pointer to non-struct", &n, "needs a non-nil pointer to a struct, got *int"},
		{"unsupported type", &struct {
			C chan int `annotation:"c"`
		}{}, "field C: unsupported type chan int"},
		{"unsupported slice", &struct {
			P []*int `annotation:"p"`
		}{}, "field P: unsupported type []*int"},
		{"unsupported map", &struct {
			M map[string]int `annotation:"m"`
		}{}, "field M: unsupported type map[string]int"},
		{"unsupported pointer", &struct {
			P **int `annotation:"p"`
		}{}, "field P: unsupported type **int"},
		{"unsupported nested", &struct {
			Group struct {
				F func() `annotation:"f"`
			}
		}{}, "field Group.F: unsupported type func()"},
		{"bad default", &struct {
			N int `annotation:"n" default:"ten"`
		}{}, `field N: invalid default "ten": must be an integer`},
		{"default outside enum", &struct {
			S string `annotation:"s" enum:"a,b" default:"c"`
		}{}, `field S: invalid default "c": must be one of a, b`},
		{"duration min above max", &struct {
			D time.Duration `annotation:"d" unit:"ms" min:"1s" max:"1500us" default:"0"`
		}{}, `field D: min 1s is greater than max 1500us`},
		{"default outside range", &struct {
			D time.Duration `annotation:"d" unit:"s" min:"1" default:"0"`
		}{}, `field D: invalid default "0": must be a whole number of seconds >= 1`},
		{"min on string", &struct {
			S string `annotation:"s" min:"1"`
		}{}, "field S: min tag is not supported for type string"},
		{"enum on int", &struct {
			N int `annotation:"n" enum:"1,2"`
		}{}, "field N: enum tag is not supported for type int"},
		{"unit on int", &struct {
			N int `annotation:"n" unit:"s"`
		}{}, "field N: unit tag is not supported for type int"},
		{"unknown unit", &struct {
			D time.Duration `annotation:"d" unit:"h"`
		}{}, `field D: unit tag "h": must be "s" or "ms"`},
		{"bad min", &struct {
			N uint8 `annotation:"n" min:"-1"`
		}{}, `field N: min tag "-1": strconv.ParseUint: parsing "-1": invalid syntax`},
		{"min above max", &struct {
			N int `annotation:"n" min:"10" max:"1"`
		}{}, "field N: min 10 is greater than max 1"},
		{"empty enum item", &struct {
			S string `annotation:"s" enum:"a,,b"`
		}{}, `field S: enum tag "a,,b" has an empty item`},
		{"enum listed twice", &struct {
			S string `annotation:"s" enum:"tcp,TCP"`
		}{}, `field S: enum tag lists "TCP" twice`},
		{"empty annotation tag", &struct {
			S string `annotation:""`
		}{}, "field S: empty annotation tag"},
		{"unexported field", &struct {
			s string `annotation:"s"`
		}{}, "field s: annotation tag on an unexported field"},
		{"key used twice", &struct {
			A string `annotation:"a"`
			B string `annotation:"b" alias:"a"`
		}{}, `field B: key "a" is already used by field A`},
		{"a rejected field claims no key", &struct {
			A string `annotation:"a" alias:"b"`
			B string `annotation:"c" alias:"b"`
			C string `annotation:"c"`
		}{}, `field B: key "b" is already used by field A`},
		{"alias repeats the key", &struct {
			A string `annotation:"a" alias:"a"`
		}{}, `field A: key "a" is listed twice`},
		{"relative key collides with a full key", &struct {
			A string `annotation:"x"`
			B string `annotation:"example.com/lb-x"`
		}{}, `field B: key "example.com/lb-x" is already used by field A`},
		{"invalid key", &struct {
			A string `annotation:"this-name-is-far-too-long-for-an-annotation-key-name-part-really"`
		}{}, `field A: key "example.com/lb-this-name-is-far-too-long-for-an-annotation-key-name-part-really": name part must be no more than 63 bytes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(map[string]string{"example.com/lb-n": "1"}, testPrefix, tc.out)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Decode error = %v, want it to contain %q", err, tc.wantErr)
			}
			var fe *FieldError
			if errors.As(err, &fe) {
				t.Errorf("a programming error must not be a *FieldError: %v", err)
			}
			if tc.out == nil || !strings.HasPrefix(tc.wantErr, "field ") {
				return
			}
			// Docs generation reports the same mistakes.
			if _, err := Fields(testPrefix, tc.out); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Fields error = %v, want it to contain %q", err, tc.wantErr)
			}
			if _, err := Markdown("T", testPrefix, tc.out); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Markdown error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestDecodeWalksNestedAndEmbeddedStructs(t *testing.T) {
	type listener struct {
		Port int `annotation:"port"`
	}
	type tls struct {
		Cert string `annotation:"cert"`
	}
	type config struct {
		tls      // embedded, unexported type: its exported fields are promoted
		Listener listener
		hidden   listener //nolint:unused // unexported and not embedded: ignored
		Pointer  *listener
	}
	var got config
	res, err := Decode(map[string]string{"x/port": "80", "x/cert": "c"}, "x/", &got)
	if err != nil {
		t.Fatal(err)
	}
	want := config{tls: tls{Cert: "c"}, Listener: listener{Port: 80}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{})); diff != "" {
		t.Errorf("decoded struct (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Result{Set: []string{"x/cert", "x/port"}}, res); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
}

func TestQuoteShortensLongValues(t *testing.T) {
	if got := Quote("10s"); got != `"10s"` {
		t.Errorf("Quote(short) = %s", got)
	}
	long := strings.Repeat("é", 5000) // 10,000 bytes, two per rune
	got := Quote(long)
	if len(got) > 80 || !strings.HasSuffix(got, "... (10000 bytes)") || !utf8.ValidString(got) {
		t.Errorf("Quote(10 KB) = %s", got)
	}
}
