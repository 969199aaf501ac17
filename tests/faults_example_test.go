package tests

import (
	"fmt"
	"os"

	"github.com/ringloop/ringloop/engine"
)

// An operator forces a backend with RINGLOOP_BACKEND (here epoll); every loop
// built with the default backend then runs it and says why.
func Example_backendEnv() {
	old, had := os.LookupEnv("RINGLOOP_BACKEND")
	_ = os.Setenv("RINGLOOP_BACKEND", "epoll")
	defer func() {
		if had {
			_ = os.Setenv("RINGLOOP_BACKEND", old)
		} else {
			_ = os.Unsetenv("RINGLOOP_BACKEND")
		}
	}()

	l, err := engine.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	info := l.Backend()
	fmt.Println(info.Name.String()+":", info.Reason)
	// Output: epoll: forced by RINGLOOP_BACKEND=epoll
}
