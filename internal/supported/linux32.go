//go:build linux && (386 || arm || mips || mipsle)

package supported

// This declaration is the build error on purpose (see the package doc).
var _ int = "ringloop needs a 64-bit GOARCH (amd64, arm64, riscv64, ...): 32-bit is not supported"
