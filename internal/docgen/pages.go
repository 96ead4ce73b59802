package main

import (
	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/framework/annotations"
	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/triton"
)

// page is one generated file under docs/.
type page struct {
	path   string
	render func() ([]byte, error)
}

// pages lists every generated reference page; a provider adds its own.
var pages = []page{
	{"skeleton/annotations.md", func() ([]byte, error) {
		return annotations.Markdown("Skeleton Service annotations", skeleton.AnnotationPrefix, skeleton.LoadBalancerConfig{})
	}},
	{"skeleton/config.md", func() ([]byte, error) {
		return config.Markdown("Skeleton configuration", skeleton.Config{})
	}},
	{"digitalocean/annotations.md", func() ([]byte, error) {
		return annotations.Markdown("DigitalOcean Service annotations", digitalocean.AnnotationPrefix, digitalocean.LoadBalancerConfig{})
	}},
	{"digitalocean/config.md", func() ([]byte, error) {
		return config.Markdown("DigitalOcean configuration", digitalocean.Config{})
	}},
	{"digitalocean/csi-config.md", digitalOceanCSIConfig},
	{"brightbox/annotations.md", func() ([]byte, error) {
		return annotations.Markdown("Brightbox Service annotations", brightbox.AnnotationPrefix, brightbox.LoadBalancerConfig{})
	}},
	{"brightbox/config.md", func() ([]byte, error) {
		return config.Markdown("Brightbox configuration", brightbox.Config{})
	}},
	{"brightbox/csi-config.md", brightboxCSIConfig},
	{"openstack/annotations.md", func() ([]byte, error) {
		return annotations.Markdown("OpenStack Service annotations", openstack.AnnotationPrefix, openstack.LoadBalancerConfig{})
	}},
	{"openstack/config.md", func() ([]byte, error) {
		return config.Markdown("OpenStack configuration (cloud.conf)", openstack.Config{})
	}},
	{"openstack/csi-config.md", openStackCSIConfig},
	{"triton/annotations.md", func() ([]byte, error) {
		return annotations.Markdown("Triton Service annotations", triton.AnnotationPrefix, triton.LoadBalancerConfig{})
	}},
	{"triton/config.md", func() ([]byte, error) {
		return config.Markdown("Triton configuration", triton.Config{})
	}},
	{"triton/csi-config.md", tritonCSIConfig},
	{"rancher/annotations.md", func() ([]byte, error) {
		return annotations.Markdown("Rancher Service annotations", rancher.AnnotationPrefix, rancher.LoadBalancerConfig{})
	}},
	{"rancher/config.md", func() ([]byte, error) {
		return config.Markdown("Rancher configuration", rancher.Config{})
	}},
	{"rancher/csi-config.md", rancherCSIConfig},
}
