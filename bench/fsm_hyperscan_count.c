/* Hyperscan side by side with boostfsm: block mode over one file, matches counted in a
   C callback. Built by bench/fsm_schemes.py against Debian's libhyperscan-dev.

     fsm_hyperscan_count PATTERNS INPUT REPEAT
   PATTERNS: one "FLAGS<TAB>REGEX" per line (FLAGS: '-' or letters i, s, m); when the
   file holds an ASCII record separator (0x1e), records end there instead, so that a
   regex may span lines (extended mode).
   Prints: {"matches": N, "seconds": MEDIAN, "gbps": G} */
#include <hs/hs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int count_match(unsigned id, unsigned long long from, unsigned long long to,
                       unsigned flags, void *context) {
  (void)id, (void)from, (void)to, (void)flags;
  ++*(unsigned long long *)context;
  return 0;
}

static char *read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file) { perror(path); exit(1); }
  fseek(file, 0, SEEK_END);
  *size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  char *data = malloc(*size + 1);
  if (fread(data, 1, *size, file) != *size) { perror(path); exit(1); }
  data[*size] = 0;
  fclose(file);
  return data;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s PATTERNS INPUT REPEAT\n", argv[0]); return 2; }
  size_t pattern_bytes, size;
  char *patterns = read_file(argv[1], &pattern_bytes);
  enum { kMaxPatterns = 4096 };
  static const char *expressions[kMaxPatterns];
  static unsigned flags[kMaxPatterns], ids[kMaxPatterns];
  unsigned count = 0;
  const char *separator = strchr(patterns, 0x1e) ? "\x1e" : "\n";
  for (char *line = strtok(patterns, separator); line && count < kMaxPatterns;
       line = strtok(NULL, separator)) {
    while (*line == '\n') ++line;
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    flags[count] = (strchr(line, 'i') ? HS_FLAG_CASELESS : 0) |
                   (strchr(line, 's') ? HS_FLAG_DOTALL : 0) |
                   (strchr(line, 'm') ? HS_FLAG_MULTILINE : 0);
    expressions[count] = tab + 1;
    ids[count] = count;
    ++count;
  }
  hs_database_t *database;
  hs_compile_error_t *error;
  if (hs_compile_multi(expressions, flags, ids, count, HS_MODE_BLOCK, NULL, &database, &error)
      != HS_SUCCESS) {
    fprintf(stderr, "hyperscan: %s\n", error->message);
    return 1;
  }
  hs_scratch_t *scratch = NULL;
  hs_alloc_scratch(database, &scratch);
  char *data = read_file(argv[2], &size);
  int repeat = atoi(argv[3]);
  double seconds[64];
  unsigned long long matches = 0;
  for (int r = 0; r < repeat && r < 64; ++r) {
    struct timespec began, ended;
    matches = 0;
    clock_gettime(CLOCK_MONOTONIC, &began);
    hs_scan(database, data, (unsigned)size, 0, scratch, count_match, &matches);
    clock_gettime(CLOCK_MONOTONIC, &ended);
    seconds[r] = (ended.tv_sec - began.tv_sec) + 1e-9 * (ended.tv_nsec - began.tv_nsec);
  }
  qsort(seconds, repeat, sizeof(double), by_value);
  double median = seconds[repeat / 2];
  printf("{\"matches\": %llu, \"seconds\": %.9g, \"gbps\": %.6g}\n", matches, median,
         size / median / 1e9);
  return 0;
}
