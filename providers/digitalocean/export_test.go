package digitalocean

// NewWithMetadataURL returns New() reading the region from the metadata
// service at url, for tests.
func NewWithMetadataURL(url string) *Provider {
	p := New()
	p.metadataURL = url
	return p
}
