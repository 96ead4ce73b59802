package cloud

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework/config"
)

// mergeClouds fills the empty settings of g from an entry of a clouds.yaml
// (and its secure.yaml), as OCCM does for [Global] use-clouds=true: the
// file is [Global] clouds-file, else envFile (OS_CLIENT_CONFIG_FILE), else
// the first of ./clouds.yaml, ~/.config/openstack/clouds.yaml and
// /etc/openstack/clouds.yaml; the entry is [Global] cloud, else envCloud
// (OS_CLOUD), else the file's only entry. Settings in cloud.conf win.
//
// The file is decoded with gophercloud's clouds.yaml types. Errors name the
// file, never its content. files are the files it read (the clouds.yaml,
// and the secure.yaml if there is one), also on error.
func mergeClouds(g *GlobalSection, envFile, envCloud string) (files []string, err error) {
	path, err := findCloudsFile(cmp.Or(g.CloudsFile, envFile))
	if err != nil {
		return nil, err
	}
	files = []string{path}
	var file clouds.Clouds
	if err := readYAML(path, &file); err != nil {
		return files, err
	}
	name := cmp.Or(g.Cloud, envCloud)
	if name == "" {
		if len(file.Clouds) != 1 {
			return files, fmt.Errorf("[Global] cloud: required, %s has %d entries (or set OS_CLOUD)", path, len(file.Clouds))
		}
		for n := range file.Clouds {
			name = n
		}
	}
	cloud, ok := file.Clouds[name]
	if !ok {
		return files, fmt.Errorf("[Global] cloud: %s has no entry %q (entries: %q)", path, name, entryNames(file.Clouds))
	}
	if cloud.Profile != "" || cloud.Cloud != "" {
		return files, fmt.Errorf("[Global] cloud: entry %q of %s uses a public-cloud profile, which is not supported; write its settings out", name, path)
	}
	auth := cloud.AuthInfo
	if auth == nil {
		auth = &clouds.AuthInfo{}
	}
	securePath := filepath.Join(filepath.Dir(path), "secure.yaml")
	if _, err := os.Stat(securePath); err == nil {
		files = append(files, securePath)
		var secure clouds.Clouds
		if err := readYAML(securePath, &secure); err != nil {
			return files, err
		}
		if s, ok := secure.Clouds[name]; ok && s.AuthInfo != nil {
			overlayAuth(auth, s.AuthInfo)
		}
	}

	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&g.AuthURL, auth.AuthURL)
	fill(&g.UserID, auth.UserID)
	fill(&g.Username, auth.Username)
	fill(&g.TenantID, cmp.Or(g.ProjectID, auth.ProjectID))
	fill(&g.TenantName, cmp.Or(g.ProjectName, auth.ProjectName))
	fill(&g.TenantDomainID, cmp.Or(g.ProjectDomainID, auth.ProjectDomainID))
	fill(&g.TenantDomainName, cmp.Or(g.ProjectDomainName, auth.ProjectDomainName))
	fill(&g.DomainID, auth.DomainID)
	fill(&g.DomainName, auth.DomainName)
	fill(&g.UserDomainID, auth.UserDomainID)
	fill(&g.UserDomainName, auth.UserDomainName)
	fill(&g.ApplicationCredentialID, auth.ApplicationCredentialID)
	fill(&g.ApplicationCredentialName, auth.ApplicationCredentialName)
	fill(&g.Region, cloud.RegionName)
	fill(&g.EndpointType, cmp.Or(cloud.EndpointType, cloud.Interface))
	fill(&g.CAFile, cloud.CACertFile)
	fill(&g.CertFile, cloud.ClientCertFile)
	fill(&g.KeyFile, cloud.ClientKeyFile)
	if g.Password.IsZero() && auth.Password != "" {
		g.Password = config.NewSecret(auth.Password)
	}
	if g.ApplicationCredentialSecret.IsZero() && auth.ApplicationCredentialSecret != "" {
		g.ApplicationCredentialSecret = config.NewSecret(auth.ApplicationCredentialSecret)
	}
	return files, nil
}

// findCloudsFile returns path, or the first clouds.yaml of the default
// search locations when path is "".
func findCloudsFile(path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("[Global] clouds-file: %w", err)
		}
		return path, nil
	}
	candidates := []string{"clouds.yaml"}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "openstack", "clouds.yaml"))
	}
	candidates = append(candidates, "/etc/openstack/clouds.yaml")
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("[Global] use-clouds: no clouds.yaml found (set clouds-file or OS_CLIENT_CONFIG_FILE); looked in %q", candidates)
}

// readYAML decodes a clouds.yaml or secure.yaml. A decoding error is not
// wrapped: it may quote the file's content, which holds credentials.
func readYAML(path string, out *clouds.Clouds) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("[Global] clouds-file: %s does not exist", path)
		}
		return fmt.Errorf("[Global] clouds-file: %w", err)
	}
	if err := yaml.Unmarshal(data, out); err != nil {
		return fmt.Errorf("[Global] clouds-file: %s is not a valid clouds.yaml", path)
	}
	return nil
}

// overlayAuth sets the fields of dst that src sets: secure.yaml wins over
// clouds.yaml.
func overlayAuth(dst, src *clouds.AuthInfo) {
	for _, f := range []struct{ dst, src *string }{
		{&dst.AuthURL, &src.AuthURL}, {&dst.Username, &src.Username}, {&dst.UserID, &src.UserID},
		{&dst.Password, &src.Password}, {&dst.ProjectID, &src.ProjectID}, {&dst.ProjectName, &src.ProjectName},
		{&dst.ProjectDomainID, &src.ProjectDomainID}, {&dst.ProjectDomainName, &src.ProjectDomainName},
		{&dst.UserDomainID, &src.UserDomainID}, {&dst.UserDomainName, &src.UserDomainName},
		{&dst.DomainID, &src.DomainID}, {&dst.DomainName, &src.DomainName},
		{&dst.ApplicationCredentialID, &src.ApplicationCredentialID},
		{&dst.ApplicationCredentialName, &src.ApplicationCredentialName},
		{&dst.ApplicationCredentialSecret, &src.ApplicationCredentialSecret},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
}

func entryNames(m map[string]clouds.Cloud) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
