// Shim between the Go side of ringloop and liburing. The Go side writes
// whole SQEs (struct io_uring_sqe, the kernel's layout) into C memory
// without any cgo call; rl_run copies them into the ring, submits, waits
// (with a timeout) and copies the CQEs into an out array, all in one cgo
// call. The C side has no code per op: what an op's SQE holds is decided in
// Go (package uring, one file per op family). ring.c sets the ring up,
// bufring.c keeps the registered buffer ring, run.c is the iteration.
#ifndef RINGLOOP_SHIM_H
#define RINGLOOP_SHIM_H

// Without liburing's header a cgo build stops here, on one line that names
// the fix, rather than on the compiler's "No such file or directory".
// (A compiler without __has_include, older than GCC 5, reports the missing
// header itself.)
#if defined(__has_include)
#if !__has_include(<liburing.h>)
#define RL_NO_LIBURING 1
#error "ringloop: liburing.h not found: install liburing-dev (liburing 2.3 or newer), or build with -tags ringloop_nouring (epoll only)"
#endif
#endif
#ifndef RL_NO_LIBURING
#include <liburing.h>
#endif
#include <stdint.h>

// Completions whose user_data has the top three bits 101 are "silent": the
// shim consumes them without copying them out, and they do not end a wait
// (successful cancels and buffer provisioning need no reaction).
#define RL_UD_SILENT_MASK (7ULL << 61)
#define RL_UD_SILENT (5ULL << 61)

// rl_cqe is a copied completion, in the kernel's layout (struct
// io_uring_cqe without big-CQE extras). Keep in sync with liburing.CQE.
struct rl_cqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
};

// rl_stats counts what the shim did. Keep in sync with liburing.Stats.
struct rl_stats {
	uint64_t enters;      // io_uring_enter system calls
	uint64_t submitted;   // SQEs prepared
	uint64_t completions; // CQEs copied out
	uint64_t sq_full;     // times the SQ was full and submitted early
	uint64_t overflow;    // overflow flushes (IORING_SQ_CQ_OVERFLOW seen)
	uint64_t eintr;       // EINTR retries
	uint64_t silent;      // silent completions consumed
	uint64_t silent_err;  // ... of which failed (other than ENOENT/EALREADY)
};

struct rl_ring {
	struct io_uring ring;
	struct io_uring_params params;
	struct rl_stats stats;
	int ext_arg;         // wait with IORING_ENTER_EXT_ARG timeouts
	int ops_left;        // SQEs rl_run could not hand to the ring (kernel busy)
	uint64_t timeout_ud; // user_data of the timeout SQE used without EXT_ARG
	struct __kernel_timespec ts;
	// registered buffer ring that rl_run refills from the returns array
	struct io_uring_buf_ring *br;
	uint64_t buf_base;
	uint32_t buf_size;
	uint32_t br_mask;
};

struct rl_ring *rl_setup(unsigned entries, unsigned cq_entries, unsigned flags, int *err);
void rl_close(struct rl_ring *r);
int rl_enable(struct rl_ring *r);
int rl_probe(struct rl_ring *r, uint8_t *out, int n);
int rl_register_buf_ring(struct rl_ring *r, uint64_t ring_addr, unsigned entries, unsigned bgid);
int rl_unregister_buf_ring(struct rl_ring *r, unsigned bgid);
void rl_set_buf_ring(struct rl_ring *r, uint64_t br, uint64_t base, uint32_t size, uint32_t entries);
void rl_buf_ring_init(uint64_t br);
void rl_buf_ring_return(struct rl_ring *r, const uint16_t *rets, int nret);
void rl_buf_ring_give(uint64_t br, uint64_t base, uint32_t size, uint32_t entries, uint16_t first,
		      const uint16_t *rets, int nret);
int rl_run(struct rl_ring *r, struct io_uring_sqe *sqes, int nsqes, const uint16_t *rets, int nret,
	   int64_t timeout_ns, struct rl_cqe *out, int out_cap);

#endif
