module github.com/ringloop/ringloop

go 1.26.8

require (
	github.com/stretchr/testify v1.11.1 // indirect
	golang.org/x/sys v0.38.0 // indirect
)
