// echo_uring: the C reference echo server, the floor user-space code reaches
// on io_uring. One thread, one ring, one io_uring_submit_and_wait per
// iteration: a multishot accept, a multishot recv per connection drawing from
// one registered buffer ring, and one sendmsg in flight per connection that
// gathers every buffer received and not yet sent (the queue keeps the bytes
// in order). A buffer goes back to the ring when its bytes are sent.
//
// Its first line on stdout is machine-readable, like the Go servers':
//
//	listening 127.0.0.1:PORT peer=c-liburing kind=echo backend=io_uring threading=single-thread gomaxprocs=n/a setup=defer_taskrun
//
// It exits when its stdin (a pipe or a socket) reaches EOF or on
// SIGTERM/SIGINT. liburing 2.3 (Debian 12) has no io_uring_setup_buf_ring, so
// the buffer ring is mmap'ed and registered by hand.
//
//	gcc -O2 -o echo_uring echo_uring.c -luring
//	./echo_uring [port]            # ECHO_URING_SETUP=coop: skip DEFER_TASKRUN
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OP_ACCEPT = 1, OP_RECV, OP_SEND, OP_CLOSE, OP_STDIN };

#ifndef NBUF
#define NBUF 4096         // buffers in the ring (a power of two; -DNBUF=8 tests starvation)
#endif
#define BUFSZ 16384       // bytes per buffer
#define IOVMAX 16         // buffers gathered into one sendmsg
#define MAXFD 65536       // connections are indexed by fd
#define BGID 0

// Each connection: the buffers received and not yet sent, as an intrusive
// list threaded through next[bid]; the head is being sent from off.
struct conn {
	int head, tail;   // buffer ids, -1 when empty
	int off;          // bytes of head already sent
	int sending;      // a send is in flight
	int recving;      // the multishot recv is armed
	int closing;      // EOF or error seen: close once idle
	int nobufs;       // recv stopped for lack of buffers: re-arm on return
	struct msghdr msg; // the sendmsg in flight and its buffers
	struct iovec iov[IOVMAX];
};

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufbase;
static int buflen[NBUF];
static int nextbuf[NBUF];
static struct conn conns[MAXFD];
static int starved[MAXFD], nstarved;
static int lfd;
static char stdinbuf[64];

static inline __u64 tag(int op, int fd) { return ((__u64)op << 32) | (__u32)fd; }

// sqe returns a free submission entry, submitting the queue first when it is
// full (rare: only under bursts larger than the ring).
static struct io_uring_sqe *sqe(void) {
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);
	while (!s) {
		io_uring_submit(&ring);
		s = io_uring_get_sqe(&ring);
	}
	return s;
}

static void give_back(int bid) {
	io_uring_buf_ring_add(br, bufbase + (size_t)bid * BUFSZ, BUFSZ, bid,
			      io_uring_buf_ring_mask(NBUF), 0);
	io_uring_buf_ring_advance(br, 1);
}

static void arm_accept(void) {
	struct io_uring_sqe *s = sqe();
	io_uring_prep_multishot_accept(s, lfd, NULL, NULL, 0);
	io_uring_sqe_set_data64(s, tag(OP_ACCEPT, lfd));
}

static void arm_recv(int fd) {
	struct io_uring_sqe *s = sqe();
	io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
	s->flags |= IOSQE_BUFFER_SELECT;
	s->buf_group = BGID;
	io_uring_sqe_set_data64(s, tag(OP_RECV, fd));
	conns[fd].recving = 1;
}

// send_head sends the queued buffers, up to IOVMAX of them, in one sendmsg.
static void send_head(int fd) {
	struct conn *c = &conns[fd];
	int n = 0, off = c->off;
	for (int bid = c->head; bid >= 0 && n < IOVMAX; bid = nextbuf[bid]) {
		c->iov[n].iov_base = bufbase + (size_t)bid * BUFSZ + off;
		c->iov[n].iov_len = buflen[bid] - off;
		off = 0;
		n++;
	}
	memset(&c->msg, 0, sizeof c->msg);
	c->msg.msg_iov = c->iov;
	c->msg.msg_iovlen = n;
	struct io_uring_sqe *s = sqe();
	io_uring_prep_sendmsg(s, fd, &c->msg, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(s, tag(OP_SEND, fd));
	c->sending = 1;
}

static void maybe_close(int fd) {
	struct conn *c = &conns[fd];
	if (!c->closing || c->recving || c->sending)
		return;
	while (c->head >= 0) { // unsent bytes of a dead connection
		int bid = c->head;
		c->head = nextbuf[bid];
		give_back(bid);
	}
	c->tail = -1;
	c->off = 0;
	c->closing = 0;
	struct io_uring_sqe *s = sqe();
	io_uring_prep_close(s, fd);
	io_uring_sqe_set_data64(s, tag(OP_CLOSE, fd));
}

static void rearm_starved(void) {
	int n = nstarved;
	nstarved = 0;
	for (int i = 0; i < n; i++) {
		int fd = starved[i];
		conns[fd].nobufs = 0;
		if (!conns[fd].closing)
			arm_recv(fd);
		else
			maybe_close(fd);
	}
}

static void on_recv(int fd, int res, unsigned flags) {
	struct conn *c = &conns[fd];
	if (!(flags & IORING_CQE_F_MORE))
		c->recving = 0;
	if (res > 0) {
		int bid = flags >> IORING_CQE_BUFFER_SHIFT;
		buflen[bid] = res;
		nextbuf[bid] = -1;
		if (c->tail >= 0)
			nextbuf[c->tail] = bid;
		else
			c->head = bid;
		c->tail = bid;
		if (!c->sending)
			send_head(fd);
		if (!c->recving && !c->closing)
			arm_recv(fd); // the kernel ended the multishot (e.g. CQ overflow)
		return;
	}
	if (res == -ENOBUFS && !c->closing) {
		if (!c->nobufs) { // wait for a buffer to come back
			c->nobufs = 1;
			starved[nstarved++] = fd;
		}
		return;
	}
	if (!c->recving) { // EOF or error: the recv is over
		c->closing = 1;
		maybe_close(fd);
	}
}

static void on_send(int fd, int res) {
	struct conn *c = &conns[fd];
	c->sending = 0;
	if (res < 0) {
		c->closing = 1;
		if (c->recving) { // stop reading a peer we cannot write to
			struct io_uring_sqe *s = sqe();
			io_uring_prep_cancel64(s, tag(OP_RECV, fd), 0);
			io_uring_sqe_set_data64(s, 0);
		}
		maybe_close(fd);
		return;
	}
	// Return every buffer the send finished; resume inside a partial one.
	int left = res + c->off;
	while (c->head >= 0 && left >= buflen[c->head]) {
		int bid = c->head;
		left -= buflen[bid];
		c->head = nextbuf[bid];
		give_back(bid);
	}
	if (c->head < 0)
		c->tail = -1;
	c->off = left;
	if (nstarved)
		rearm_starved();
	if (c->head >= 0)
		send_head(fd);
	else
		maybe_close(fd);
}

static void arm_stdin(void) {
	struct io_uring_sqe *s = sqe();
	io_uring_prep_read(s, 0, stdinbuf, sizeof stdinbuf, -1);
	io_uring_sqe_set_data64(s, tag(OP_STDIN, 0));
}

int main(int argc, char **argv) {
	int port = argc > 1 ? atoi(argv[1]) : 0;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) { // idle-connection runs hold 10^4 sockets
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	struct io_uring_params p;
	const char *setup = "defer_taskrun";
	memset(&p, 0, sizeof p);
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	p.cq_entries = 65536;
	const char *want = getenv("ECHO_URING_SETUP"); // "coop" forces the older mode
	int ret = want && strcmp(want, "coop") == 0 ? -EINVAL : io_uring_queue_init_params(4096, &ring, &p);
	if (ret < 0) { // older kernels: no DEFER_TASKRUN
		setup = "coop_taskrun";
		memset(&p, 0, sizeof p);
		p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN;
		p.cq_entries = 65536;
		ret = io_uring_queue_init_params(4096, &ring, &p);
	}
	if (ret < 0) {
		fprintf(stderr, "echo_uring: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}

	size_t ringsz = NBUF * sizeof(struct io_uring_buf);
	br = mmap(NULL, ringsz, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	bufbase = mmap(NULL, (size_t)NBUF * BUFSZ, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (br == MAP_FAILED || bufbase == MAP_FAILED) {
		perror("echo_uring: mmap");
		return 1;
	}
	struct io_uring_buf_reg reg = { .ring_addr = (unsigned long)br, .ring_entries = NBUF, .bgid = BGID };
	ret = io_uring_register_buf_ring(&ring, &reg, 0);
	if (ret < 0) {
		fprintf(stderr, "echo_uring: io_uring_register_buf_ring: %s\n", strerror(-ret));
		return 1;
	}
	io_uring_buf_ring_init(br);
	for (int i = 0; i < NBUF; i++)
		io_uring_buf_ring_add(br, bufbase + (size_t)i * BUFSZ, BUFSZ, i, io_uring_buf_ring_mask(NBUF), i);
	io_uring_buf_ring_advance(br, NBUF);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 4096) < 0) {
		perror("echo_uring: listen");
		return 1;
	}
	socklen_t sl = sizeof sa;
	getsockname(lfd, (struct sockaddr *)&sa, &sl);
	printf("listening 127.0.0.1:%d peer=c-liburing kind=echo backend=io_uring threading=single-thread gomaxprocs=n/a setup=%s\n",
	       ntohs(sa.sin_port), setup);
	fflush(stdout);

	arm_accept();
	struct stat st; // only a pipe or a socket reports a close worth stopping for
	if (fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		arm_stdin();
	for (;;) {
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			fprintf(stderr, "echo_uring: submit_and_wait: %s\n", strerror(-ret));
			return 1;
		}
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			n++;
			int op = (int)(cqe->user_data >> 32), fd = (int)(__u32)cqe->user_data;
			switch (op) {
			case OP_ACCEPT:
				if (cqe->res >= 0 && cqe->res < MAXFD) {
					// Touched only here: idle slots of the table stay unresident.
					memset(&conns[cqe->res], 0, sizeof conns[0]);
					conns[cqe->res].head = conns[cqe->res].tail = -1;
					setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					arm_recv(cqe->res);
				} else if (cqe->res >= 0) {
					close(cqe->res);
				}
				if (!(cqe->flags & IORING_CQE_F_MORE))
					arm_accept();
				break;
			case OP_RECV:
				on_recv(fd, cqe->res, cqe->flags);
				break;
			case OP_SEND:
				on_send(fd, cqe->res);
				break;
			case OP_STDIN:
				if (cqe->res <= 0)
					return 0; // the parent closed our stdin
				arm_stdin();
				break;
			}
		}
		io_uring_cq_advance(&ring, n);
	}
}
