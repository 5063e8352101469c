/*
 * The command hook's native client (docs/decisions/0013-command-hook-fast-path.md), compiled by
 * `harness agents install` with the machine's cc and run as install writes it:
 *   hook-client NODE BIN hook NAME --harness H --observer-token F --ledger-token F --socket S
 *               [--fail closed|open] [--timeout MS]
 * It does what `harness-hook.sh` does, without starting a shell, curl or Node: posts the agent's payload
 * to the daemon's hook endpoint on its Unix socket and prints the answer. Whenever anything is not plainly
 * well (an argument it does not know, a waiting spool, a token file the forwarder would refuse, the daemon
 * down, slow or answering anything but a clean 200), the Node forwarder (`NODE BIN hook ...`,
 * hook-forwarder.ts) takes the call: before the payload is read, with stdin as the agent gave it; after,
 * with the payload on a pipe, the call's nonce and the time left. Never exits 2 (Claude Code would block
 * the tool with no reason). Tokens never leave this process but in the request.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* hook-limits.ts's MAX_HOOK_PAYLOAD_BYTES and token-file.ts's MAX_TOKEN_FILE_BYTES. */
#define MAX_PAYLOAD (8 * 1024 * 1024)
#define MAX_TOKEN_FILE 4096
/* An answer is a hook's JSON: far below this, or it is not the daemon's. */
#define MAX_ANSWER (1024 * 1024)
#define MAX_ARGS 64
/* The version sent to the daemon (decision 0018): held to package.json by forwarder-version.test.ts. */
#define HARNESS_VERSION "0.1.0"

static char **forwarder_argv; /* NODE BIN hook NAME ... */
static int forwarder_argc;

/* The forwarder takes the call as the agent gave it. */
static void forward(void) {
  execv(forwarder_argv[0], forwarder_argv);
  fprintf(stderr, "harness hook: cannot run %s: %s; not recorded, the tool runs\n", forwarder_argv[0],
          strerror(errno));
  exit(1);
}

static const char *payload;
static size_t payload_len;
static char nonce[33];
static long timeout_ms = 5000;

/* The forwarder takes the call after its payload was read: on a pipe, with the nonce and the time left. */
static void takeover(void) {
  char rest[24];
  snprintf(rest, sizeof rest, "%ld", timeout_ms - timeout_ms / 2);
  char *argv[MAX_ARGS + 8];
  int n = 0;
  for (int i = 0; i < forwarder_argc; i++) argv[n++] = forwarder_argv[i];
  argv[n++] = "--call";
  argv[n++] = nonce;
  argv[n++] = "--timeout";
  argv[n++] = rest;
  argv[n] = NULL;
  int fds[2];
  if (pipe(fds) != 0) forward();
  pid_t writer = fork();
  if (writer < 0) forward();
  if (writer == 0) {
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    size_t off = 0;
    while (off < payload_len) {
      ssize_t w = write(fds[1], payload + off, payload_len - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      off += (size_t)w;
    }
    _exit(0);
  }
  close(fds[1]);
  if (dup2(fds[0], 0) < 0) forward();
  close(fds[0]);
  execv(argv[0], argv);
  fprintf(stderr, "harness hook: cannot run %s: %s; not recorded, the tool runs\n", argv[0], strerror(errno));
  exit(1);
}

static int all_chars(const char *s, const char *allowed) {
  for (; *s; s++)
    if (strchr(allowed, *s) == NULL) return 0;
  return 1;
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGITS "0123456789"

/* harness-name.ts: letters, digits, '.', '_', '-', starting with a letter or digit, 1 to 128. */
static int harness_name(const char *s) {
  size_t n = strlen(s);
  return n >= 1 && n <= 128 && isalnum((unsigned char)s[0]) && all_chars(s, LOWER UPPER DIGITS "._-");
}

/* A token file as token-file.ts reads it, or 0: regular, at most 4096 bytes, private, one printable token. */
static int read_token(const char *file, char *out) {
  int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  ssize_t got = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= MAX_TOKEN_FILE && (st.st_mode & 077) == 0)
    got = read(fd, out, MAX_TOKEN_FILE);
  close(fd);
  if (got < 0 || got != st.st_size) return 0;
  size_t start = 0, end = (size_t)got;
  while (start < end && isspace((unsigned char)out[start])) start++;
  while (end > start && isspace((unsigned char)out[end - 1])) end--;
  if (start == end) return 0;
  for (size_t i = start; i < end; i++)
    if (out[i] < 0x21 || out[i] > 0x7e) return 0;
  memmove(out, out + start, end - start);
  out[end - start] = 0;
  return 1;
}

/* Whether a call waits in the spool: the forwarder delivers them first, in order (spool.ts). */
static int spool_waits(void) {
  const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  char dir[4096];
  if (xdg != NULL && xdg[0] == '/')
    snprintf(dir, sizeof dir, "%s/harness/agents/spool", xdg);
  else if (home != NULL && home[0] == '/')
    snprintf(dir, sizeof dir, "%s/.local/state/harness/agents/spool", home);
  else
    return 1;
  DIR *d = opendir(dir);
  if (d == NULL) return errno != ENOENT;
  struct dirent *e;
  int waits = 0;
  while (!waits && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    waits = n > 5 && e->d_name[0] != '.' && strcmp(e->d_name + n - 5, ".json") == 0;
  }
  closedir(d);
  return waits;
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Writes all of `data` before `deadline`, or returns 0. */
static int send_all(int fd, const char *data, size_t n, long deadline) {
  while (n > 0) {
    long left = deadline - now_ms();
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    if (left <= 0 || poll(&p, 1, (int)left) <= 0) return 0;
    ssize_t w = send(fd, data, n, 0);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) return 0;
    data += w;
    n -= (size_t)w;
  }
  return 1;
}

/* The header `name`'s value in the header block `head` (NUL-terminated lines end in CRLF), or NULL. */
static const char *header(const char *head, const char *name, size_t *len) {
  size_t n = strlen(name);
  for (const char *line = strstr(head, "\r\n"); line != NULL; line = strstr(line + 2, "\r\n")) {
    const char *h = line + 2;
    if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
      const char *v = h + n + 1;
      while (*v == ' ') v++;
      const char *e = strstr(v, "\r\n");
      *len = e == NULL ? strlen(v) : (size_t)(e - v);
      return v;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc < 3 || argc > MAX_ARGS) {
    fprintf(stderr, "harness hook: usage: hook-client NODE BIN hook NAME ...\n");
    return 1;
  }
  forwarder_argv = argv + 1;
  forwarder_argc = argc - 1;
  if (argc < 5 || strcmp(argv[3], "hook") != 0) forward();
  const char *name = argv[4];
  if (name[0] == 0 || strlen(name) > 64 || !all_chars(name, LOWER DIGITS "-")) forward();
  const char *harness = NULL, *observer = NULL, *ledger = NULL, *sock = NULL, *fail = NULL;
  for (int i = 5; i < argc; i += 2) {
    if (i + 1 >= argc) forward();
    const char *flag = argv[i], *value = argv[i + 1];
    if (strcmp(flag, "--harness") == 0) harness = value;
    else if (strcmp(flag, "--observer-token") == 0) observer = value;
    else if (strcmp(flag, "--ledger-token") == 0) ledger = value;
    else if (strcmp(flag, "--socket") == 0) sock = value;
    else if (strcmp(flag, "--fail") == 0) fail = value;
    else if (strcmp(flag, "--timeout") == 0) {
      if (value[0] == 0 || strlen(value) > 8 || !all_chars(value, DIGITS)) forward();
      timeout_ms = atol(value);
    } else
      forward(); /* a payload argument, --config, or a flag of a later forwarder */
  }
  if (harness == NULL || !harness_name(harness) || observer == NULL || ledger == NULL || sock == NULL)
    forward();
  if (fail != NULL && strcmp(fail, "closed") != 0 && strcmp(fail, "open") != 0) forward();
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (sock[0] != '/' || strlen(sock) >= sizeof addr.sun_path || timeout_ms < 2) forward();
  memcpy(addr.sun_path, sock, strlen(sock));
  if (spool_waits()) forward();
  static char obs_token[MAX_TOKEN_FILE + 1], led_token[MAX_TOKEN_FILE + 1];
  if (!read_token(observer, obs_token) || !read_token(ledger, led_token)) forward();

  /* The call's nonce: its idempotency key where the payload names no call (hook-key.ts). */
  unsigned char raw[16];
  int rnd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (rnd < 0 || read(rnd, raw, sizeof raw) != (ssize_t)sizeof raw) forward();
  close(rnd);
  for (int i = 0; i < 16; i++) snprintf(nonce + 2 * i, 3, "%02x", raw[i]);

  /* The payload, one byte past the bound at most. */
  size_t cap = 64 * 1024;
  char *buf = malloc(cap);
  if (buf == NULL) forward();
  for (;;) {
    if (payload_len == cap) {
      cap = cap * 2 > MAX_PAYLOAD + 1 ? MAX_PAYLOAD + 1 : cap * 2;
      char *grown = realloc(buf, cap);
      if (grown == NULL) break;
      buf = grown;
    }
    ssize_t r = read(0, buf + payload_len, cap - payload_len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    payload_len += (size_t)r;
    if (payload_len > MAX_PAYLOAD) break;
  }
  payload = buf;
  if (payload_len > MAX_PAYLOAD) takeover();

  long deadline = now_ms() + timeout_ms / 2;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0); /* macOS has no SOCK_CLOEXEC */
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) takeover();
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  static char head[2 * MAX_TOKEN_FILE + 1024];
  int h = snprintf(head, sizeof head,
                   "POST /hooks/%s?harness=%s%s%s HTTP/1.1\r\nHost: localhost\r\n"
                   "Content-Type: application/json\r\nAuthorization: Bearer %s\r\n"
                   "x-harness-ledger-token: %s\r\nx-harness-hook-call: %s\r\n"
                   "x-harness-version: " HARNESS_VERSION "\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                   name, harness, fail == NULL ? "" : "&fail=", fail == NULL ? "" : fail, obs_token, led_token,
                   nonce, payload_len);
  if (h < 0 || (size_t)h >= sizeof head || !send_all(fd, head, (size_t)h, deadline) ||
      !send_all(fd, payload, payload_len, deadline))
    takeover();

  static char answer[MAX_ANSWER + 1];
  size_t got = 0;
  for (;;) {
    long left = deadline - now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (left <= 0 || poll(&p, 1, (int)left) <= 0) takeover();
    ssize_t r = recv(fd, answer + got, MAX_ANSWER - got, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) takeover();
    if (r == 0) break;
    got += (size_t)r;
    if (got == MAX_ANSWER) takeover();
  }
  close(fd);
  answer[got] = 0;
  char *end = strstr(answer, "\r\n\r\n");
  if (end == NULL || strncmp(answer, "HTTP/1.1 200 ", 13) != 0) takeover();
  end[2] = 0; /* the header block, its last line's CRLF kept */
  const char *body = end + 4;
  size_t body_len = got - (size_t)(body - answer), len;
  const char *v = header(answer, "content-length", &len);
  if (v == NULL || strtoul(v, NULL, 10) != body_len || header(answer, "transfer-encoding", &len) != NULL)
    takeover();
  v = header(answer, "x-harness-row", &len);
  if (v != NULL && len == 7 && strncmp(v, "dropped", 7) == 0) takeover();
  v = header(answer, "x-harness-note", &len);
  if (v != NULL) fprintf(stderr, "harness hook: %.*s\n", (int)len, v);
  fwrite(body, 1, body_len, stdout);
  return fflush(stdout) == 0 ? 0 : 1;
}
