# command: coconetc build samples/adam.ccn --backend cuda --schedule fused (the step of src/adam.cu)
const int rank_ = this->rank_; (void)rank_;
arena_.restart();  // this step's temporaries: the buffers of the last one
pf::f16* const v_g = v_g_.data(); (void)v_g;
const pf::DevLocal L_g = L_g_; (void)L_g;
float* const v_w = v_w_.data(); (void)v_w;
const pf::DevLocal L_w = L_w_; (void)L_w;
float* const v_m = v_m_.data(); (void)v_m;
const pf::DevLocal L_m = L_m_; (void)L_m;
float* const v_v = v_v_.data(); (void)v_v;
const pf::DevLocal L_v = L_v_; (void)L_v;
pf::f16* const v_rs = v_rs_.data(); (void)v_rs;
const pf::DevLocal L_rs = L_rs_; (void)L_rs;
float* const v_w1 = v_w1_.data(); (void)v_w1;
const pf::DevLocal L_w1 = L_w1_; (void)L_w1;
float* const v_agw = v_agw_.data(); (void)v_agw;
const pf::DevLocal L_agw = L_agw_; (void)L_agw;
const uint64_t seed_step = seed + step_index;
(void)seed_step;
const float p_lr = pf::round_to<float>(params_->lr); (void)p_lr;
const float p_beta1 = pf::round_to<float>(params_->beta1); (void)p_beta1;
const float p_beta2 = pf::round_to<float>(params_->beta2); (void)p_beta2;
const float p_eps = pf::round_to<float>(params_->eps); (void)p_eps;
// fuse1 = fuse(rs, m1, v1, w1, agw): chunked pipeline on two streams
{
  PF_HERE();
  // rs, m1, v1, w1, agw: chunk c reduced, computed, gathered
  const int chunks = pf::auto_chunks(L_rs.count * 2);
  const pf::DeviceChunks plan(L_rs.logical[0], pf::inner_count(L_rs, 1), parts_world_, chunks);
  pf::f16* const rs_packed = arena_.take<pf::f16>(plan.scratch());
  pf::f16* const rs_received = arena_.take<pf::f16>(plan.scratch());
  auto scatter = [&](int c) {
    plan.scatter<pf::f16>(v_g, v_rs, rs_packed, rs_received, c, index_world_, pf::ReduceOp::sum, nccl_, streams_.comm);
  };
  const bool one_rank = parts_world_ == 1;
  float* const ag0_packed = arena_.take<float>(plan.scratch());
  float* const ag0_received = arena_.take<float>(plan.scratch());
  if (!one_rank) {
    streams_.to_comm();
    scatter(0);
  }
  pf::f16* const v_rs_at = one_rank ? const_cast<pf::f16*>(v_g) : v_rs;
  float* const v_w1_at = one_rank ? const_cast<float*>(v_agw) : v_w1;
  {  // at one rank: v_rs is v_g, v_w1 is v_agw
    pf::f16* const v_rs = v_rs_at;
    float* const v_w1 = v_w1_at;
    for (int c = 0; c < chunks; ++c) {
      const auto [lo, hi] = plan.plan.mine(index_world_, c);
      (void)lo; (void)hi;
      if (!one_rank) {
        if (c + 1 < chunks) scatter(c + 1);
        PF_CUDA(cudaStreamWaitEvent(streams_.compute, plan.reduced[c], 0));
      }
      pf::launch_vectorized<8>(lo, hi, pf::aligned16(lo, v_m, v_rs, v_v, v_w1), streams_.compute,
          [=] __device__(int64_t i0) {
            const auto ld_v_m = pf::load_vec<8>(v_m + i0);
            const auto ld_v_rs = pf::load_vec<8>(v_rs + i0);
            const auto ld_v_v = pf::load_vec<8>(v_v + i0);
            pf::Vec<float, 8> st_v_m;
            pf::Vec<float, 8> st_v_v;
            pf::Vec<float, 8> st_v_w1;
      #pragma unroll
            for (int j = 0; j < 8; ++j) {
              const int64_t i = i0 + j; (void)i;
              const float r_m1 = pf::round_to<float>(p_beta1 * static_cast<float>(ld_v_m.v[j]) + (float(1.0) - p_beta1) * static_cast<float>(ld_v_rs.v[j]));
              st_v_m.v[j] = pf::store_as<float>(r_m1);
              const float r_v1 = pf::round_to<float>(p_beta2 * static_cast<float>(ld_v_v.v[j]) + (float(1.0) - p_beta2) * static_cast<float>(ld_v_rs.v[j]) * static_cast<float>(ld_v_rs.v[j]));
              st_v_v.v[j] = pf::store_as<float>(r_v1);
              const float r_w1 = pf::round_to<float>(static_cast<float>(v_w[(i + L_m.start[0] * pf::inner_count(L_w, 1))]) - p_lr * r_m1 / (std::sqrt(r_v1) + p_eps));
              st_v_w1.v[j] = pf::store_as<float>(r_w1);
            }
            pf::store_vec<8>(v_m + i0, st_v_m);
            pf::store_vec<8>(v_v + i0, st_v_v);
            pf::store_vec<8>(v_w1 + i0, st_v_w1);
          },
          [=] __device__(int64_t i) {
            const float r_m1 = pf::round_to<float>(p_beta1 * static_cast<float>(v_m[i]) + (float(1.0) - p_beta1) * static_cast<float>(v_rs[i]));
            v_m[i] = pf::store_as<float>(r_m1);
            const float r_v1 = pf::round_to<float>(p_beta2 * static_cast<float>(v_v[i]) + (float(1.0) - p_beta2) * static_cast<float>(v_rs[i]) * static_cast<float>(v_rs[i]));
            v_v[i] = pf::store_as<float>(r_v1);
            const float r_w1 = pf::round_to<float>(static_cast<float>(v_w[(i + L_m.start[0] * pf::inner_count(L_w, 1))]) - p_lr * r_m1 / (std::sqrt(r_v1) + p_eps));
            v_w1[i] = pf::store_as<float>(r_w1);
          });
      if (!one_rank) {
        PF_CUDA(cudaEventRecord(plan.computed[c], streams_.compute));
        PF_CUDA(cudaStreamWaitEvent(streams_.comm, plan.computed[c], 0));
        plan.gather<float>(v_w1, v_agw, ag0_packed, ag0_received, c, index_world_, nccl_, streams_.comm);
      }
    }
  }
  if (!one_rank) {
    streams_.to_compute();
  }
}
PF_HERE();
// states take their next values at the end of the step
// m took m1 in place
// v took v1 in place
v_w_.swap(v_agw_);
