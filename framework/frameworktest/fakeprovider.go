package frameworktest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework"
)

// FakeAnnotationPrefix is the prefix of FakeProvider's Service annotations.
const FakeAnnotationPrefix = "fake.ccmkit.io/"

// FakeLoadBalancerConfig is FakeProvider's annotation struct.
type FakeLoadBalancerConfig struct {
	HealthCheckInterval time.Duration `annotation:"health-check-interval" default:"10s" unit:"s" min:"1s" max:"300s" doc:"Seconds between health checks."`
	ProxyProtocol       bool          `annotation:"proxy-protocol" doc:"Send PROXY protocol v1 to the nodes."`
	Hostname            string        `annotation:"hostname" doc:"Publish this hostname instead of the IP."`
}

// Validate checks what the annotation tags cannot say.
func (c *FakeLoadBalancerConfig) Validate() error {
	if c.Hostname == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(c.Hostname); len(errs) > 0 {
		return fmt.Errorf("annotation %q: %s", FakeAnnotationPrefix+"hostname", strings.Join(errs, "; "))
	}
	return nil
}

// FakeProvider is a complete provider (instances, load balancers, routes)
// over a FakeCloud.
type FakeProvider struct {
	cloud   *FakeCloud
	lb      cloudprovider.LoadBalancer
	account string
}

var (
	_ framework.LoadBalancerLister[FakeLoadBalancerConfig, fakeLB] = fakeLBDriver{}
	_ framework.LoadBalancerValidator[FakeLoadBalancerConfig]      = fakeLBDriver{}

	_ framework.InstancesProvider    = (*FakeProvider)(nil)
	_ framework.LoadBalancerProvider = (*FakeProvider)(nil)
	_ framework.RoutesProvider       = (*FakeProvider)(nil)
)

// NewFakeProvider returns a provider named "fake" over cloud.
func NewFakeProvider(cloud *FakeCloud) *FakeProvider { return &FakeProvider{cloud: cloud} }

// Name implements framework.Provider.
func (p *FakeProvider) Name() string { return "fake" }

// Init implements framework.Provider.
func (p *FakeProvider) Init(_ context.Context, env *framework.Env) error {
	if env.LookupEnv != nil {
		p.account, _ = env.LookupEnv(FakeAccountVar)
	}
	p.lb = framework.NewLoadBalancer(env, fakeLBDriver{p.cloud}, framework.LoadBalancerOptions[FakeLoadBalancerConfig]{
		AnnotationPrefix: FakeAnnotationPrefix,
		IDAnnotation:     FakeAnnotationPrefix + "load-balancer-id",
		Hostname:         func(c *FakeLoadBalancerConfig) string { return c.Hostname },
	})
	return nil
}

// Instances implements framework.InstancesProvider.
func (p *FakeProvider) Instances() framework.Instances {
	return fakeInstances{c: p.cloud, account: p.account}
}

// LoadBalancer implements framework.LoadBalancerProvider.
func (p *FakeProvider) LoadBalancer() cloudprovider.LoadBalancer { return p.lb }

// Routes implements framework.RoutesProvider.
func (p *FakeProvider) Routes() cloudprovider.Routes { return fakeRoutes{p.cloud} }

// fakeInstances are the instances of one account of the cloud: its
// credential sees no other account's.
type fakeInstances struct {
	c       *FakeCloud
	account string
}

func (f fakeInstances) lookup(ctx context.Context, op string, match func(*fakeInstance) bool) (*framework.Instance, error) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, op, false); err != nil {
		var httpErr *fakeHTTPError
		if c.Broken.NotFoundOnError || c.Broken.NotFoundOnAny404 && errors.As(err, &httpErr) && httpErr.status == http.StatusNotFound {
			return nil, framework.NotFound("%v", err)
		}
		return nil, err
	}
	var found []*fakeInstance
	for _, inst := range c.instances {
		if inst.account == f.account && match(inst) {
			found = append(found, inst)
		}
	}
	switch {
	case len(found) == 0:
		return nil, framework.NotFound("fake instance")
	case len(found) > 1 && !c.Broken.GuessByName:
		return nil, fmt.Errorf("fake instances %s and %s match", found[0].ID, found[1].ID)
	}
	cp := found[0].Instance
	return &cp, nil
}

func (f fakeInstances) InstanceByID(ctx context.Context, id string) (*framework.Instance, error) {
	return f.lookup(ctx, "instances.get", func(i *fakeInstance) bool { return i.ID == id })
}

func (f fakeInstances) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	return f.lookup(ctx, "instances.getByName", func(i *fakeInstance) bool { return i.Name == name })
}

// ListInstances pages through the instances like a real cloud: one call per
// PageSize instances.
func (f fakeInstances) ListInstances(ctx context.Context) ([]*framework.Instance, error) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Broken.GuessByName {
		return nil, framework.ErrNotImplemented // lookups by name go to the guessing InstanceByName
	}
	ids := make([]string, 0, len(c.instances))
	for id, inst := range c.instances {
		if inst.account == f.account {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	out := make([]*framework.Instance, 0, len(ids))
	for page := 0; page == 0 || page*c.PageSize < len(ids); page++ {
		if err := c.call(ctx, "instances.list", false); err != nil {
			return nil, err
		}
		for _, id := range ids[page*c.PageSize : min(len(ids), (page+1)*c.PageSize)] {
			cp := c.instances[id].Instance
			out = append(out, &cp)
		}
	}
	return out, nil
}

type fakeLBDriver struct{ c *FakeCloud }

type fakeLBRequest = framework.LoadBalancerRequest[FakeLoadBalancerConfig]

func (d fakeLBDriver) Get(ctx context.Context, id string) (*fakeLB, error) {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, "lb.get", false); err != nil {
		return nil, err
	}
	lb, ok := c.lbs[id]
	if !ok {
		return nil, framework.NotFound("fake load balancer %s", id)
	}
	c.read(lb)
	cp := *lb
	return &cp, nil
}

func (d fakeLBDriver) Find(ctx context.Context, req *fakeLBRequest) (*fakeLB, error) {
	lbs, err := d.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, lb := range lbs {
		if d.Owns(lb, req) {
			return lb, nil
		}
	}
	if d.c.Broken.FindMissingFails {
		return nil, fmt.Errorf("no load balancer for service %s", req.Service.UID)
	}
	return nil, framework.NotFound("fake load balancer for %s", req.Service.UID)
}

// List implements framework.LoadBalancerLister.
func (d fakeLBDriver) List(ctx context.Context) ([]*fakeLB, error) {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, "lb.list", false); err != nil {
		return nil, err
	}
	out := make([]*fakeLB, 0, len(c.lbs))
	for _, lb := range c.lbs {
		c.read(lb)
		cp := *lb
		out = append(out, &cp)
	}
	return out, nil
}

// Owns implements framework.LoadBalancerOwnership: an LB is the Service's
// whose UID it records.
func (d fakeLBDriver) Owns(lb *fakeLB, req *fakeLBRequest) bool {
	switch {
	case d.c.Broken.FindNeverFinds:
		return false
	case d.c.Broken.ClaimsEveryLB:
		return true
	}
	return lb.Owner == string(req.Service.UID)
}

func (d fakeLBDriver) Create(ctx context.Context, req *fakeLBRequest) (*fakeLB, error) {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, "lb.create", true); err != nil {
		return nil, err
	}
	c.next++
	lb := desiredFakeLB(req)
	lb.ID = fmt.Sprintf("lb-%d", c.next)
	lb.IP = fmt.Sprintf("192.0.2.%d", c.next%250+1)
	lb.Provisioning = true
	c.lbs[lb.ID] = &lb
	cp := lb
	return &cp, nil
}

func (d fakeLBDriver) Update(ctx context.Context, lb *fakeLB, req *fakeLBRequest) (bool, error) {
	want := desiredFakeLB(req)
	same := slices.Equal(want.Listeners, lb.Listeners) && slices.Equal(want.Members, lb.Members) &&
		want.HealthInterval == lb.HealthInterval && want.ProxyProtocol == lb.ProxyProtocol &&
		want.Owner == lb.Owner && want.Name == lb.Name
	if same && !d.c.Broken.WriteOnNoop {
		return false, nil
	}
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, "lb.update", true); err != nil {
		return false, err
	}
	cur, ok := c.lbs[lb.ID]
	if !ok {
		return false, framework.NotFound("fake load balancer %s", lb.ID)
	}
	if c.Broken.ListenersOnNodeChange && !slices.Equal(want.Members, cur.Members) {
		want.Listeners = append(want.Listeners, FormatListener("TCP", 10000+len(want.Members), 30000+len(want.Members)))
	}
	cur.Owner, cur.Name = want.Owner, want.Name
	cur.Listeners, cur.Members, cur.HealthInterval, cur.ProxyProtocol = want.Listeners, want.Members, want.HealthInterval, want.ProxyProtocol
	*lb = *cur
	return true, nil
}

func (d fakeLBDriver) Delete(ctx context.Context, lb *fakeLB, _ *fakeLBRequest) error {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, "lb.delete", true); err != nil {
		return err
	}
	delete(c.lbs, lb.ID)
	return nil
}

// Validate implements framework.LoadBalancerValidator: the fake cloud
// balances TCP and UDP.
func (d fakeLBDriver) Validate(req *fakeLBRequest) error {
	var errs []error
	for _, p := range req.Service.Spec.Ports {
		if p.Protocol != corev1.ProtocolTCP && p.Protocol != corev1.ProtocolUDP {
			errs = append(errs, fmt.Errorf("port %d: the fake cloud balances TCP and UDP, not %s", p.Port, p.Protocol))
		}
	}
	return errors.Join(errs...)
}

func (d fakeLBDriver) Inspect(lb *fakeLB) framework.LoadBalancerState {
	s := framework.LoadBalancerState{ID: lb.ID, Provisioning: lb.Provisioning, ProxyProtocol: lb.ProxyProtocol, Pending: lb.Pending}
	if !lb.Provisioning {
		s.IPs = []string{lb.IP}
		if lb.DNSName != "" {
			s.DNSNames = map[string]string{lb.IP: lb.DNSName}
		}
	}
	return s
}

// desiredFakeLB is the LB a request asks for.
func desiredFakeLB(req *fakeLBRequest) fakeLB {
	lb := fakeLB{
		Name: req.Name, Owner: string(req.Service.UID),
		HealthInterval: req.Config.HealthCheckInterval, ProxyProtocol: req.Config.ProxyProtocol,
	}
	for _, p := range req.Service.Spec.Ports {
		lb.Listeners = append(lb.Listeners, FormatListener(string(p.Protocol), int(p.Port), int(p.NodePort)))
	}
	codec := framework.Codec(&FakeProvider{})
	for _, n := range req.Nodes {
		if id, err := codec.Parse(n.Spec.ProviderID); err == nil {
			lb.Members = append(lb.Members, id.Value)
		}
	}
	sort.Strings(lb.Listeners)
	sort.Strings(lb.Members)
	return lb
}

type fakeRoutes struct{ c *FakeCloud }

func (r fakeRoutes) ListRoutes(ctx context.Context, _ string) ([]*cloudprovider.Route, error) {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, "routes.list", false); err != nil {
		return nil, err
	}
	var out []*cloudprovider.Route
	for _, rt := range c.routes {
		route := &cloudprovider.Route{Name: rt.CIDR, DestinationCIDR: rt.CIDR}
		if inst, ok := c.instances[rt.Target]; ok {
			route.TargetNode = types.NodeName(inst.Name)
		} else {
			route.Blackhole = true
		}
		out = append(out, route)
	}
	return out, nil
}

func (r fakeRoutes) CreateRoute(ctx context.Context, _ string, _ string, route *cloudprovider.Route) error {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	var target string
	for id, inst := range c.instances {
		if inst.Name == string(route.TargetNode) {
			target = id
		}
	}
	if target == "" {
		return framework.NotFound("instance for node %s", route.TargetNode)
	}
	if cur, ok := c.routes[route.DestinationCIDR]; ok && cur.Target == target {
		return nil
	}
	if err := c.call(ctx, "routes.create", true); err != nil {
		return err
	}
	c.routes[route.DestinationCIDR] = fakeRoute{Target: target, CIDR: route.DestinationCIDR}
	return nil
}

func (r fakeRoutes) DeleteRoute(ctx context.Context, _ string, route *cloudprovider.Route) error {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.routes[route.DestinationCIDR]; !ok {
		return nil
	}
	if err := c.call(ctx, "routes.delete", true); err != nil {
		return err
	}
	delete(c.routes, route.DestinationCIDR)
	return nil
}
