package websocket_test

import (
	"os"
	"testing"

	"github.com/ringloop/ringloop/internal/testenv"
)

// TestMain raises -test.parallel's default: this package's parallel tests
// mostly wait (see testenv.RunWaiting).
func TestMain(m *testing.M) { os.Exit(testenv.RunWaiting(m)) }
