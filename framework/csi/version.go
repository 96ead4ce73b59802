package csi

// version is set at build time, beside framework's:
//
//	go build -ldflags "-X github.com/ccmkit/ccmkit/framework/csi.version=v0.1.0"
var version = "dev"

// Version returns the version GetPluginInfo and --version report.
func Version() string { return version }
