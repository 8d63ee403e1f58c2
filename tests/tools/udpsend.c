// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * udpsend: paced UDP traffic for the end-to-end tests.
 *
 *   udpsend [--pps N] [--count N] [--stop-file F] [--duration SEC]
 *           [--port P] [--src ADDR]... [--size BYTES] DST...
 *
 * Sends datagrams to the destinations (IPv4 and/or IPv6) round-robin at N
 * datagrams per second in total, until each destination got --count
 * datagrams, the --stop-file exists, --duration seconds passed, or
 * SIGTERM/SIGINT. --count 0 (the default) means no limit. --src binds the socket of the address's family
 * to that source address. Every datagram carries a magic, the destination's
 * index and a per-destination sequence number (see struct udp_probe).
 *
 * On exit prints, one line each, in the order given:
 *   sent ADDR N
 *   error ADDR N         (only when sendto() failed for ADDR)
 *   total N
 * A datagram is counted as sent only when sendto() accepted it; ENOBUFS and
 * EAGAIN are retried, not counted. Exit status: 0, 1 setup failure, 2 usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "core/clock.h"

#define MAX_DST 256
#define UDP_PROBE_MAGIC 0x42475544U /* "BGUD" */

struct udp_probe {
	uint32_t magic; /* UDP_PROBE_MAGIC, network order */
	uint32_t index; /* destination index, network order */
	uint64_t seq; /* per-destination sequence, big endian */
};

struct dst {
	const char *name;
	struct sockaddr_storage sa;
	socklen_t salen;
	int family;
	unsigned long long sent, errors, seq;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return AF_INET6;
	}
	return -1;
}

static int open_sock(int family, const char *src)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1, big = 4 << 20;

	if (fd < 0) {
		perror("udpsend: socket");
		return -1;
	}
	/* Report local drops (qdisc, full device) as ENOBUFS instead of
	 * silently counting them as sent. */
	if (family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (src) {
		struct sockaddr_storage ss;
		socklen_t len;

		if (parse_addr(src, 0, &ss, &len) != family ||
		    bind(fd, (struct sockaddr *)&ss, len)) {
			fprintf(stderr, "udpsend: cannot bind to %s: %s\n", src,
				strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Drains queued ICMP/local errors so they do not fail later sends. */
static void drain_errqueue(int fd)
{
	char buf[512], cbuf[512];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };

	while (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0)
		m.msg_controllen = sizeof(cbuf);
}

static void usage(void)
{
	fputs("usage: udpsend [--pps N] [--count N] [--stop-file F] [--duration SEC]\n"
	      "               [--port P] [--src ADDR]... [--size BYTES] DST...\n",
	      stderr);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pps", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'c' },
		{ "stop-file", required_argument, NULL, 'f' },
		{ "port", required_argument, NULL, 'p' },
		{ "src", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'z' },
		{ "duration", required_argument, NULL, 'd' },
		{ 0 },
	};
	const char *stop_file = NULL, *src4 = NULL, *src6 = NULL;
	unsigned long long count = 0, total = 0, attempts = 0, target, i = 0;
	double pps = 1000, duration = 0, t0, next_check = 0;
	unsigned long port = 9999, size = sizeof(struct udp_probe);
	static struct dst d[MAX_DST];
	char buf[1500];
	int nd = 0, finished = 0, c, fd4 = -1, fd6 = -1, k;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			pps = strtod(optarg, NULL);
			break;
		case 'c':
			count = strtoull(optarg, NULL, 10);
			break;
		case 'f':
			stop_file = optarg;
			break;
		case 'p':
			port = strtoul(optarg, NULL, 10);
			break;
		case 's':
			if (strchr(optarg, ':'))
				src6 = optarg;
			else
				src4 = optarg;
			break;
		case 'z':
			size = strtoul(optarg, NULL, 10);
			break;
		case 'd':
			duration = strtod(optarg, NULL);
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind >= argc || argc - optind > MAX_DST || !(pps > 0) ||
	    !port || port > 65535 || size < sizeof(struct udp_probe) ||
	    size > sizeof(buf)) {
		usage();
		return 2;
	}
	for (k = optind; k < argc; k++, nd++) {
		d[nd].name = argv[k];
		d[nd].family = parse_addr(argv[k], (uint16_t)port, &d[nd].sa,
					  &d[nd].salen);
		if (d[nd].family < 0) {
			fprintf(stderr, "udpsend: not an address: %s\n", argv[k]);
			return 2;
		}
		if (d[nd].family == AF_INET && fd4 < 0 && (fd4 = open_sock(AF_INET, src4)) < 0)
			return 1;
		if (d[nd].family == AF_INET6 && fd6 < 0 && (fd6 = open_sock(AF_INET6, src6)) < 0)
			return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	memset(buf, 0, sizeof(buf));

	t0 = bg_mono();
	while (!stop && (!count || finished < nd)) {
		double t = bg_mono();

		if (duration > 0 && t - t0 >= duration)
			break;
		if (stop_file && t >= next_check) {
			if (access(stop_file, F_OK) == 0)
				break;
			next_check = t + 0.005;
		}
		/* Pacing: as many as the rate allows by now, in bursts of 64. */
		target = (unsigned long long)((t - t0) * pps) + 1;
		if (attempts >= target) {
			double wait = (double)(attempts + 1) / pps - (t - t0);
			struct timespec ts;

			if (wait > 0.002)
				wait = 0.002; /* keep checking stop file and signals */
			ts.tv_sec = 0;
			ts.tv_nsec = (long)(wait * 1e9);
			nanosleep(&ts, NULL);
			continue;
		}
		for (k = 0; k < 64 && attempts < target && !stop; k++) {
			unsigned long long idx = i % (unsigned long long)nd;
			struct dst *x = &d[idx];
			struct udp_probe p = { htonl(UDP_PROBE_MAGIC),
					       htonl((uint32_t)idx), 0 };
			int fd = x->family == AF_INET ? fd4 : fd6;
			ssize_t r;

			i++;
			if (count && x->sent + x->errors >= count)
				continue; /* done with this one */
			p.seq = htobe64(x->seq);
			memcpy(buf, &p, sizeof(p));
			r = sendto(fd, buf, size, 0, (struct sockaddr *)&x->sa, x->salen);
			if (r < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)) {
				drain_errqueue(fd);
				i--; /* retry the same datagram on the next round */
				break;
			}
			if (r < 0) {
				x->errors++;
				drain_errqueue(fd);
			} else {
				x->sent++;
			}
			x->seq++;
			attempts++;
			if (count && x->sent + x->errors == count)
				finished++;
		}
	}

	total = 0;
	for (k = 0; k < nd; k++) {
		printf("sent %s %llu\n", d[k].name, d[k].sent);
		total += d[k].sent;
	}
	for (k = 0; k < nd; k++)
		if (d[k].errors)
			printf("error %s %llu\n", d[k].name, d[k].errors);
	printf("total %llu\n", total);
	fflush(stdout);
	return 0;
}
