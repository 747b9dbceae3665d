/* PLACEHOLDER-UNWRITTEN: models/maxmin.c is written by its owner; delete this line. */
typedef int cs_unwritten_maxmin;
