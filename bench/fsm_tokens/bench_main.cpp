// Times a flex- or re2c-generated lexer (bench/fsm_tokens.py): tokenizes INPUT from memory
// REPEAT times, building the token list each time; prints the median seconds and writes
// the tokens (24-byte records) to OUT.
//
//   bench_flex|bench_re2c INPUT REPEAT OUT
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench_lexer.hpp"

std::vector<PfToken> pf_tokens;
size_t pf_pos = 0;

#ifdef PF_FLEX
typedef struct yy_buffer_state* YY_BUFFER_STATE;
YY_BUFFER_STATE yy_scan_buffer(char* base, size_t size);
void yy_delete_buffer(YY_BUFFER_STATE buffer);
int yylex();
static void lex(std::vector<char>& buffer, size_t n) {
  YY_BUFFER_STATE state = yy_scan_buffer(buffer.data(), n + 2);
  while (yylex()) {
  }
  yy_delete_buffer(state);
}
#else
void pf_lex(const unsigned char* cursor, const unsigned char* limit);
static void lex(std::vector<char>& buffer, size_t n) {
  const auto* data = reinterpret_cast<const unsigned char*>(buffer.data());
  pf_lex(data, data + n);
}
#endif

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> buffer((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t n = buffer.size();
  buffer.push_back('\0');
  buffer.push_back('\0');
  std::vector<double> seconds;
  for (int r = 0; r < std::atoi(argv[2]); ++r) {
    pf_tokens = std::vector<PfToken>();
    pf_pos = 0;
    const auto began = std::chrono::steady_clock::now();
    lex(buffer, n);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("%.9f %zu\n", seconds[seconds.size() / 2], pf_tokens.size());
  std::FILE* out = std::fopen(argv[3], "wb");
  std::fwrite(pf_tokens.data(), sizeof(PfToken), pf_tokens.size(), out);
  std::fclose(out);
  return 0;
}
