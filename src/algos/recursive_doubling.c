/* PLACEHOLDER-UNWRITTEN: algos/recursive_doubling.c is written by its owner; delete this line. */
typedef int cs_unwritten_recursive_doubling;
