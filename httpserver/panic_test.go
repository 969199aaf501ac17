package httpserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log sink written from the handler's goroutine and read by
// the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPanicLogReadable: an adapter handler's panic is logged as one record
// whose "at" names the handler's own line and whose "stack" is a list of
// frames (a JSON array), not one string of escaped newlines.
func TestPanicLogReadable(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		var logs syncBuffer
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			panic(errors.New("boom"))
		}), httpserver.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		conn := dial(t, base)
		_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		require.NoError(t, err)
		readEOF(t, conn)
		var rec struct {
			Msg   string   `json:"msg"`
			Panic string   `json:"panic"`
			At    string   `json:"at"`
			Stack []string `json:"stack"`
		}
		testenv.Eventually(t, 30*time.Second, "the panic's log record", func() bool {
			return strings.Contains(logs.String(), "handler panicked")
		})
		line := strings.TrimSpace(logs.String())
		require.Equal(t, 1, strings.Count(line, "\n")+1, "one record: %s", line)
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		require.Equal(t, "boom", rec.Panic)
		require.Contains(t, rec.At, "panic_test.go", "at names the handler's line: %q", rec.At)
		require.NotEmpty(t, rec.Stack)
		require.Equal(t, rec.At, rec.Stack[0])
	})
}
