module github.com/ringloop/ringloop/examples/dns

go 1.26.8

require (
	github.com/miekg/dns v1.1.73
	github.com/ringloop/ringloop v0.0.0
)

require (
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace github.com/ringloop/ringloop => ../../
