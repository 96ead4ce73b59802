package providerid_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/framework/frameworktest/fuzzkit"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// FuzzParse parses any string with the codecs of every cloud (their
// historic forms, OpenStack's regional one with and without a configured
// region): never a panic, only sentinel errors, and an accepted providerID
// formats back to one that parses to the same instance.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"digitalocean://123", "digitalocean://", "DigitalOcean://123", "digitalocean:///123",
		"openstack:///8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e", "openstack://RegionOne/8c8f5a6e-0c4a-4e55-9a48-2b3b6f3d6a1e",
		"openstack://RegionTwo/x", "openstack://RegionOne/", "openstack:////x", "openstack://a/b/c",
		"brightbox://srv-abc12", " brightbox://srv-abc12\n", "triton://6e4b3b0a-1d8c-4c1e-9f2a-5d7f0e2c9b31",
		"joyent://6e4b3b0a-1d8c-4c1e-9f2a-5d7f0e2c9b31", "rancher://1h5", "aws:///us-east-1a/i-0abc", "://x", "", "x", "a b",
	} {
		f.Add(s)
	}
	codecs := []providerid.Codec{
		{Scheme: "digitalocean"},
		{Scheme: "openstack", TripleSlash: true},
		{Scheme: "openstack", TripleSlash: true, Region: "RegionOne"},
		{Scheme: "brightbox"},
		{Scheme: "triton", Legacy: []string{"joyent"}},
		{Scheme: "rancher"},
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range codecs {
			fuzzkit.ProviderID(t, c, s)
		}
	})
}
