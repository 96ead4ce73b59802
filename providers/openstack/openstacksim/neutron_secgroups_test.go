package openstacksim

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

type deviceIDs []string

func (d deviceIDs) ToPortListQuery() (string, error) {
	return "?" + url.Values{"device_id": d}.Encode(), nil
}

func TestSecurityGroupsAndPorts(t *testing.T) {
	s, c := setup(t, Options{})
	a := s.AddServer(NovaServer{Name: "a"})
	b := s.AddServer(NovaServer{Name: "b"})

	sg, err := groups.Create(ctx(), c.network, groups.CreateOpts{Name: "lb-sg", Description: "d"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if len(sg.Rules) != 2 || sg.Rules[0].Direction != "egress" {
		t.Errorf("new group rules = %+v, want Neutron's two egress rules", sg.Rules)
	}
	// Rules: a duplicate is 409, and "everyone" is the same with or
	// without 0.0.0.0/0.
	rule := rules.CreateOpts{Direction: rules.DirIngress, EtherType: rules.EtherType4, SecGroupID: sg.ID, Protocol: rules.ProtocolTCP, PortRangeMin: 30080, PortRangeMax: 30080}
	if _, err := rules.Create(ctx(), c.network, rule).Extract(); err != nil {
		t.Fatal(err)
	}
	rule.RemoteIPPrefix = "0.0.0.0/0"
	_, err = rules.Create(ctx(), c.network, rule).Extract()
	wantNeutronError(t, err, http.StatusConflict, "SecurityGroupRuleExists")
	rule.RemoteIPPrefix = "10.0.0.7/24"
	r, err := rules.Create(ctx(), c.network, rule).Extract()
	if err != nil || r.RemoteIPPrefix != "10.0.0.0/24" {
		t.Fatalf("rule = %+v, %v; want the prefix masked", r, err)
	}
	pages, err := rules.List(c.network, rules.ListOpts{SecGroupID: sg.ID}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := rules.ExtractRules(pages); len(list) != 4 {
		t.Errorf("rules of the group: %d, want 4", len(list))
	}

	// Ports: security_groups replaces the list; ports filter on it and on
	// several device IDs.
	def := s.Defaults().SecurityGroupID
	sgs := []string{def, sg.ID}
	for _, v := range []NovaServer{a, b} {
		p, err := ports.Update(ctx(), c.network, v.Ports[0].ID, ports.UpdateOpts{SecurityGroups: &sgs}).Extract()
		if err != nil || !slices.Equal(p.SecurityGroups, sgs) {
			t.Fatalf("port update: %+v, %v", p, err)
		}
	}
	pages, err = ports.List(c.network, ports.ListOpts{SecurityGroups: []string{sg.ID}}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := ports.ExtractPorts(pages); len(list) != 2 {
		t.Errorf("ports with the group: %d, want 2", len(list))
	}
	pages, err = ports.List(c.network, deviceIDs{a.ID, b.ID}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := ports.ExtractPorts(pages); len(list) != 2 {
		t.Errorf("ports of two devices: %d, want 2", len(list))
	}

	// A group on a port cannot be deleted.
	wantNeutronError(t, groups.Delete(ctx(), c.network, sg.ID).ExtractErr(), http.StatusConflict, "SecurityGroupInUse")
	only := []string{def}
	for _, v := range []NovaServer{a, b} {
		if _, err := ports.Update(ctx(), c.network, v.Ports[0].ID, ports.UpdateOpts{SecurityGroups: &only}).Extract(); err != nil {
			t.Fatal(err)
		}
	}
	if err := groups.Delete(ctx(), c.network, sg.ID).ExtractErr(); err != nil {
		t.Fatalf("delete unused group: %v", err)
	}

	// A port without port security takes no group.
	none, off := []string{}, false
	if _, err := ports.Update(ctx(), c.network, a.Ports[0].ID, ports.UpdateOpts{SecurityGroups: &none}).Extract(); err != nil {
		t.Fatal(err)
	}
	opts := portsecurity.PortUpdateOptsExt{UpdateOptsBuilder: ports.UpdateOpts{}, PortSecurityEnabled: &off}
	if _, err := ports.Update(ctx(), c.network, a.Ports[0].ID, opts).Extract(); err != nil {
		t.Fatal(err)
	}
	_, err = ports.Update(ctx(), c.network, a.Ports[0].ID, ports.UpdateOpts{SecurityGroups: &only}).Extract()
	wantNeutronError(t, err, http.StatusBadRequest, "PortSecurityAndIPRequiredForSecurityGroups")
}
