package annotations_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

func ExampleDecode() {
	const prefix = "service.beta.kubernetes.io/do-loadbalancer-"
	type config struct {
		Protocol string        `annotation:"protocol" enum:"tcp,http,https" default:"tcp"`
		TLSPorts []int32       `annotation:"tls-ports" min:"1" max:"65535"`
		Sticky   *bool         `annotation:"sticky-sessions"`
		Interval time.Duration `annotation:"healthcheck-check-interval-seconds" unit:"s" min:"3" default:"3"`
		Port     int           `annotation:"healthcheck-port" min:"1" max:"65535"`
	}

	cfg := config{Interval: 10 * time.Second} // a cluster-wide default
	res, err := annotations.Decode(map[string]string{
		prefix + "protocol":         "HTTP",
		prefix + "tls-ports":        "443, 8443",
		prefix + "healthcheck-port": "http",
		prefix + "sticky-session":   "true",
	}, prefix, &cfg)

	fmt.Printf("protocol=%s tls-ports=%v sticky=%v interval=%s port=%d\n",
		cfg.Protocol, cfg.TLSPorts, cfg.Sticky, cfg.Interval, cfg.Port)
	fmt.Println("unknown:", res.Unknown)
	var fe *annotations.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Key, "->", fe.Err)
	}
	// Output:
	// protocol=http tls-ports=[443 8443] sticky=<nil> interval=10s port=0
	// unknown: [service.beta.kubernetes.io/do-loadbalancer-sticky-session]
	// service.beta.kubernetes.io/do-loadbalancer-healthcheck-port -> must be an integer between 1 and 65535
}
