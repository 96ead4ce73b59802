package cloud

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
	metadataTimeout  = 3 * time.Second
	maxMetadataBytes = 256
)

// RegionSlug is what a region slug looks like ("nyc3", "ams3").
var RegionSlug = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// ReadMetadata reads one plain-text value of the droplet metadata service
// at rawURL, trimmed, for the error "reading <what>: ...". It uses its own
// plain client with a short timeout: the metadata service must never see
// the API token, and off a droplet it does not answer at all.
func ReadMetadata(ctx context.Context, rawURL, what string) (string, error) {
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
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("droplet metadata service %s: %s", rawURL, resp.Status)
	}
	return strings.TrimSpace(string(body)), nil
}

// RegionFromMetadata reads the region from the droplet metadata service
// at rawURL (its /metadata/v1/region). The response is the bare slug
// ("nyc3"); anything else is an error rather than a region label nobody
// can match.
func RegionFromMetadata(ctx context.Context, rawURL string) (string, error) {
	region, err := ReadMetadata(ctx, rawURL, "the region from the droplet metadata service")
	if err != nil {
		return "", err
	}
	if !RegionSlug.MatchString(region) {
		return "", fmt.Errorf("droplet metadata service %s: %q is not a region slug", rawURL, Truncate(region, 40))
	}
	return region, nil
}

// CheckRegion makes sure region is one the API knows, so a typo in REGION
// stops the process at start-up instead of failing every create.
func CheckRegion(ctx context.Context, c *godo.Client, region string) error {
	regions, err := ListAll(ctx, "regions", c.Regions.List)
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
