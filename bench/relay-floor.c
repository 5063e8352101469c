/*
 * The command hook's floor for `npm run bench:hook`: a compiled client that only connects and relays.
 * It posts stdin to the daemon's hook endpoint on its Unix socket with the two producer tokens read from
 * their files, and copies the answer's body to stdout: what a native client could at best do, with
 * nothing of the fast path's checks (spool, token file modes, fail modes). Built by the bench with cc.
 *   relay-floor SOCKET PATH OBSERVER_TOKEN_FILE LEDGER_TOKEN_FILE < payload
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PAYLOAD (8 * 1024 * 1024)

static void token(const char *file, char *out, size_t size) {
  FILE *f = fopen(file, "r");
  if (f == NULL || fgets(out, (int)size, f) == NULL) exit(1);
  fclose(f);
  out[strcspn(out, "\r\n")] = 0;
}

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) exit(1);
    p += w;
    n -= (size_t)w;
  }
}

int main(int argc, char **argv) {
  if (argc != 5) return 1;
  static char observer[4100], ledger[4100], payload[MAX_PAYLOAD], answer[1 << 20];
  token(argv[3], observer, sizeof observer);
  token(argv[4], ledger, sizeof ledger);
  size_t n = fread(payload, 1, sizeof payload, stdin);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) return 1;
  char head[10000];
  int h = snprintf(head, sizeof head,
                   "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                   "Authorization: Bearer %s\r\nx-harness-ledger-token: %s\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                   argv[2], observer, ledger, n);
  write_all(fd, head, (size_t)h);
  write_all(fd, payload, n);
  size_t got = 0;
  ssize_t r;
  while (got < sizeof answer - 1 && (r = read(fd, answer + got, sizeof answer - 1 - got)) > 0) got += (size_t)r;
  answer[got] = 0;
  char *body = strstr(answer, "\r\n\r\n");
  if (strncmp(answer, "HTTP/1.1 200 ", 13) != 0 || body == NULL) return 1;
  write_all(1, body + 4, got - (size_t)(body + 4 - answer));
  return 0;
}
