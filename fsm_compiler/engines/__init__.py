"""Pattern sets too big for one DFA as several engines: DFAs, bit-parallel NFAs, prefilters."""
