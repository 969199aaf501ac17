package engine

import "github.com/ringloop/ringloop/tasks"

// loopShutdown is ErrShutdown: it names the loop, which is what a connection's
// OnClose or a netconn Read reports, and stays tasks.ErrShutdown to code
// written against the executor contract.
type loopShutdown struct{}

func (loopShutdown) Error() string { return "engine: loop shut down" }

func (loopShutdown) Is(target error) bool { return target == tasks.ErrShutdown }
