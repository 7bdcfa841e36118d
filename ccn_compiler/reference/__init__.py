"""The reference interpreter of .ccn programs (numpy, every rank in one process), the
runner contract's files, and when two results agree: the meaning every backend is
checked against."""
