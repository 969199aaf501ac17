// udp_mmsg: the C reference UDP echo server, the floor of a plain batched
// loop. One thread, one blocking socket: recvmmsg waits for a datagram and
// takes what else is queued (MSG_WAITFORONE, up to BATCH), then one sendmmsg
// sends each back to its source from the same buffers. No readiness calls,
// no copies: two system calls per batch.
//
// Its first line on stdout is machine-readable, like the Go servers':
//
//	listening 127.0.0.1:PORT peer=c-mmsg kind=udp-echo backend=recvmmsg threading=single-thread gomaxprocs=n/a detail="..."
//
// It exits when its stdin reaches EOF (a thread waits on it) or on
// SIGTERM/SIGINT. The socket asks for the same buffers as every UDP peer
// (peers.UDPBuffer).
//
//	gcc -O2 -pthread -o udp_mmsg udp_mmsg.c
//	./udp_mmsg [port]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 64           // datagrams per recvmmsg and sendmmsg
#define BUFSZ 65536        // the largest datagram, received whole
#define SOCKBUF (4 << 20)  // SO_RCVBUF and SO_SNDBUF asked (peers.UDPBuffer)

static struct mmsghdr msgs[BATCH];
static struct iovec iovs[BATCH];
static struct sockaddr_in6 names[BATCH]; // room for either family
static char bufs[BATCH][BUFSZ];

// watch_stdin ends the process when the runner closes our stdin.
static void *watch_stdin(void *arg) {
	char b[64];
	(void)arg;
	while (read(0, b, sizeof b) > 0) {
	}
	_exit(0);
	return NULL;
}

// arm readies entry i to receive.
static void arm(int i) {
	iovs[i].iov_base = bufs[i];
	iovs[i].iov_len = BUFSZ;
	msgs[i].msg_hdr.msg_iov = &iovs[i];
	msgs[i].msg_hdr.msg_iovlen = 1;
	msgs[i].msg_hdr.msg_name = &names[i];
	msgs[i].msg_hdr.msg_namelen = sizeof names[i];
	msgs[i].msg_hdr.msg_control = NULL;
	msgs[i].msg_hdr.msg_controllen = 0;
	msgs[i].msg_hdr.msg_flags = 0;
}

static int die(const char *what) {
	perror(what);
	return 1;
}

int main(int argc, char **argv) {
	int port = argc > 1 ? atoi(argv[1]) : 0;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	int sz = SOCKBUF;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz) < 0)
		return die("setsockopt");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
		return die("bind");
	socklen_t alen = sizeof a;
	if (getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
		return die("getsockname");
	int rcv = 0, snd = 0;
	socklen_t ol = sizeof rcv;
	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &ol);
	ol = sizeof snd;
	getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &ol);

	pthread_t t;
	if (pthread_create(&t, NULL, watch_stdin, NULL) != 0)
		return die("pthread_create");
	printf("listening 127.0.0.1:%d peer=c-mmsg kind=udp-echo backend=recvmmsg threading=single-thread gomaxprocs=n/a "
	       "detail=\"blocking recvmmsg (MSG_WAITFORONE) and sendmmsg, %d a call; SO_RCVBUF %d, SO_SNDBUF %d\"\n",
	       ntohs(a.sin_port), BATCH, rcv, snd);
	fflush(stdout);

	for (int i = 0; i < BATCH; i++)
		arm(i);
	for (;;) {
		int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return die("recvmmsg");
		}
		// Send each back whole from its own buffer (BUFSZ holds the
		// largest UDP payload, so none arrives cut).
		for (int i = 0; i < n; i++)
			iovs[i].iov_len = msgs[i].msg_len;
		for (int off = 0; off < n;) {
			int m = sendmmsg(fd, msgs + off, n - off, 0);
			if (m < 0) {
				if (errno == EINTR)
					continue;
				off++; // that datagram is refused (counted lost by the client); send on
				continue;
			}
			off += m;
		}
		for (int i = 0; i < n; i++)
			arm(i);
	}
}
