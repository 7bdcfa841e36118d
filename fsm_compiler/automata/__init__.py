"""Regexes and explicit machines to minimal DFAs: positions, subsets, byte classes, minimisation."""
