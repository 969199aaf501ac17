package engine

import "testing"

// TestUserFrame: a stall report's detail is the first frame of the user's
// code, past the standard library's and the runtime's (a handler blocked
// in time.Sleep is named, not time.Sleep).
func TestUserFrame(t *testing.T) {
	for f, want := range map[string]bool{
		"time.Sleep (/usr/local/go/src/runtime/time.go:363)":                   false,
		"runtime.gopark (/usr/local/go/src/runtime/proc.go:435)":               false,
		"net/http.(*conn).serve (/usr/local/go/src/net/http/server.go:2102)":   false,
		"main.lookupUser (/src/main.go:11)":                                    true,
		"example.com/svc/db.(*Pool).Get (/src/db/pool.go:40)":                  true,
		"github.com/ringloop/ringloop/engine.(*Conn).onData (/x/conn.go:10)":   true,
		"database/sql.(*DB).conn (/usr/local/go/src/database/sql/sql.go:1300)": false,
	} {
		if got := userFrame(f); got != want {
			t.Errorf("userFrame(%q) = %v, want %v", f, got, want)
		}
	}
}
