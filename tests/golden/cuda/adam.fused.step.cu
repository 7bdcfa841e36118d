# command: coconetc build samples/adam.ccn --backend cuda --schedule fused (the step of src/adam.cu)
const int rank_ = this->rank_; (void)rank_;
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
float* const v_m1 = v_m1_.data(); (void)v_m1;
const pf::DevLocal L_m1 = L_m1_; (void)L_m1;
float* const v_v1 = v_v1_.data(); (void)v_v1;
const pf::DevLocal L_v1 = L_v1_; (void)L_v1;
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
// fuse1 = fuse(rs, m1, v1, w1, agw): one kernel per phase, collectives whole
{
  // rs = reducescatter(...) on the communication stream
  streams_.to_comm();
  pf::reduce_scatter<pf::f16>(v_g, v_rs, L_rs.logical[0], pf::inner_count(L_g, 1), pf::ReduceOp::sum, nccl_, streams_.comm, scratch_);
  streams_.to_compute();
}
{
  // m1, v1, w1: one kernel
  pf::launch(0, L_m1.count, streams_.compute, [=] __device__(int64_t i) {
    const float r_m1 = pf::round_to<float>(p_beta1 * static_cast<float>(v_m[i]) + (float(1.0) - p_beta1) * static_cast<float>(v_rs[i]));
    v_m1[i] = pf::store_as<float>(r_m1);
    const float r_v1 = pf::round_to<float>(p_beta2 * static_cast<float>(v_v[i]) + (float(1.0) - p_beta2) * static_cast<float>(v_rs[i]) * static_cast<float>(v_rs[i]));
    v_v1[i] = pf::store_as<float>(r_v1);
    const float r_w1 = pf::round_to<float>(static_cast<float>(v_w[(i + L_m1.start[0] * pf::inner_count(L_w, 1))]) - p_lr * r_m1 / (std::sqrt(r_v1) + p_eps));
    v_w1[i] = pf::store_as<float>(r_w1);
  });
}
{
  // agw = allgather(...) on the communication stream
  streams_.to_comm();
  pf::allgather_rows<float>(v_w1, v_agw, L_agw.logical[0], pf::inner_count(L_agw, 1), nccl_, streams_.comm, scratch_);
  streams_.to_compute();
}
// states take their next values at the end of the step
v_m_.swap(v_m1_);
v_v_.swap(v_v1_);
v_w_.swap(v_agw_);
