// pf::chunk_tag (ccn/chunk_plan.hpp) at every chunk count `tune` accepts (argv[1]): every tag
// within the 32767 MPI guarantees, the producer's and the consumer's tags never equal, and
// chunks that share a tag are kChunkTagCycle apart, so that one pair's messages of a tag
// are matched in the order every rank posts them.
#include <cstdio>
#include <cstdlib>

#include "ccn/chunk_plan.hpp"

int main(int argc, char** argv) {
  const int most = std::atoi(argv[1]);
  for (int c = 0; c < most; ++c) {
    const int producer = pf::chunk_tag(0, c), consumer = pf::chunk_tag(1, c);
    if (producer < 0 || consumer < 0 || producer > 32767 || consumer > 32767) {
      std::printf("chunk %d: tags %d, %d outside [0, 32767]\n", c, producer, consumer);
      return 1;
    }
    for (int d : {c + 1, c + pf::kChunkTagCycle - 1}) {  // nearer chunks never share a tag
      if (d < most && (pf::chunk_tag(0, d) == producer || pf::chunk_tag(1, d) == producer)) {
        std::printf("chunks %d and %d share tag %d\n", c, d, producer);
        return 1;
      }
    }
    if (pf::chunk_tag(1, c) == pf::chunk_tag(0, c + pf::kChunkTagCycle) ||
        producer == consumer) {
      std::printf("chunk %d: the producer's and the consumer's tags meet\n", c);
      return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}
