// Package frameworktest is the test kit ccmkit ships to provider authors:
//
//   - RunConformance, one behavioural contract every provider runs from its
//     own tests against its simulated cloud (providerID round trip, strict
//     not-found semantics, idempotent load balancers with zero writes on a
//     no-op, members-only changes on node churn, invalid annotations rejected
//     without cloud writes, idempotent deletes, routes, and the
//     node-deletion guard: a valid credential of another account of the
//     cloud, which the simulator serves (AccountSwitcher), deletes no
//     Node, while a real scale-down still does);
//   - the start-up contract: RunStartupFailures (bad settings refused with
//     an error naming them and no credential), RunSecretRotation (a
//     credential file re-read when its Secret rotates, on the conformance
//     Harness) or RunCloudConfigRotation (the same for a credential held
//     in the --cloud-config file), CheckSettings (the settings pinned), RunDeadlines (a hung
//     API bounded by --cloud-init-timeout and --instance-lookup-timeout)
//     and RunMakeSecretSuite (make-secret against the simulated cloud,
//     printing what the shipped manifests mount);
//   - LBFixture, a provider's load balancers driven as the service
//     controller drives them, for the provider's own load-balancer tests;
//     StartCloud, a provider started as framework.Main starts it;
//     SimHarness, a Harness made of a <cloud>sim's NewServer;
//   - FakeCloud and FakeProvider, an in-memory provider with fault injection
//     for testing code built on the framework, and for proving the suite
//     catches broken providers;
//   - SimCloud, which makes a simulated cloud built on simkit (a
//     <cloud>sim's Cloud()) the suite's Cloud.
//
// A real control plane and simulated kubelets to run a CCM against are in
// package kubetest, apart so that the simulated clouds, which import this
// package for its contract, do not pull in controller-runtime's envtest. What every simulated cloud
// shares is in package simkit.
package frameworktest
