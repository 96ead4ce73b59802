// Package cloud is what the Brightbox CCM (package brightbox) and CSI
// driver (package csidriver) both need of the Brightbox API: the
// gobrightbox client over the caller's *http.Client, its OAuth2 token
// and account (Connect, Credentials), and the rules every call follows:
// only the API's own 404 to a call that named one resource is a
// not-found (One, IsNotFound), an error answer's status is gobrightbox's
// APIError's (APIStatus), and a server deleted or failed is gone
// (ServerGone).
//
// It is its own package so that neither binary links the other's job: it
// imports no part of the CCM framework but framework/cloudapi and
// framework/config, so the CSI driver does not link k8s.io/cloud-provider,
// and no CSI code, so the CCM does not link the CSI driver's.
package cloud
