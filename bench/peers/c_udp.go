package peers

func init() {
	Register(Peer{
		Name: "c-mmsg",
		Kind: UDPEcho,
		Doc:  "C: one thread, a blocking recvmmsg (MSG_WAITFORONE) and one sendmmsg of the batch back: the floor for a readiness-free UDP loop",
		Program: &Program{
			Source: "cserver/udp_mmsg.c",
			Build:  []string{"gcc", "-O2", "-Wall", "-pthread", "-o", "$OUT", "$SRC"},
		},
	})
}
