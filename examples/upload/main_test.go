package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// repeat is n bytes of a fixed text, made as they are read.
type repeat struct{ n, off int }

func (r *repeat) Read(b []byte) (int, error) {
	const text = "ringloop streams uploads. "
	if r.off >= r.n {
		return 0, io.EOF
	}
	b = b[:min(len(b), r.n-r.off)]
	for i := range b {
		b[i] = text[(r.off+i)%len(text)]
	}
	r.off += len(b)
	return len(b), nil
}

// TestUpload runs the command and uploads 64 MiB (4 MiB with -short) to it with Go's
// http.Client, with a length and chunked: the answer is the body's length
// and SHA-256. Other requests get their body whole. SIGINT stops it with
// exit 0.
func TestUpload(t *testing.T) {
	size := int64(64 << 20)
	if testing.Short() {
		size = 4 << 20
	}
	h := sha256.New()
	_, _ = io.Copy(h, &repeat{n: int(size)})
	want := hex.EncodeToString(h.Sum(nil))
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
		client := &http.Client{Transport: &http.Transport{}}
		defer client.CloseIdleConnections()
		for _, length := range []int64{size, -1} {
			req, err := http.NewRequest("POST", "http://"+p.Addr+"/upload", &repeat{n: int(size)})
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = length
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Bytes  int64
				SHA256 string
			}
			err = json.NewDecoder(res.Body).Decode(&got)
			res.Body.Close()
			if err != nil || res.StatusCode != 200 || got.Bytes != size || got.SHA256 != want {
				t.Fatalf("length %d: %d %+v %v", length, res.StatusCode, got, err)
			}
		}
		res, err := client.Post("http://"+p.Addr+"/other", "text/plain", strings.NewReader("12345"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), "had 5 bytes") {
			t.Fatalf("a whole body: %q", b)
		}
		p.Interrupt(t)
	})
}
