/* PLACEHOLDER-UNWRITTEN: algos/algo.c is written by its owner; delete this line. */
typedef int cs_unwritten_algo;
