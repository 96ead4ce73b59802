package openstacksim

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Request IDs. Every OpenStack API answer carries the ID of the request
// it answers, "req-" and a random UUID (oslo_context's
// generate_request_id), in x-openstack-request-id: oslo.middleware's
// RequestId filter (oslo_middleware/request_id.py,
// HTTP_RESP_HEADER_REQUEST_ID) sits in front of Keystone
// (keystone/server/flask/core.py), Neutron's /v2.0 pipeline
// (etc/neutron/api-paste.ini), Octavia (octavia/api/app.py) and Nova,
// whose ComputeReqIdMiddleware also sends it as x-compute-request-id
// (nova/api/compute_req_id.py, nova's api-paste.ini); Glance's context
// middleware sets the same header on its answers. The version roots of
// Nova (pipeline oscomputeversions) and Neutron
// (neutronversions_composite) run without the filter and carry none.
// Header names are case-insensitive (RFC 9110 §5.1); Go writes them in
// canonical form, X-Openstack-Request-Id.
const (
	headerRequestID        = "X-Openstack-Request-Id"
	headerComputeRequestID = "X-Compute-Request-Id"
)

// withRequestID is the Kit's Respond: it adds the request ID headers of
// the service op belongs to.
func withRequestID(_ *http.Request, op string, resp response) response {
	if op == "GET "+computePrefix || op == "GET "+computePrefix+"/{$}" ||
		op == "GET "+networkPrefix || op == "GET "+networkPrefix+"/{$}" {
		return resp
	}
	return addRequestID(op, resp)
}

// addRequestID sets a new request ID on resp, also as Nova's
// X-Compute-Request-Id for a Nova operation or path.
func addRequestID(opOrPath string, resp response) response {
	resp.Header = resp.Header.Clone()
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	id := newRequestID()
	resp.Header.Set(headerRequestID, id)
	if service(opOrPath) == computePrefix {
		resp.Header.Set(headerComputeRequestID, id)
	}
	return resp
}

// notFoundAnswer is the answer to a path no endpoint serves: the 404 of
// the service the path is under, with its request ID.
func notFoundAnswer(r *http.Request) response {
	p := strings.TrimSuffix(r.URL.Path, "/")
	resp := simkit.JSON(http.StatusNotFound,
		errorBody(r, simkit.ErrorInfo{Op: r.Method + " " + r.URL.Path, Status: http.StatusNotFound, Message: "The resource could not be found."}))
	if p == computePrefix || p == networkPrefix {
		return resp
	}
	return addRequestID(r.URL.Path, resp)
}

// newRequestID is "req-" and a random (version 4) UUID.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("req-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
