// Package skeleton is a complete ccmkit provider for Skeleton Cloud, a tiny
// simulated cloud, written to be copied: it is the template for adding a
// real cloud.
//
// # Using it as a template
//
// Copy this directory to providers/<cloud>, rename the package, then:
//
//  1. replace client.go with your cloud's SDK, built on the *http.Client the
//     framework passes to Init (env.HTTPClient or env.NewHTTPClient), and
//     keep its error rules: only an authoritative "does not exist" wraps
//     framework.ErrNotFound, "busy" wraps framework.ErrProvisioning;
//  2. rewrite skeletonsim as <cloud>sim, following the cloud's real REST API
//     (not what your provider happens to send), so tests never need
//     credentials;
//  3. adapt config.go (settings and credentials), instances.go (VM to
//     framework.Instance), loadbalancer*.go (the LoadBalancerDriver) and
//     routes.go (delete it if the cloud has no routes, and the provider then
//     simply does not implement framework.RoutesProvider);
//  4. keep conformance_test.go passing: it is the behavioural contract every
//     provider meets.
//
// A binary is one line: framework.Main(skeleton.New()).
//
// # Files
//
//	doc.go                    this overview
//	provider.go               New, Name, Init and the capability methods
//	config.go                 settings: env variables and --cloud-config keys
//	client.go                 the Skeleton API client (your SDK goes here)
//	instances.go              framework.Instances: VMs as Nodes see them
//	loadbalancer.go           framework.LoadBalancerDriver: Get/Find/Create/Update/Delete
//	lb_config.go              Service annotations, as a typed struct
//	lb_desired.go             pure: the spec a Service asks for
//	lb_diff.go                pure: what differs from the load balancer the cloud has
//	routes.go                 cloudprovider.Routes for --configure-cloud-routes
//	skeletonsim/              the simulated Skeleton Cloud API
//
// # Configuration
//
//	SKELETON_API_URL   required; base URL of the API ("apiURL" in --cloud-config)
//	SKELETON_TOKEN     required; or SKELETON_TOKEN_FILE, re-read when it changes
//	SKELETON_REGION    region for instances the API reports none for
//	SKELETON_API_QPS   API requests per second (default 10, 0 unlimited);
//	                   --cloud-api-qps wins when set
//
// # Service annotations
//
// All under skeleton.ccmkit.io/: name, algorithm (round_robin,
// least_connections), health-check-protocol (tcp, http), health-check-path,
// health-check-interval (1-300s, default 10s), proxy-protocol, and
// load-balancer-id, which the CCM writes. See LoadBalancerConfig.
//
// The providerID is "skeleton://<instance ID>". Load balancers carry the tag
// "ccmkit:<cluster>:<Service UID>" and routes "ccmkit:<cluster>".
package skeleton
