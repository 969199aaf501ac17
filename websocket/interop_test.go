package websocket_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// Cross-tests with WebSocket implementations written elsewhere: the npm
// package ws (under node) and Python's websockets, each as a client of
// this package's server and as a server Dial talks to. make deps installs
// node and python3-websockets; ws, pinned here, is installed by the tests
// themselves into the user's cache directory the first time (npm install).

// wsVersion is the npm package ws the tests install.
const wsVersion = "8.18.3"

var (
	nodeOnce sync.Mutex
	nodeDir  string // NODE_PATH holding ws, once installed
)

// nodeWS returns node's path and a NODE_PATH under which require('ws')
// finds ws@wsVersion, installing it with npm into
// os.UserCacheDir()/ringloop/npm/ws@VERSION when it is not there.
func nodeWS(t *testing.T) (node, nodePath string) {
	t.Helper()
	node = testenv.NeedTool(t, "node")
	nodeOnce.Lock()
	defer nodeOnce.Unlock()
	if nodeDir != "" {
		return node, nodeDir
	}
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	dir := filepath.Join(cache, "ringloop", "npm", "ws@"+wsVersion)
	modules := filepath.Join(dir, "node_modules")
	if installedVersion(filepath.Join(modules, "ws", "package.json")) != wsVersion {
		npm := testenv.NeedTool(t, "npm")
		require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
		require.NoError(t, err)
		defer os.RemoveAll(tmp)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund",
			"--no-package-lock", "ws@"+wsVersion).CombinedOutput()
		require.NoError(t, err, "npm install ws@%s: %s", wsVersion, out)
		require.Equal(t, wsVersion, installedVersion(filepath.Join(tmp, "node_modules", "ws", "package.json")))
		_ = os.RemoveAll(dir) // a broken or other install
		require.NoError(t, os.Rename(tmp, dir))
	}
	nodeDir = modules
	return node, nodeDir
}

// installedVersion reads an npm package.json's version, "" if none.
func installedVersion(packageJSON string) string {
	b, err := os.ReadFile(packageJSON)
	if err != nil {
		return ""
	}
	var p struct{ Version string }
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}

// pythonWebsockets returns the system python3 (not a version manager's,
// which would not have the Debian package) once it imports websockets.
func pythonWebsockets(t *testing.T) string {
	t.Helper()
	py := testenv.NeedTool(t, "/usr/bin/python3")
	if out, err := exec.Command(py, "-c", "import websockets").CombinedOutput(); err != nil {
		testenv.ToolMissing(t, "python3-websockets", fmt.Errorf("%v: %s", err, bytes.TrimSpace(out)))
	}
	return py
}

// runScript runs a client script and requires it to print "ok".
func runScript(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, err, "%s %s: %s%s", name, strings.Join(args, " "), out.String(), errb.String())
	require.Equal(t, "ok\n", out.String(), "stderr: %s", errb.String())
}

// TestNodeClient: ws's client (under node) exchanges text and binary
// messages up to 1 MiB with this package's server, with and without
// permessage-deflate, gets its ping's pong, and its close (4000) reaches
// OnClose.
func TestNodeClient(t *testing.T) {
	node, nodePath := nodeWS(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, []websocket.Option{websocket.WithCompression(true)})
		runScript(t, []string{"NODE_PATH=" + nodePath}, node, "testdata/ws_client.js", "ws://"+addr+"/plain", "ws://"+addr+"/deflate")
		require.Equal(t, closed{4000, "node bye", nil}, e.next(t))
		require.Equal(t, closed{4000, "node bye", nil}, e.next(t))
	})
}

// TestPythonClient: Python's websockets client does the same.
func TestPythonClient(t *testing.T) {
	py := pythonWebsockets(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, []websocket.Option{websocket.WithCompression(true)})
		runScript(t, nil, py, "testdata/websockets_client.py", "ws://"+addr+"/plain", "ws://"+addr+"/deflate")
		require.Equal(t, closed{4000, "py bye", nil}, e.next(t))
		require.Equal(t, closed{4000, "py bye", nil}, e.next(t))
	})
}

var listeningLine = regexp.MustCompile(`^listening on (\S+)$`)

// startServerScript starts a server script, waits for its "listening on
// ADDR" line and returns ADDR; at cleanup its stdin is closed, which ends
// it, and it is waited for.
func startServerScript(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case err := <-exited:
			require.NoError(t, err, "%s: %s", name, errb.String())
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("%s did not exit when its stdin closed", name)
			<-exited
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	select {
	case l := <-lines:
		m := listeningLine.FindStringSubmatch(l)
		require.NotNil(t, m, "%s printed %q", name, l)
		return m[1]
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not say where it listens: %s", name, errb.String())
	}
	return ""
}

// dialInterop runs Dial against a server script, with and without
// compression: messages from 0 B to 1 MiB come back, "ping-me" makes the
// server ping and report the pong the client answered, the client's close
// (4000) is answered with 4000, and the server's close (4001) reaches
// OnClose with its reason.
func dialInterop(t *testing.T, c testenv.Combo, addr, pongText, byeReason string) {
	testenv.CheckLeaks(t)
	loop := newLoop(t, c)
	for _, comp := range []bool{false, true} {
		cl := newClient()
		ws := dial(t, loop, "ws://"+addr+"/", cl, websocket.WithCompression(comp))
		require.Equal(t, comp, websocket.Deflate(ws))
		for i, n := range echoSizes {
			kind := websocket.Binary
			if i%2 == 0 {
				kind = websocket.Text
			}
			msg := pattern(n, i)
			require.NoError(t, ws.WriteMessage(kind, msg))
			got := cl.next(t)
			require.Equal(t, kind, got.kind)
			require.True(t, bytes.Equal(msg, got.p), "compression %v, %d bytes: echo differs", comp, n)
		}
		require.NoError(t, ws.WriteMessage(websocket.Text, []byte("ping-me")))
		require.Equal(t, message{websocket.Text, []byte(pongText)}, cl.next(t))
		require.NoError(t, ws.Close(4000, "bye"))
		require.Equal(t, 4000, cl.closed(t).code)

		cl = newClient()
		ws = dial(t, loop, "ws://"+addr+"/", cl, websocket.WithCompression(comp))
		require.NoError(t, ws.WriteMessage(websocket.Text, []byte("close-me")))
		require.Equal(t, closed{4001, byeReason, nil}, cl.closed(t))
	}
}

// TestNodeServer: Dial against ws's server (one node process for every
// combo).
func TestNodeServer(t *testing.T) {
	node, nodePath := nodeWS(t)
	addr := startServerScript(t, []string{"NODE_PATH=" + nodePath}, node, "testdata/ws_server.js")
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		dialInterop(t, c, addr, "pong:node ping", "node bye")
	})
}

// TestPythonServer: Dial against Python's websockets server.
func TestPythonServer(t *testing.T) {
	py := pythonWebsockets(t)
	addr := startServerScript(t, nil, py, "testdata/websockets_server.py")
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		dialInterop(t, c, addr, "pong:py ping", "py bye")
	})
}
