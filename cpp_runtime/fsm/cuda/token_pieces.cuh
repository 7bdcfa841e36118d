// parafuse boostfsm on GPUs: a host input of a token set in pieces (token_run.cuh): a piece
// ends before its first token whose scan reached its end, and the next starts there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "fsm/cuda/device.cuh"
#include "fsm/cuda/token_tables.cuh"

namespace parafuse::fsm::cuda {

// The device memory of a host input's pieces: two buffers taken in turn. While a piece is
// tokenized, the bytes after it are copied (on a stream of their own) into the other buffer,
// `front` bytes in; the piece's unfinished tail (from its stop) is then copied before them,
// device to device, and the next piece is the tail and the fetched bytes. A tail longer than
// `front` (a token that spans more than a piece) takes a larger buffer.
class TokenPieces {
 public:
  TokenPieces(const uint8_t* host, uint64_t n, uint64_t piece, cudaStream_t stream)
      : host_(host), n_(n), piece_(piece), stream_(stream) {
    buffers_[0] = DeviceArray<uint8_t>(2 * piece);
    if (n > piece) buffers_[1] = DeviceArray<uint8_t>(2 * piece);
    length_ = std::min(piece, n);
    fetch(0, 0, length_);
    start_ = piece_;
  }

  // The current piece (its bytes are on the device once `stream` reaches this point), and the
  // bytes after it fetched meanwhile.
  TokenInput input(uint64_t budget) {
    const uint64_t ahead = base_ + length_;
    fetched_ = std::min(piece_, n_ - ahead);
    if (fetched_) fetch(1 - b_, ahead, fetched_);
    PF_FSM_CUDA(cudaStreamWaitEvent(stream_, copied_[b_], 0));
    return TokenInput{buffers_[b_].get() + start_, length_, budget, ahead < n_};
  }

  // The current piece ended at `stop`: on to the next, its tail first.
  void advance(uint64_t stop) {
    const uint64_t tail = length_ - stop;
    const uint8_t* from = buffers_[b_].get() + start_ + stop;
    const size_t next = 1 - b_;
    if (tail > piece_) {  // more than the room before the fetched bytes: a larger buffer
      DeviceArray<uint8_t> larger(tail + fetched_ + piece_);
      PF_FSM_CUDA(cudaStreamWaitEvent(stream_, copied_[next], 0));
      copy(larger.get(), from, tail);
      copy(larger.get() + tail, buffers_[next].get() + piece_, fetched_);
      PF_FSM_CUDA(cudaStreamSynchronize(stream_));  // before the old buffer is freed
      buffers_[next] = std::move(larger);
      start_ = 0;
    } else {
      copy(buffers_[next].get() + piece_ - tail, from, tail);
      start_ = piece_ - tail;
    }
    base_ += stop;
    length_ = tail + fetched_;
    longest_ = std::max(longest_, length_);
    b_ = next;
  }

  uint64_t base() const { return base_; }
  uint64_t longest() const { return longest_; }

 private:
  // Bytes [from, from + count) of the input into buffer b, `piece` bytes in, on `copies_`
  // once the buffer's last piece is done with.
  void fetch(size_t b, uint64_t from, uint64_t count) {
    PF_FSM_CUDA(cudaEventRecord(done_[b], stream_));
    PF_FSM_CUDA(cudaStreamWaitEvent(copies_, done_[b], 0));
    PF_FSM_CUDA(cudaMemcpyAsync(buffers_[b].get() + piece_, host_ + from, count,
                                cudaMemcpyHostToDevice, copies_));
    PF_FSM_CUDA(cudaEventRecord(copied_[b], copies_));
  }
  void copy(uint8_t* to, const uint8_t* from, uint64_t count) {
    if (count) PF_FSM_CUDA(cudaMemcpyAsync(to, from, count, cudaMemcpyDeviceToDevice, stream_));
  }

  const uint8_t* host_;
  uint64_t n_, piece_;
  cudaStream_t stream_;
  RunStream copies_;
  DeviceArray<uint8_t> buffers_[2];
  RunEvent copied_[2], done_[2];
  size_t b_ = 0;
  uint64_t base_ = 0, length_ = 0, start_ = 0, fetched_ = 0, longest_ = 0;
};

}  // namespace parafuse::fsm::cuda
