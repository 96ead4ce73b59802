// Package charts tests the Helm charts under charts/ as `helm install`
// would use them: each chart is rendered with the Helm library (values
// checked against its values.schema.json) for its default values and the
// non-default sets in testdata/values, and every object is applied with
// server-side dry-run to a real kube-apiserver; the charts' RBAC must equal
// the shipped examples/manifests/<cloud>/rbac.yaml; and one chart
// (DigitalOcean) is installed for real and its CCM binary run as the
// chart's Deployment would run it. The CSI drivers' charts
// (charts/<cloud>-csi-driver: DigitalOcean, OpenStack, Brightbox, Triton,
// Rancher) are rendered, schema-checked and dry-run applied the same way,
// from one table (csiCharts in csi_test.go): each must render the objects
// of examples/manifests/<cloud>/csi, RBAC and CRDs included, and its
// schema must accept exactly the environment and class parameters its
// driver reads (csi_schema_test.go).
//
// It is its own module (Helm's module graph stays out of the library's
// go.mod) and uses the repository's internal/cluster through a replace of
// the root module.
package charts
