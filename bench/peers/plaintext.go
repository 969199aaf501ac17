package peers

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// PlaintextBody is TechEmpower's plaintext answer.
const PlaintextBody = "Hello, World!"

// dateHeader holds "Date: <IMF-fixdate>\r\n", refreshed every second, as
// every real server caches it rather than formatting the time per request.
var (
	dateHeader atomic.Pointer[[]byte]
	dateOnce   sync.Once
)

func currentDate() []byte {
	dateOnce.Do(func() {
		set := func() {
			b := []byte("Date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n")
			dateHeader.Store(&b)
		}
		set()
		go func() {
			for range time.Tick(time.Second) {
				set()
			}
		}()
	})
	return *dateHeader.Load()
}

// appendPlaintext appends a complete plaintext response from server name.
func appendPlaintext(dst []byte, name string, closing bool) []byte {
	dst = append(dst, "HTTP/1.1 200 OK\r\nServer: "...)
	dst = append(dst, name...)
	dst = append(dst, "\r\nContent-Type: text/plain\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(PlaintextBody)), 10)
	dst = append(dst, "\r\n"...)
	if closing {
		dst = append(dst, "Connection: close\r\n"...)
	}
	dst = append(dst, currentDate()...)
	dst = append(dst, "\r\n"...)
	return append(dst, PlaintextBody...)
}

// appendError appends a response that ends the connection.
func appendError(dst []byte, status int, name string) []byte {
	text := http.StatusText(status)
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, ' ')
	dst = append(dst, text...)
	dst = append(dst, "\r\nServer: "...)
	dst = append(dst, name...)
	dst = append(dst, "\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(text)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, currentDate()...)
	dst = append(dst, "\r\n"...)
	return append(dst, text...)
}
