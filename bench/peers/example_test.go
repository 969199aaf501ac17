package peers_test

import (
	"fmt"
	"slices"

	"github.com/ringloop/ringloop/bench/peers"
)

func ExampleParseBanner() {
	addr, kv, _ := peers.ParseBanner(`listening 127.0.0.1:40123 peer=ringloop-uring kind=echo backend=io_uring threading=locked gomaxprocs=1 detail=""`)
	fmt.Println(addr, kv["peer"], kv["backend"], kv["threading"])
	// Output: 127.0.0.1:40123 ringloop-uring io_uring locked
}

// The tables list every registered peer of a kind, in Order; adding a peer
// changes the list, so this example only looks for two that are always there.
func ExampleNames() {
	names := peers.Names(peers.HTTP)
	fmt.Println(slices.Contains(names, "net/http"), slices.Contains(names, "fasthttp"))
	// Output: true true
}
