package digitalocean

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/digitalocean/godo"
)

const (
	// defaultMetadataRegionURL is the droplet metadata service's region,
	// reachable only from a droplet.
	defaultMetadataRegionURL = "http://169.254.169.254/metadata/v1/region"
	metadataTimeout          = 3 * time.Second
	maxMetadataBytes         = 256
)

// regionSlug is what a region slug looks like ("nyc3", "ams3").
var regionSlug = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// regionFromMetadata reads the region from the droplet metadata service at
// rawURL. It uses its own plain client with a short timeout: the metadata
// service must never see the API token, and off a droplet it does not
// answer at all.
//
// The response is the bare slug ("nyc3"); anything else is an error rather
// than a region label nobody can match.
func regionFromMetadata(ctx context.Context, rawURL string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", fmt.Errorf("metadata request: %w", err)
	}
	// No proxy: the link-local metadata service is never behind one.
	hc := &http.Client{Timeout: metadataTimeout, Transport: &http.Transport{Proxy: nil}}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading the region from the droplet metadata service: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the region from the droplet metadata service: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("droplet metadata service %s: %s", rawURL, resp.Status)
	}
	region := strings.TrimSpace(string(body))
	if !regionSlug.MatchString(region) {
		return "", fmt.Errorf("droplet metadata service %s: %q is not a region slug", rawURL, truncate(region, 40))
	}
	return region, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// checkRegion makes sure region is one the API knows, so a typo in REGION
// stops the CCM at start-up instead of failing every load-balancer create.
func checkRegion(ctx context.Context, c *godo.Client, region string) error {
	regions, err := listAll(ctx, "regions", c.Regions.List)
	if err != nil {
		return fmt.Errorf("checking REGION: %w", err)
	}
	known := make([]string, 0, len(regions))
	for _, r := range regions {
		if r.Slug == region {
			return nil
		}
		known = append(known, r.Slug)
	}
	return fmt.Errorf("REGION: %q is not a DigitalOcean region (the API lists %s)", region, strings.Join(known, ", "))
}
