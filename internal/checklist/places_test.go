package checklist

// place is one row of the checklist in docs/writing-a-provider.md.
type place struct {
	// path is the place as the checklist's "where" column writes it:
	// <cloud> is the cloud's name, providers/<cloud>/ its directory (the
	// template's is examples/skeleton/), <sim> its simulator's package
	// (the directory there whose name ends in "sim": dosim, gbsim,
	// openstacksim...). A path ending in / is a directory, and holds
	// everything beneath it; one with a * is a glob.
	path string
	// files are what a directory must hold.
	files []string
	// uses are the kit calls a Go file of the place must make; "a|b"
	// takes either.
	uses []string
	// registry: the file lists every cloud, and must name this one.
	registry bool
	// optional: a cloud may have none.
	optional bool
	// notTemplate: not a place of the template, examples/skeleton (it
	// ships no chart, no example Services, no make-secret...).
	notTemplate bool
}

// places are the checklist's rows, in its order.
var places = []place{
	{path: "providers/<cloud>/", files: []string{
		"doc.go", "provider.go", "config.go", "client.go", "instances.go",
		"loadbalancer.go", "lb_config.go", "lb_desired.go", "lb_diff.go",
	}},
	{path: "providers/<cloud>/conformance_test.go", uses: []string{"frameworktest.RunConformance", "frameworktest.SimHarness"}},
	{path: "providers/<cloud>/provider_test.go", uses: []string{
		"frameworktest.RunStartupFailures", "frameworktest.CheckSettings", "frameworktest.RunSecretRotation|frameworktest.RunCloudConfigRotation",
	}},
	{path: "providers/<cloud>/loadbalancer_test.go", uses: []string{"frameworktest.NewLBFixture"}},
	{path: "providers/<cloud>/deadlines_test.go", uses: []string{"frameworktest.RunDeadlines"}},
	{path: "providers/<cloud>/makesecret_test.go", uses: []string{"frameworktest.RunMakeSecretSuite"}, notTemplate: true},
	{path: "providers/<cloud>/fuzz_test.go", uses: []string{
		"fuzzkit.FuzzConfig|fuzzkit.Load", "fuzzkit.FuzzAnnotations", "fuzzkit.ProviderID",
	}},
	{path: "providers/<cloud>/responses_fuzz_test.go", uses: []string{"frameworktest.FuzzResponses"}},
	{path: "providers/<cloud>/<sim>/", files: []string{"doc.go", "server.go", "cloud.go", "scenario.go"}, uses: []string{
		"simkit.NewBase", "simkit.Started", "simkit.Scenarios",
	}},
	{path: "providers/<cloud>/csidriver/", files: []string{"doc.go", "driver.go", "config.go", "params.go", "volumes.go"}, optional: true},
	{path: "providers/<cloud>/internal/cloud/", optional: true},
	{path: "cmd/<cloud>-cloud-controller-manager/main.go", uses: []string{"framework.Main"}},
	{path: "cmd/<cloud>-cloud-controller-manager/main_test.go", uses: []string{"cmdtest.CheckCCM"}},
	{path: "cmd/<cloud>-csi-driver/", optional: true},
	{path: "cmd/cloudsim/simulators.go", registry: true},
	{path: "cmd/cloudsim/<cloud>_test.go", optional: true},
	{path: "examples/cloudsim/<cloud>.yaml"},
	{path: "hack/fidelity/<cloud>.sh", notTemplate: true},
	{path: "hack/fidelity/<cloud>.yaml", optional: true},
	{path: "hack/fidelity/<cloud>/", optional: true},
	{path: "hack/fidelity/existing-ccm/<cloud>.*", optional: true},
	{path: "internal/cluster/providers.go", registry: true},
	{path: "internal/bench/floor/layer_<cloud>.go"},
	{path: "examples/manifests/<cloud>/", files: []string{"rbac.yaml", "deployment.yaml", "secret.example.yaml"}},
	{path: "examples/services/<cloud>/", notTemplate: true},
	{path: "examples/services/README.md", registry: true, notTemplate: true},
	{path: "test/e2e/examples_<cloud>_test.go", notTemplate: true},
	{path: "test/e2e/<cloud>_*test.go", optional: true},
	{path: "test/e2e/csi_<cloud>_test.go", optional: true},
	{path: "internal/docgen/pages.go", registry: true},
	{path: "internal/docgen/csi_<cloud>.go", optional: true},
	{path: "docs/<cloud>/", files: []string{"annotations.md", "config.md"}},
	{path: "docs/<cloud>/README.md", notTemplate: true},
	{path: "docs/<cloud>/migration.md", optional: true},
	{path: "docs/performance/data/<cloud>-*.json", optional: true},
	{path: "docs/performance/data/<cloud>+*.json", optional: true},
	{path: "docs/install.md", registry: true, notTemplate: true},
	{path: "docs/make-secret.md", registry: true, notTemplate: true},
	{path: "README.md", registry: true},
	{path: "charts/<cloud>-cloud-controller-manager/", files: []string{"Chart.yaml", "values.yaml", "values.schema.json", "README.md"}, notTemplate: true},
	{path: "test/charts/testdata/values/<cloud>-cloud-controller-manager/", optional: true},
	{path: "charts/<cloud>-csi-driver/", files: []string{"Chart.yaml", "values.yaml", "values.schema.json", "README.md"}, optional: true},
	{path: "test/charts/testdata/values/<cloud>-csi-driver/", optional: true},
	{path: "test/charts/testdata/required/<cloud>-cloud-controller-manager.yaml", optional: true},
	{path: "hack/images/images_test.go", registry: true},
	{path: ".golangci.yml", registry: true},
	{path: "go.mod", notTemplate: true},
}

// gaps are kit calls a cloud cannot make yet, by "<cloud> <call>", each
// with the reason. A gap that closes (the call is made) fails the test
// until it is taken off this list.
var gaps = map[string]string{}
