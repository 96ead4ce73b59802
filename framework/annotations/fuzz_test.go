package annotations_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
)

const fuzzPrefix = "example.com/lb-"

// fuzzLevel decodes itself, as a provider's own types do.
type fuzzLevel int

func (l *fuzzLevel) UnmarshalText(b []byte) error {
	*l = fuzzLevel(len(b))
	if len(b) > 3 {
		return errTooLong
	}
	return nil
}

type textError string

func (e textError) Error() string { return string(e) }

const errTooLong = textError("at most 3 bytes")

// fuzzConfig has a field of every type Decode supports, with every tag.
type fuzzConfig struct {
	Protocol  string            `annotation:"protocol" enum:"tcp,http,https" default:"tcp"`
	Name      string            `annotation:"name" alias:"old-name,legacy.example.com/name"`
	Proxy     bool              `annotation:"enable-proxy-protocol"`
	Sticky    *bool             `annotation:"sticky"`
	Keepalive *bool             `annotation:"keepalive" default:"true"`
	Conns     int               `annotation:"connection-limit" min:"-1" default:"-1"`
	Retries   int64             `annotation:"retries"`
	Port16    uint16            `annotation:"port16"`
	Weight    uint32            `annotation:"weight" max:"256"`
	Limit     *int32            `annotation:"limit" min:"0"`
	Ratio     float64           `annotation:"ratio" min:"0" max:"1"`
	Small     float32           `annotation:"small"`
	Idle      time.Duration     `annotation:"idle-timeout-ms" unit:"ms"`
	Interval  time.Duration     `annotation:"interval-seconds" unit:"s" min:"3" max:"300" default:"10"`
	Timeout   *time.Duration    `annotation:"timeout" min:"1s" max:"1m"`
	Tags      []string          `annotation:"tags"`
	Protocols []string          `annotation:"protocols" enum:"TCP,UDP"`
	TLSPorts  []int32           `annotation:"tls-ports" min:"1" max:"65535"`
	Sources   []netip.Prefix    `annotation:"source-ranges"`
	Selector  map[string]string `annotation:"node-selector"`
	Level     fuzzLevel         `annotation:"level"`
	Addr      netip.Addr        `annotation:"ip"`
	Intervals []time.Duration   `annotation:"intervals" unit:"s" min:"1s"`
	ID        string            `annotation:"example.com/load-balancer-id"`
}

// FuzzDecode decodes fuzzed annotations ("key=value" lines; "#n" is the
// n-th key) into a struct using every supported type and tag: errors name
// their key, decoding is deterministic and a bad value changes nothing else.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"protocol=HTTP\ntls-ports=443, 8443\nsource-ranges=10.0.0.0/8,192.168.1.1,::1/128",
		"name=web\nold-name=old\nlegacy.example.com/name=older",
		"old-name=old\nsticky=yes\nkeepalive=0\nconnection-limit=-2",
		"retries=-9223372036854775808\nport16=65536\nweight=257\nlimit=-1",
		"ratio=NaN\nsmall=1e39\nidle-timeout-ms=1500\ninterval-seconds=1m30s\ntimeout=61s",
		"tags=a,,b ,\nprotocols=tcp,sctp\nnode-selector=a=b,c\nlevel=high\nip=fe80::1%eth0",
		"intervals=1,2s,0\nexample.com/load-balancer-id=lb-1\nunknown-key=x",
		"#0=x\n#7=99999999999999999999\n#30=\xff\xfe",
		"interval-seconds=9223372036854775807\nidle-timeout-ms=-9223372036854775808",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ann := fuzzkit.Annotations[fuzzConfig](t, fuzzPrefix, text)
		_, _ = fuzzkit.Decode[fuzzConfig](t, fuzzPrefix, nil, ann)
	})
}
