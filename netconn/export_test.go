package netconn

// Buffered returns the bytes received and not yet read (tests only).
func (nc *Conn) Buffered() int {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return len(nc.rbuf) - nc.roff
}

// Paused reports whether the listener wants accepting paused (tests only).
func (l *Listener) Paused() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paused
}

// Queued returns the connections waiting for Accept (tests only).
func (l *Listener) Queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue) - l.head
}
