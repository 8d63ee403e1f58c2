// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * udpsink: counts the datagrams of udpsend per destination address.
 *
 *   udpsink [--port P] [--ready-file F] [--stop-file F] [--idle MS]
 *           [--timeout SEC]
 *
 * Binds one IPv4 and one IPv6 socket on the wildcard address (so it receives
 * for every local address, AnyIP routes included) and learns each
 * datagram's destination address from IP_PKTINFO / IPV6_PKTINFO. Writes
 * --ready-file (atomically) once both sockets are bound.
 *
 * Exits on SIGTERM/SIGINT; once --stop-file exists, as soon as no datagram
 * came for --idle ms (default 300): that is, when the count stopped
 * changing; and in any case after --timeout seconds (default 600). Prints:
 *   recv ADDR N        per destination address, in order of first arrival
 *   bad N              datagrams without udpsend's magic (when any)
 *   drops N            datagrams the kernel dropped on a full socket (when any)
 *   total N
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "core/clock.h"

#define MAX_ADDR 1024
#define UDP_PROBE_MAGIC 0x42475544U /* "BGUD", as udpsend sends it */

struct counter {
	char addr[INET6_ADDRSTRLEN];
	unsigned long long n;
};

static struct counter ctr[MAX_ADDR];
static int nctr;
static unsigned long long bad, other, drops[2];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void count_addr(const char *a)
{
	int i;

	for (i = 0; i < nctr; i++) {
		if (!strcmp(ctr[i].addr, a)) {
			ctr[i].n++;
			return;
		}
	}
	if (nctr == MAX_ADDR) {
		other++;
		return;
	}
	snprintf(ctr[nctr].addr, sizeof(ctr[nctr].addr), "%s", a);
	ctr[nctr++].n = 1;
}

static int open_sock(int family, unsigned short port)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1, big = 8 << 20;
	struct sockaddr_storage ss;
	socklen_t len;

	if (fd < 0) {
		perror("udpsink: socket");
		return -1;
	}
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		len = sizeof(*s4);
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		len = sizeof(*s6);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
	}
	/* Big buffer (RCVBUFFORCE as root), and a count of what overflowed. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		fprintf(stderr, "udpsink: cannot bind port %u (%s): %s\n", port,
			family == AF_INET ? "IPv4" : "IPv6", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads every queued datagram; returns how many. */
static int drain(int fd, int slot)
{
	char buf[2048], cbuf[256], addr[INET6_ADDRSTRLEN];
	int n = 0;

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		uint32_t magic;
		ssize_t r = recvmsg(fd, &m, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return n; /* EAGAIN: empty */
		}
		n++;
		strcpy(addr, "?");
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi;

				memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
				inet_ntop(AF_INET, &pi.ipi_addr, addr, sizeof(addr));
			} else if (cm->cmsg_level == IPPROTO_IPV6 &&
				   cm->cmsg_type == IPV6_PKTINFO) {
				struct in6_pktinfo pi;

				memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
				inet_ntop(AF_INET6, &pi.ipi6_addr, addr, sizeof(addr));
			} else if (cm->cmsg_level == SOL_SOCKET &&
				   cm->cmsg_type == SO_RXQ_OVFL) {
				uint32_t d;

				memcpy(&d, CMSG_DATA(cm), sizeof(d));
				drops[slot] = d; /* cumulative for the socket */
			}
		}
		if (r < 4) {
			bad++;
			continue;
		}
		memcpy(&magic, buf, sizeof(magic));
		if (ntohl(magic) != UDP_PROBE_MAGIC) {
			bad++;
			continue;
		}
		count_addr(addr);
	}
}

static int write_ready(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) || rename(tmp, path))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "stop-file", required_argument, NULL, 'f' },
		{ "idle", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ 0 },
	};
	const char *ready = NULL, *stop_file = NULL;
	unsigned long port = 9999;
	double idle = 0.3, timeout = 600, t0, last, stop_seen = 0;
	unsigned long long total = 0;
	struct pollfd pf[2];
	struct sigaction sa;
	int c, i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			port = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			ready = optarg;
			break;
		case 'f':
			stop_file = optarg;
			break;
		case 'i':
			idle = strtod(optarg, NULL) / 1000.0;
			break;
		case 't':
			timeout = strtod(optarg, NULL);
			break;
		default:
			fputs("usage: udpsink [--port P] [--ready-file F] [--stop-file F]"
			      " [--idle MS] [--timeout SEC]\n", stderr);
			return 2;
		}
	}
	if (optind != argc || !port || port > 65535) {
		fputs("udpsink: bad arguments\n", stderr);
		return 2;
	}
	/* No SA_RESTART: a signal interrupts poll() at once. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	pf[0].fd = open_sock(AF_INET, (unsigned short)port);
	pf[1].fd = open_sock(AF_INET6, (unsigned short)port);
	if (pf[0].fd < 0 || pf[1].fd < 0)
		return 1;
	pf[0].events = pf[1].events = POLLIN;
	if (ready && write_ready(ready)) {
		fprintf(stderr, "udpsink: cannot write %s: %s\n", ready, strerror(errno));
		return 1;
	}

	t0 = last = bg_mono();
	while (!stop) {
		double t;
		int n = poll(pf, 2, 20);

		if (n < 0 && errno != EINTR) {
			perror("udpsink: poll");
			break;
		}
		for (i = 0; i < 2; i++)
			if (n > 0 && (pf[i].revents & POLLIN) && drain(pf[i].fd, i) > 0)
				last = bg_mono();
		t = bg_mono();
		if (t - t0 >= timeout)
			break;
		if (stop_file && !stop_seen && access(stop_file, F_OK) == 0)
			stop_seen = t;
		/* Stopped: exit once the count has not changed for idle. */
		if (stop_seen && t - (last > stop_seen ? last : stop_seen) >= idle)
			break;
	}
	/* Whatever is still queued counts too. */
	drain(pf[0].fd, 0);
	drain(pf[1].fd, 1);

	for (i = 0; i < nctr; i++) {
		printf("recv %s %llu\n", ctr[i].addr, ctr[i].n);
		total += ctr[i].n;
	}
	if (other)
		printf("recv other %llu\n", other);
	if (bad)
		printf("bad %llu\n", bad);
	if (drops[0] + drops[1])
		printf("drops %llu\n", drops[0] + drops[1]);
	printf("total %llu\n", total + other);
	fflush(stdout);
	return 0;
}
