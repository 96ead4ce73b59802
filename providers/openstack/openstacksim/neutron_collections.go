package openstacksim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// neutronCollection is a type of Neutron resource served from one of the
// state's tables: its list (filtered, paged and projected as the query
// asks) and each one by ID, under the JSON keys plural and singular.
type neutronCollection[T any] struct {
	plural, singular string
	// kind is what errors call one: "Security group".
	kind  string
	table func(*state) *simkit.Table[T]
	// show is one as the API shows it, which may settle it; nil shows it
	// as it is.
	show func(*T) any
}

// The collections served alike.
var (
	networkAPI = neutronCollection[Network]{plural: "networks", singular: "network", kind: "Network",
		table: func(st *state) *simkit.Table[Network] { return st.networks }}
	subnetAPI = neutronCollection[subnetRec]{plural: "subnets", singular: "subnet", kind: "Subnet",
		table: func(st *state) *simkit.Table[subnetRec] { return st.subnets },
		show:  func(sr *subnetRec) any { return subnetView(sr) }}
	portAPI = neutronCollection[Port]{plural: "ports", singular: "port", kind: "Port",
		table: func(st *state) *simkit.Table[Port] { return st.ports },
		show:  func(p *Port) any { return portJSON(p) }}
	routerAPI = neutronCollection[Router]{plural: "routers", singular: "router", kind: "Router",
		table: func(st *state) *simkit.Table[Router] { return st.routers }}
	floatingIPAPI = neutronCollection[FloatingIP]{plural: "floatingips", singular: "floatingip", kind: "Floating IP",
		table: func(st *state) *simkit.Table[FloatingIP] { return st.floatingIPs },
		show: func(f *FloatingIP) any {
			settleFIP(f)
			return fipView(f)
		}}
	securityGroupAPI = neutronCollection[SecurityGroup]{plural: "security_groups", singular: "security_group", kind: "Security group",
		table: func(st *state) *simkit.Table[SecurityGroup] { return st.securityGroups }}
)

func (c neutronCollection[T]) view(x *T) any {
	if c.show == nil {
		return x
	}
	return c.show(x)
}

// list answers GET of the collection.
func (c neutronCollection[T]) list(s *Server) simkit.HandlerFunc {
	return func(r *http.Request) response {
		rows := c.table(s.st).All()
		items := make([]map[string]any, 0, len(rows))
		for _, x := range rows {
			v := c.view(x)
			m, isMap := v.(map[string]any)
			if !isMap {
				m = toMap(v)
			}
			items = append(items, m)
		}
		return s.neutronList(r, c.plural, c.kind, items)
	}
}

// get answers GET of one.
func (c neutronCollection[T]) get(s *Server) simkit.HandlerFunc {
	return func(r *http.Request) response {
		x, found := c.table(s.st).Get(r.PathValue("id"))
		if !found {
			return neutronNotFound(c.kind, r.PathValue("id"))
		}
		return ok200(c.singular, c.view(x))
	}
}

// taggedCollection is a collection of the standard-attr-tag extension:
// what errors call one, and the attributes of the one with an ID.
type taggedCollection struct {
	kind string
	find func(st *state, id string) (*TaggedAttributes, bool)
}

// taggable are the collections of the standard-attr-tag extension, by
// their path.
var taggable = map[string]taggedCollection{
	"networks":        tagsIn(networkAPI),
	"subnets":         tagsIn(subnetAPI),
	"ports":           tagsIn(portAPI),
	"routers":         tagsIn(routerAPI),
	"floatingips":     tagsIn(floatingIPAPI),
	"security-groups": tagsIn(securityGroupAPI),
}

func tagsIn[T any, P interface {
	*T
	tagged() *TaggedAttributes
}](c neutronCollection[T]) taggedCollection {
	return taggedCollection{kind: c.kind, find: func(st *state, id string) (*TaggedAttributes, bool) {
		x, found := c.table(st).Get(id)
		if !found {
			return nil, false
		}
		return P(x).tagged(), true
	}}
}
