package client_test

import (
	"fmt"

	"github.com/ringloop/ringloop/bench/client"
)

func ExampleParseWrk() {
	r, err := client.ParseWrk(`  Latency Distribution
     50%  512.00us
     99%    1.20ms
  196240 requests in 2.00s, 24.00MB read
Requests/sec:  98120.00
`)
	fmt.Println(r.Requests, r.Rate, r.P50, r.P99, err)
	// Output: 196240 98120 512 1200 <nil>
}
