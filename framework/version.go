package framework

// version is set at build time:
//
//	go build -ldflags "-X github.com/ccmkit/ccmkit/framework.version=v0.1.0"
var version = "dev"

// Version returns the ccmkit version the binary was built with.
func Version() string { return version }
