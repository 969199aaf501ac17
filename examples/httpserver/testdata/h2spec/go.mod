// TestH2Spec (../../h2spec_test.go) builds h2spec, an HTTP/2 conformance
// tester, from this module: it pins h2spec's release and the dependencies
// that release leaves unpinned (it has no go.mod). It holds no code.

module github.com/ringloop/ringloop/examples/httpserver/testdata/h2spec

go 1.26.8

tool github.com/summerwind/h2spec/cmd/h2spec

require (
	github.com/fatih/color v1.18.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/spf13/cobra v1.8.1 // indirect
	github.com/spf13/pflag v1.0.5 // indirect
	github.com/summerwind/h2spec v2.2.1+incompatible // indirect
	golang.org/x/net v0.47.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	golang.org/x/text v0.31.0 // indirect
)
