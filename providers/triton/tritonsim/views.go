package tritonsim

import (
	"time"
)

// machineJSON is a machine as GetMachine and ListMachines serve it,
// field for field what triton-go's compute.Instance decodes.
type machineJSON struct {
	ID                 string            `json:"id"`
	Name               string            `json:"name"`
	Type               string            `json:"type"`
	Brand              string            `json:"brand"`
	State              string            `json:"state"`
	Image              string            `json:"image"`
	Memory             int               `json:"memory"`
	Disk               int               `json:"disk"`
	Metadata           map[string]string `json:"metadata"`
	Tags               map[string]any    `json:"tags"`
	Created            time.Time         `json:"created"`
	Updated            time.Time         `json:"updated"`
	Docker             bool              `json:"docker"`
	IPs                []string          `json:"ips"`
	Networks           []string          `json:"networks"`
	PrimaryIP          string            `json:"primaryIp"`
	FirewallEnabled    bool              `json:"firewall_enabled"`
	ComputeNode        string            `json:"compute_node"`
	Package            string            `json:"package"`
	DNSNames           []string          `json:"dns_names"`
	DeletionProtection bool              `json:"deletion_protection"`
}

// machineType is the machine's type: virtualmachine for hardware VMs,
// smartmachine for zones.
func machineType(brand string) string {
	if brand == "kvm" || brand == "bhyve" {
		return "virtualmachine"
	}
	return "smartmachine"
}

func (st *state) machineJSON(m *Machine) machineJSON {
	v := machineJSON{
		ID: m.ID, Name: m.Name, Type: machineType(m.Brand), Brand: m.Brand, State: m.State, Image: m.Image,
		Memory: m.Memory, Disk: m.Disk, Metadata: cloneMap(m.Metadata), Tags: cloneMap(m.Tags),
		Created: m.Created, Updated: m.Updated, Docker: m.Docker, FirewallEnabled: m.FirewallEnabled,
		ComputeNode: m.ComputeNode, Package: m.Package, DeletionProtection: m.DeletionProtection,
		IPs: []string{}, Networks: []string{}, DNSNames: st.dnsNames(m),
	}
	for _, nic := range m.NICs {
		v.IPs = append(v.IPs, nic.IP)
		v.Networks = append(v.Networks, nic.Network)
	}
	v.PrimaryIP = st.primaryIP(m)
	return v
}

// primaryIP is the first public NIC's address, else the first NIC's, as
// CloudAPI chooses primaryIp.
func (st *state) primaryIP(m *Machine) string {
	for _, nic := range m.NICs {
		if st.isPublic(nic.Network) {
			return nic.IP
		}
	}
	if len(m.NICs) > 0 {
		return m.NICs[0].IP
	}
	return ""
}

func (st *state) isPublic(network string) bool {
	n, found := st.networks.Get(network)
	return found && n.Public
}
