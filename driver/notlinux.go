//go:build !linux

package driver

// ringloop runs on Linux only: off Linux this import stops the build on one
// line that says so (see package linuxonly).
import _ "github.com/ringloop/ringloop/internal/linuxonly"
