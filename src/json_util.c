/* PLACEHOLDER-UNWRITTEN: json_util.c is written by its owner; delete this line. */
typedef int cs_unwritten_json_util;
