//go:build !linux || 386 || arm || mips || mipsle

package driver

// ringloop runs on 64-bit Linux only: elsewhere this import stops the build
// on one line that says so (see package supported).
import _ "github.com/ringloop/ringloop/internal/supported"
