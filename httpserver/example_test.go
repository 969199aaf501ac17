package httpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
)

// A fast-API server on one loop: the handler runs on the loop with a request
// view and a buffered response, allocating nothing per request.
func ExampleNewFast() {
	loop, err := engine.New()
	if err != nil {
		panic(err)
	}
	defer loop.Close()

	srv, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		w.AddHeader("Content-Type", "text/plain")
		_, _ = w.WriteString("hello " + string(r.Path()))
	}))
	if err != nil {
		panic(err)
	}
	addr, err := srv.Listen(loop, "tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())

	res, err := http.Get("http://" + addr.String() + "/world")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, string(body))
	// Output: 200 hello /world
}

// Any http.Handler, here a ServeMux, served by the adapter: each request runs
// on its own goroutine and its response is written back on the loop.
func Example() {
	loop, err := engine.New()
	if err != nil {
		panic(err)
	}
	defer loop.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /greet/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hi %s", r.PathValue("name"))
	})
	srv, err := httpserver.New(mux)
	if err != nil {
		panic(err)
	}
	addr, err := srv.Listen(loop, "tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	res, err := http.Get("http://" + addr.String() + "/greet/gopher")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, string(body))
	// Output: 200 hi gopher
}
