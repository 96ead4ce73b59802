package openstacksim

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The OpenStack metadata service (Nova's, nova/api/metadata/base.py), as
// a server sees it at http://169.254.169.254/openstack/...: it answers
// each server about itself (by the address it asks from), so the
// simulator serves it per server under /_sim/metadata/<server ID>/, with
// no token (it is the link-local service), no faults and no log:
//
//	GET …/openstack                               the versions, one a line: 2012-08-10 … 2020-10-14, latest
//	GET …/openstack/<version>                     meta_data.json, vendor_data.json, network_data.json, vendor_data2.json
//	GET …/openstack/<version>/meta_data.json      uuid, name, hostname, launch_index, availability_zone,
//	                                              meta, random_seed (2013-04-04), project_id (2015-10-15),
//	                                              devices (2016-06-30), dedicated_cpus (2020-10-14)
//	GET …/openstack/<version>/network_data.json   links, networks and services of the server's ports
//
// MetadataHandler serves the same at the root of a listener of its own;
// WriteConfigDrive writes the same documents as a config drive holds
// them. devices lists the tagged volume attachments (Nova's libvirt
// driver records device metadata for tagged devices only); the hostname
// is the sanitized name with Nova's default dhcp_domain, novalocal.

// metadataVersions are the OpenStack metadata versions of Nova 2023.1,
// oldest first (the newer Epoxy one is not served).
var metadataVersions = []string{
	"2012-08-10", "2013-04-04", "2013-10-17", "2015-10-15", "2016-06-30",
	"2016-10-06", "2017-02-22", "2018-08-27", "2020-10-14",
}

// metadataFiles are the documents of each version.
var metadataFiles = []string{"meta_data.json", "vendor_data.json", "network_data.json", "vendor_data2.json"}

// metadataSince is the version that introduced each document.
var metadataSince = map[string]string{
	"meta_data.json": "2012-08-10", "vendor_data.json": "2013-10-17",
	"network_data.json": "2015-10-15", "vendor_data2.json": "2016-10-06",
}

func (s *Server) metadataRoutes() {
	s.HandleFunc("GET /_sim/metadata/{server}/{path...}", func(w http.ResponseWriter, r *http.Request) {
		s.serveMetadata(w, r, r.PathValue("server"), r.PathValue("path"))
	})
}

// MetadataHandler serves the metadata service of server serverID at its
// root (/openstack/latest/meta_data.json, …), as 169.254.169.254 answers
// the server: for a listener of its own standing in for the link-local
// address. The Server serves the same under /_sim/metadata/<server ID>/.
func (s *Server) MetadataHandler(serverID string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		s.serveMetadata(w, r, serverID, r.URL.Path)
	})
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request, id, path string) {
	body, ctype, ok := s.metadataAnswer(id, path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(body)
}

// metadataAnswer is the metadata service's answer for server id at path
// (under the service's root), with its Content-Type.
func (s *Server) metadataAnswer(id, path string) ([]byte, string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if parts[0] != "openstack" || len(parts) > 3 {
		return nil, "", false
	}
	s.mu.Lock()
	_, known := s.st.servers.Get(id)
	s.mu.Unlock()
	if !known {
		return nil, "", false
	}
	const text = "text/plain; charset=UTF-8"
	if len(parts) == 1 {
		return []byte(strings.Join(append(slices.Clone(metadataVersions), "latest"), "\n")), text, true
	}
	version := parts[1]
	if version == "latest" {
		version = metadataVersions[len(metadataVersions)-1]
	}
	if !slices.Contains(metadataVersions, version) {
		return nil, "", false
	}
	if len(parts) == 2 {
		var files []string
		for _, f := range metadataFiles {
			if version >= metadataSince[f] {
				files = append(files, f)
			}
		}
		return []byte(strings.Join(files, "\n")), text, true
	}
	doc, ok := s.metadataDocument(id, version, parts[2])
	if !ok {
		return nil, "", false
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, "", false
	}
	return data, "application/json", true
}

// metadataDocument is document file of version for server id.
func (s *Server) metadataDocument(id, version, file string) (any, bool) {
	if since, ok := metadataSince[file]; !ok || version < since {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.st.servers.Get(id)
	if !ok {
		return nil, false
	}
	v := s.serverView(rec)
	switch file {
	case "vendor_data.json", "vendor_data2.json":
		return map[string]any{}, true
	case "network_data.json":
		return s.networkData(v), true
	}
	md := map[string]any{
		"uuid": v.ID, "name": v.Name, "hostname": sanitizeHostname(v.Name, v.ID) + ".novalocal",
		"launch_index": 0, "availability_zone": v.AZ,
	}
	if len(v.Metadata) > 0 {
		md["meta"] = v.Metadata
	}
	if version >= "2013-04-04" {
		seed := sha512.Sum512([]byte("random_seed\x00" + v.ID))
		buf := make([]byte, 0, 512)
		for len(buf) < 512 {
			buf = append(buf, seed[:]...)
		}
		md["random_seed"] = base64.StdEncoding.EncodeToString(buf)
	}
	if version >= "2015-10-15" {
		md["project_id"] = rec.project
	}
	if version >= "2016-06-30" {
		devices := []map[string]any{}
		for i, ar := range s.serverAttachments(v.ID) {
			if ar.a.Tag == "" || ar.a.Status == AttachAttaching {
				continue
			}
			devices = append(devices, map[string]any{
				"type": "disk", "bus": "pci", "address": fmt.Sprintf("0000:00:%02x.0", 8+i),
				"serial": ar.v.ID, "path": ar.a.Device, "tags": []string{ar.a.Tag},
			})
		}
		md["devices"] = devices
	}
	if version >= "2020-10-14" {
		md["dedicated_cpus"] = []int{}
	}
	return md, true
}

// networkData is network_data.json for v: a link per port, a network
// per fixed address (DHCP), no services.
func (s *Server) networkData(v NovaServer) map[string]any {
	links, networks := []map[string]any{}, []map[string]any{}
	for i, p := range v.Ports {
		tap := "tap" + p.ID
		if len(tap) > 14 {
			tap = tap[:14]
		}
		links = append(links, map[string]any{
			"id": tap, "vif_id": p.ID, "type": "ovs", "mtu": 1450, "ethernet_mac_address": p.MACAddress,
		})
		for j, ip := range p.FixedIPs {
			typ := "ipv4_dhcp"
			if strings.Contains(ip, ":") {
				typ = "ipv6_dhcp"
			}
			networks = append(networks, map[string]any{
				"id": fmt.Sprintf("network%d", i+j), "type": typ, "link": tap, "network_id": p.Network,
			})
		}
	}
	return map[string]any{"links": links, "networks": networks, "services": []any{}}
}

// WriteConfigDrive writes the config drive of server serverID under dir,
// as Nova builds one (openstack/<version>/meta_data.json, … for every
// version and latest): the documents the metadata service answers (see
// metadataRoutes), for a node plugin reading the config drive instead.
func (s *Server) WriteConfigDrive(dir, serverID string) error {
	for _, version := range append(slices.Clone(metadataVersions), "latest") {
		vdir := filepath.Join(dir, "openstack", version)
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		v := version
		if v == "latest" {
			v = metadataVersions[len(metadataVersions)-1]
		}
		for _, f := range metadataFiles {
			doc, ok := s.metadataDocument(serverID, v, f)
			if f == "meta_data.json" && !ok {
				return fmt.Errorf("openstacksim: no server %s", serverID)
			}
			if !ok {
				continue
			}
			data, err := json.Marshal(doc)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(vdir, f), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
