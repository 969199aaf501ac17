package netconn_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// net/http served on a ringloop loop, and a client dialing through it.
func Example() {
	loop, err := engine.New()
	if err != nil {
		panic(err)
	}
	defer loop.Close()

	ln, err := netconn.Listen(loop, "tcp", "127.0.0.1:0") // or a *loopgroup.Group
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from a loop")
	})}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	tr := &http.Transport{DialContext: (&netconn.Dialer{Loops: loop}).DialContext}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String())
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))
	// Output: hello from a loop
}
