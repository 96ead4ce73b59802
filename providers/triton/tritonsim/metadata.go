package tritonsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// This file stands in for the instance metadata a Triton machine reads
// with mdata-get (joyent/mdata-client, over /dev/ttyS1 on a hardware VM
// or a zone's metadata socket): the sdc:* keys the CSI node plugin asks
// for, as the machine's record in the simulator has them.

// SDCNIC is an entry of a machine's sdc:nics metadata as Triton serves it
// (cloud-init's SmartOS data source's tests hold real ones): a fabric
// NIC's nic_tag is sdc_overlay/<vnet id>, a public one's external, any
// other's internal.
type SDCNIC struct {
	Interface   string   `json:"interface"`
	MAC         string   `json:"mac"`
	VLANID      int      `json:"vlan_id,omitempty"`
	NICTag      string   `json:"nic_tag"`
	Gateway     string   `json:"gateway,omitempty"`
	Gateways    []string `json:"gateways,omitempty"`
	Netmask     string   `json:"netmask"`
	IP          string   `json:"ip"`
	IPs         []string `json:"ips"`
	NetworkUUID string   `json:"network_uuid"`
	Model       string   `json:"model"`
	MTU         int      `json:"mtu"`
	Primary     bool     `json:"primary,omitempty"`
}

// fabricVNet is the simulated account's fabric vnet ID (sdc_overlay/<id>).
const fabricVNet = 16187209

// SDCNICs is machine m's sdc:nics.
func (s *Server) SDCNICs(m Machine) []SDCNIC {
	nets := map[string]Network{}
	for _, n := range s.State().Networks {
		nets[n.ID] = n
	}
	out := make([]SDCNIC, 0, len(m.NICs))
	for i, nic := range m.NICs {
		n := nets[nic.Network]
		tag, mtu := "internal", 1500
		switch {
		case n.Fabric:
			tag, mtu = fmt.Sprintf("sdc_overlay/%d", fabricVNet), 8500
		case n.Public:
			tag = "external"
		}
		out = append(out, SDCNIC{Interface: fmt.Sprintf("net%d", i), MAC: nic.MAC, VLANID: n.VLAN, NICTag: tag, Gateway: nic.Gateway,
			Gateways: []string{nic.Gateway}, Netmask: nic.Netmask, IP: nic.IP, IPs: []string{nic.IP + "/24"},
			NetworkUUID: nic.Network, Model: "virtio", MTU: mtu, Primary: nic.Primary})
	}
	return out
}

// WriteMdataGet writes, in dir, a script that answers as mdata-get does
// on machine m: the value of sdc:uuid or sdc:nics and exit 0, "No
// metadata for 'key'" and exit 1 for any other key; and returns its path
// (for the CSI node plugin's TRITON_MDATA_GET). nics, when not nil, is
// sdc:nics' raw text instead of the machine's.
func WriteMdataGet(dir, uuid string, nics []byte) (string, error) {
	script := "#!/bin/sh\ncase \"$1\" in\n" +
		"sdc:uuid) printf '%s\\n' '" + uuid + "' ;;\n" +
		"sdc:nics) cat " + filepath.Join(dir, "nics.json") + " ;;\n" +
		"*) echo \"No metadata for '$1'\" >&2; exit 1 ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "nics.json"), append(nics, '\n'), 0o600); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "mdata-get")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		return "", err
	}
	return path, nil
}

// MdataGet writes, in dir, machine m's mdata-get (see WriteMdataGet).
func (s *Server) MdataGet(dir string, m Machine) (string, error) {
	nics, err := json.Marshal(s.SDCNICs(m))
	if err != nil {
		return "", err
	}
	return WriteMdataGet(dir, m.ID, nics)
}
