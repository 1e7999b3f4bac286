/* SPDX-License-Identifier: MIT */
/*
 * The scrape endpoint of vyre-top --listen: a single-threaded HTTP/1.0 and
 * 1.1 server on a loopback address that answers GET /metrics with the view
 * of the last refresh. Every socket is non-blocking and every connection
 * has a deadline, so a client that connects and says nothing, or reads its
 * answer slowly, never delays a refresh; when the table is full the
 * oldest connection makes room. One request per connection (Connection:
 * close), as Prometheus scrapes.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "top.h"

#define HTTP_CONNS	 16u
#define HTTP_REQUEST_MAX 8192u
#define HTTP_DEADLINE_NS (5ull * 1000000000ull) /* from accept to the last byte sent */
#define OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define PROMETHEUS_TYPE	 "text/plain; version=0.0.4; charset=utf-8"

struct http_conn {
	int fd; /* -1: free */
	uint64_t deadline_ns;
	size_t in_len;
	char in[HTTP_REQUEST_MAX + 1];
	char *out; /* the whole answer once the request is read */
	size_t out_len, out_off;
};

struct top_http {
	int fd;
	char address[96];
	struct http_conn conns[HTTP_CONNS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int top_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		const unsigned char *a = in6->sin6_addr.s6_addr;
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return 1;
		return memcmp(a, mapped, sizeof(mapped)) == 0 && a[12] == 127;
	}
	return 0;
}

/* "HOST:PORT" or "[V6]:PORT" into @host and @port. */
static int split_hostport(const char *s, char *host, size_t host_len, const char **port)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon[1] == '\0')
		return -EINVAL;
	const char *h = s;
	size_t n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		h = s + 1;
		n -= 2;
	}
	if (n == 0 || n >= host_len)
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

static int bind_loopback(struct top_http *h, const struct addrinfo *ai, char *why, size_t why_len)
{
	int fd =
	    socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0) {
		snprintf(why, why_len, "socket: %s", strerror(errno));
		return -errno;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, (int)HTTP_CONNS) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		int err = errno;
		snprintf(why, why_len, "cannot listen there: %s", strerror(err));
		close(fd);
		return -err;
	}
	char host[64], port[16];
	if (getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(host, sizeof(host), "?");
	snprintf(h->address, sizeof(h->address), ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		 host, port);
	h->fd = fd;
	return 0;
}

int top_http_open(struct top_http **out, const char *hostport, char *why, size_t why_len)
{
	char host[256];
	const char *port;
	if (split_hostport(hostport, host, sizeof(host), &port) != 0) {
		snprintf(why, why_len, "--listen wants HOST:PORT, not '%s'", hostport);
		return -EINVAL;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		snprintf(why, why_len, "--listen %s: %s", hostport, gai_strerror(rc));
		return -EINVAL;
	}
	/* The metrics name client pids and uids and the server has no authentication. */
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (!top_is_loopback(ai->ai_addr)) {
			snprintf(why, why_len,
				 "--listen %s: not a loopback address (the metrics name client "
				 "processes and the endpoint has no authentication)",
				 hostport);
			freeaddrinfo(res);
			return -EPERM;
		}
	}
	struct top_http *h = calloc(1, sizeof(*h));
	if (!h) {
		freeaddrinfo(res);
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < HTTP_CONNS; i++)
		h->conns[i].fd = -1;
	rc = bind_loopback(h, res, why, why_len);
	freeaddrinfo(res);
	if (rc != 0) {
		free(h);
		return rc;
	}
	*out = h;
	return 0;
}

const char *top_http_address(const struct top_http *h)
{
	return h->address;
}

static void conn_close(struct http_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->in_len = c->out_len = c->out_off = 0;
}

static void accept_all(struct top_http *h, uint64_t now)
{
	for (;;) {
		int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct http_conn *slot = &h->conns[0];
		for (uint32_t i = 0; i < HTTP_CONNS; i++) {
			struct http_conn *c = &h->conns[i];
			if (c->fd < 0) {
				slot = c;
				break;
			}
			if (c->deadline_ns < slot->deadline_ns)
				slot = c;
		}
		conn_close(slot);
		slot->fd = fd;
		slot->deadline_ns = now + HTTP_DEADLINE_NS;
	}
}

/* The value of header @name in the request's header lines, or NULL. */
static const char *header(const char *req, const char *name, size_t *len)
{
	size_t n = strlen(name);
	for (const char *p = strchr(req, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
		const char *line = p + 1;
		if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
			const char *v = line + n + 1;
			v += strspn(v, " \t");
			*len = strcspn(v, "\r\n");
			return v;
		}
	}
	return NULL;
}

static int set_answer(struct http_conn *c, const char *version, const char *status,
		      const char *type, const char *body, size_t body_len, int head)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f,
		"%s %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
		version, status, type, body_len,
		strncmp(status, "405", 3) == 0 ? "Allow: GET, HEAD\r\n" : "");
	if (!head)
		fwrite(body, 1, body_len, f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	c->out = buf;
	c->out_len = len;
	c->out_off = 0;
	return 0;
}

static int plain(struct http_conn *c, const char *version, const char *status, int head)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%s\n", status);
	return set_answer(c, version, status, "text/plain; charset=utf-8", body, (size_t)n, head);
}

/* The request in @c->in is complete: build its answer. */
static int answer(struct http_conn *c, const struct top_view *v)
{
	char method[16], target[1024], version[16];
	if (sscanf(c->in, "%15s %1023s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0)
		return plain(c, "HTTP/1.1", "400 Bad Request", 0);
	if (strcmp(version, "HTTP/1.0") != 0)
		snprintf(version, sizeof(version), "HTTP/1.1");
	int head = strcmp(method, "HEAD") == 0;
	if (!head && strcmp(method, "GET") != 0)
		return plain(c, version, "405 Method Not Allowed", 0);
	target[strcspn(target, "?")] = '\0';
	if (strcmp(target, "/metrics") != 0)
		return plain(c, version, "404 Not Found", head);
	size_t accept_len = 0;
	const char *accept = header(c->in, "Accept", &accept_len);
	int om = 0;
	static const char want[] = "application/openmetrics-text";
	for (size_t i = 0; accept && i + sizeof(want) - 1 <= accept_len && !om; i++)
		om = strncasecmp(accept + i, want, sizeof(want) - 1) == 0;
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (!f)
		return -ENOMEM;
	top_print_metrics(f, v, om);
	int err = fclose(f) != 0 ? -ENOMEM : 0;
	if (!err)
		err = set_answer(c, version, "200 OK", om ? OPENMETRICS_TYPE : PROMETHEUS_TYPE,
				 body, len, head);
	free(body);
	return err;
}

static void on_readable(struct http_conn *c, const struct top_view *v)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, HTTP_REQUEST_MAX - c->in_len, 0);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	c->in_len += (size_t)n;
	c->in[c->in_len] = '\0';
	if (memchr(c->in, '\0', c->in_len)) {
		if (plain(c, "HTTP/1.1", "400 Bad Request", 0) != 0)
			conn_close(c);
		return;
	}
	if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n")) {
		if (answer(c, v) != 0)
			conn_close(c);
	} else if (c->in_len == HTTP_REQUEST_MAX) {
		if (plain(c, "HTTP/1.1", "431 Request Header Fields Too Large", 0) != 0)
			conn_close(c);
	}
}

static void on_writable(struct http_conn *c)
{
	ssize_t n =
	    send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off == c->out_len) {
		shutdown(c->fd, SHUT_WR);
		conn_close(c);
	}
}

int top_http_serve(struct top_http *h, uint64_t until_ns, const struct top_view *v,
		   volatile sig_atomic_t *stop)
{
	struct pollfd pfd[1 + HTTP_CONNS];
	struct http_conn *who[1 + HTTP_CONNS];
	for (;;) {
		uint64_t now = now_ns();
		if (*stop || now >= until_ns)
			return 0;
		uint64_t wake = until_ns;
		nfds_t n = 0;
		pfd[n++] = (struct pollfd){.fd = h->fd, .events = POLLIN};
		for (uint32_t i = 0; i < HTTP_CONNS; i++) {
			struct http_conn *c = &h->conns[i];
			if (c->fd < 0)
				continue;
			if (now >= c->deadline_ns) {
				conn_close(c);
				continue;
			}
			if (c->deadline_ns < wake)
				wake = c->deadline_ns;
			who[n] = c;
			pfd[n++] =
			    (struct pollfd){.fd = c->fd, .events = c->out ? POLLOUT : POLLIN};
		}
		uint64_t ms = (wake - now + 999999u) / 1000000u;
		int rc = poll(pfd, n, ms > 60000 ? 60000 : (int)ms);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (nfds_t i = 1; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (who[i]->out)
				on_writable(who[i]);
			else
				on_readable(who[i], v);
		}
		if (pfd[0].revents & POLLIN)
			accept_all(h, now_ns());
	}
}

void top_http_close(struct top_http *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < HTTP_CONNS; i++)
		conn_close(&h->conns[i]);
	close(h->fd);
	free(h);
}
