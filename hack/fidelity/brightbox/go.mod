// The Brightbox fidelity client (hack/fidelity/brightbox.sh): gobrightbox,
// Brightbox's own Go client, pinned. A module of its own so that the
// pinned client never moves with the library's go.mod.
module github.com/ccmkit/ccmkit/hack/fidelity/brightbox

go 1.26.0

require github.com/brightbox/gobrightbox/v2 v2.2.2

require (
	github.com/golang/protobuf v1.5.4 // indirect
	golang.org/x/oauth2 v0.18.0 // indirect
	google.golang.org/appengine v1.6.8 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
