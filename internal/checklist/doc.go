// Package checklist holds the tree to the checklist of
// docs/writing-a-provider.md ("Checklist: every place a new cloud
// touches"), so that the guide a newcomer follows cannot drift from the
// code again. Its test, for every cloud of internal/cluster.Providers
// (the template, examples/skeleton, included where a place is one for it):
//
//   - every place the checklist names exists, and a Go file there makes
//     the kit calls the checklist names (frameworktest.RunConformance,
//     cmdtest.CheckCCM...), or a registry there (a list of every cloud)
//     names the cloud;
//   - no file named after a cloud lies outside the cloud's own directory
//     and the places the checklist names: a new kind of place a cloud
//     must touch is added to the checklist, or the test fails;
//   - the checklist's table and this package's list of places name the
//     same places and the same kit calls.
package checklist
