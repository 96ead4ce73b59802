package skeleton

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/config"
)

// Config is the provider's configuration. The framework fills it before
// Init (see package framework/config): tag defaults, then the --cloud-config
// file (YAML, keys from the json tags), then environment variables, which
// win. It reports every missing or malformed setting at once, each named by
// its environment variable.
//
// This struct is the only place the provider reads its environment: never
// call os.Getenv anywhere else.
type Config struct {
	APIURL string `json:"apiURL" env:"SKELETON_API_URL" required:"true" doc:"Base URL of the Skeleton Cloud API, e.g. https://api.skeleton.example."`
	// Token is a config.Secret: it never prints, and SKELETON_TOKEN_FILE
	// (set instead of SKELETON_TOKEN) names a file that is re-read when it
	// changes, so a rotated Kubernetes Secret applies without a restart.
	Token  config.Secret `json:"token" env:"SKELETON_TOKEN" required:"true" doc:"API token. SKELETON_TOKEN_FILE names a file holding it instead."`
	Region string        `json:"region" env:"SKELETON_REGION" doc:"Region reported for instances whose region the API leaves empty."`
	APIQPS float64       `json:"apiQPS" env:"SKELETON_API_QPS" default:"10" doc:"Requests per second to the API, unless --cloud-api-qps is set."`
}

// Validate checks what tags cannot express. config.Load calls it after
// everything else passed.
func (c *Config) Validate() error {
	var errs []error
	switch u, err := url.Parse(c.APIURL); {
	case err != nil:
		// Not err itself: it quotes the URL, which may hold user:password.
		errs = append(errs, errors.New("SKELETON_API_URL: not a valid URL"))
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		errs = append(errs, fmt.Errorf("SKELETON_API_URL: %s is not an http(s) URL", cloudapi.RedactURL(u)))
	}
	if c.APIQPS < 0 {
		errs = append(errs, fmt.Errorf("SKELETON_API_QPS: must not be negative, got %g", c.APIQPS))
	}
	return errors.Join(errs...)
}
