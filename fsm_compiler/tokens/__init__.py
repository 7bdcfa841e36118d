"""Token sets: their tokenizer DFA, its reference tokenizer and what the analysis measures of it."""
