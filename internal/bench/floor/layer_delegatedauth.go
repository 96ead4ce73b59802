//go:build floor_delegatedauth

// The controllers and what the secure port of k8s.io/cloud-provider/app
// authenticates and authorizes requests with: k8s.io/apiserver's delegated
// authentication (TokenReview, client certificates, request headers) and
// authorization (SubjectAccessReview), without the rest of the command.

package main

import (
	_ "k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	_ "k8s.io/apiserver/pkg/authorization/authorizerfactory"
	_ "k8s.io/cloud-provider/controllers/node"
	_ "k8s.io/cloud-provider/controllers/nodelifecycle"
	_ "k8s.io/cloud-provider/controllers/route"
	_ "k8s.io/cloud-provider/controllers/service"
)
