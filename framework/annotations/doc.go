// Package annotations decodes a Service's annotations into a provider's typed
// config struct, described by struct tags, and renders the reference docs for
// those annotations from the same struct.
//
// A provider declares its annotations once:
//
//	const Prefix = "service.beta.kubernetes.io/do-loadbalancer-"
//
//	type Config struct {
//		Protocol    string  `annotation:"protocol" enum:"tcp,http,https" default:"tcp" doc:"Protocol of the listeners."`
//		TLSPorts    []int32 `annotation:"tls-ports" min:"1" max:"65535" doc:"Ports that terminate TLS."`
//		Sticky      *bool   `annotation:"sticky-sessions" doc:"Unset means the cloud's default."`
//		LBID        string  `annotation:"kubernetes.digitalocean.com/load-balancer-id" doc:"Set by the CCM."`
//		HealthCheck struct {
//			Interval time.Duration `annotation:"healthcheck-check-interval-seconds" unit:"s" min:"3" max:"300" default:"3"`
//			Path     string        `annotation:"healthcheck-path" alias:"healthcheck-http-path" default:"/"`
//		}
//	}
//
// and decodes them on every sync:
//
//	var cfg Config
//	res, err := annotations.Decode(svc.Annotations, Prefix, &cfg)
//	// err lists every bad annotation at once (errors.As finds each *FieldError);
//	// res.Unknown lists keys under Prefix that no field claims.
//
// # Tags
//
//   - annotation:"key": the annotation; relative to the prefix unless the key
//     contains "/". Fields without it are ignored; untagged nested struct
//     values (not pointers) are walked, so fields can be grouped.
//   - default:"v": used when the annotation is absent and the field is still
//     zero, so a caller can pre-fill cluster-wide defaults that win over the
//     tag. Use a pointer type when the zero value must mean something.
//   - enum:"a,b,c": allowed values of a string (or of each list item),
//     matched in any case and stored in the tag's spelling.
//   - min:"1" max:"65535": inclusive bounds of an integer, float or duration,
//     or of each item of a list of them.
//   - unit:"s" or unit:"ms": a duration also accepts a bare whole number in
//     that unit, as in DigitalOcean's *-seconds annotations.
//   - alias:"old-key,example.com/older-key": legacy keys, read only when the
//     primary key is absent; earlier aliases win over later ones.
//   - doc:"...", deprecated:"use X instead": documentation only.
//
// # Types
//
// string; bool (true/false, yes/no, 1/0, in any case); signed and unsigned
// integers; float32 and float64; time.Duration; netip.Prefix (a CIDR, or a
// single IP meaning /32 or /128); any type whose pointer implements
// encoding.TextUnmarshaler; a pointer to any of those (nil when absent and
// without default, for tri-state settings); a slice of any of those,
// comma-separated; and map[string]string written "k=v,k2=v2".
//
// Struct descriptions are built once per type and cached. Mistakes in a
// struct (an unsupported field type, a default that does not parse, two
// fields claiming one key) are returned as errors by Decode, Fields and
// Markdown alike, so a unit test over Fields catches them.
package annotations
