"""parafuse: two compilers, coconetc (.ccn -> C++ with fused collectives) and boostfsm
(.fsm -> parallel finite-state machines)."""

__version__ = "0.1.0"
