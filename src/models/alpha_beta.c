/* PLACEHOLDER-UNWRITTEN: models/alpha_beta.c is written by its owner; delete this line. */
typedef int cs_unwritten_alpha_beta;
