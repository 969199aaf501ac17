package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestKernelCmdlineTestArgs: -testargs reach the command line as one word
// without a dot (the kernel would keep a dotted word from /init), and decode
// back to the flags given.
func TestKernelCmdlineTestArgs(t *testing.T) {
	b := bootSpec{expect: "io_uring", only: []string{"websocket"}, testArgs: "-test.run=TestHub -test.count=4 -test.short=false"}
	line := kernelCmdline(b)
	var enc string
	for _, w := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(w, "ringloop_testargs="); ok {
			enc = v
		}
	}
	if enc == "" || strings.Contains(enc, ".") {
		t.Fatalf("command line %q: want one dot-free ringloop_testargs word", line)
	}
	got, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || string(got) != b.testArgs {
		t.Fatalf("decoded %q, %v; want %q", got, err, b.testArgs)
	}
	if !strings.Contains(line, "ringloop_pkgs=websocket") || !strings.Contains(line, "ringloop_expect=io_uring") {
		t.Fatalf("command line %q lost the other words", line)
	}
	if strings.Contains(kernelCmdline(bootSpec{expect: "epoll"}), "ringloop_testargs") {
		t.Fatal("no -testargs, yet a ringloop_testargs word")
	}
}
