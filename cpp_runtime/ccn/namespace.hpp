// The runtimes' one namespace root: the ccn runtime is parafuse::ccn, its emulated CUDA
// device parafuse::ccn::emulated (the FSM runtime's is parafuse::fsm); `pf` and `pf_emu`
// are the short names the generated code and applications use.
#pragma once

namespace parafuse::ccn::emulated {}
namespace pf = parafuse::ccn;
namespace pf_emu = parafuse::ccn::emulated;
