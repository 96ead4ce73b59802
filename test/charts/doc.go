// Package charts tests the Helm charts under charts/ as `helm install`
// would use them: each chart is rendered with the Helm library (values
// checked against its values.schema.json) for its default values and the
// non-default sets in testdata/values, and every object is applied with
// server-side dry-run to a real kube-apiserver; the charts' RBAC must equal
// the shipped examples/manifests/<cloud>/rbac.yaml; and one chart
// (DigitalOcean) is installed for real and its CCM binary run as the
// chart's Deployment would run it. The DigitalOcean CSI driver's chart
// (charts/digitalocean-csi-driver) is rendered, schema-checked and dry-run
// applied the same way, and must render the objects of
// examples/manifests/digitalocean/csi, RBAC included (csi_test.go).
//
// It is its own module (Helm's module graph stays out of the library's
// go.mod) and uses the repository's internal/cluster through a replace of
// the root module.
package charts
