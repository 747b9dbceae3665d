/* PLACEHOLDER-UNWRITTEN: cli_common.c is written by its owner; delete this line. */
typedef int cs_unwritten_cli_common;
