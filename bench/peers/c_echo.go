package peers

func init() {
	Register(Peer{
		Name:       "c-liburing",
		Kind:       Echo,
		NeedsURing: true,
		Doc:        "C on liburing: multishot accept and recv, a registered buffer ring, one submit-and-wait per iteration",
		Program: &Program{
			Source: "cserver/echo_uring.c",
			Build:  []string{"gcc", "-O2", "-Wall", "-o", "$OUT", "$SRC", "-luring"},
		},
	})
}
