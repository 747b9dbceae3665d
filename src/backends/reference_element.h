// SPDX-License-Identifier: MIT
/* The host reference one element at a time, in plain C that nvcc also compiles for the GPU:
 * reference.c builds inputs and expected outputs from these functions, and cuda_check.cu runs
 * the same ones in kernels, so that a GPU fills its own inputs and checks its own outputs
 * (as nccl-tests does, src/common.cu InitData / CheckData) with exactly the host's values.
 *
 * An element travels as its bits in a uint64_t (the datatype's storage, zero-extended).
 * Datatype and operator numbers are CsDtype and CsRedop's (cuda_backend.c asserts them). */
#pragma once

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define CS_REF_FN static inline __host__ __device__
#else
#define CS_REF_FN static inline
#endif

enum {
    CS_REF_INT8,
    CS_REF_UINT8,
    CS_REF_INT32,
    CS_REF_UINT32,
    CS_REF_INT64,
    CS_REF_UINT64,
    CS_REF_HALF,
    CS_REF_FLOAT,
    CS_REF_DOUBLE,
    CS_REF_BFLOAT16,
};

enum { CS_REF_SUM, CS_REF_PROD, CS_REF_MAX, CS_REF_MIN, CS_REF_AVG };

/* Where an expected element comes from. */
typedef enum {
    CS_REF_FROM_RANK,  /* rank @rank's input */
    CS_REF_FROM_BLOCK, /* block b (of @block elements) is rank b's input */
    CS_REF_FROM_ALL,   /* the reduction over every rank's input, rank 0 first */
} CsRefSource;

/**
 * CsRefExpect:
 * What one rank's output holds, element i of @n: the input element first + i (FROM_RANK,
 * FROM_ALL) or first + i % block (FROM_BLOCK) of the source rank(s).
 */
typedef struct {
    int64_t n;
    int64_t block;
    int64_t first;
    int32_t source; /* CsRefSource */
    int32_t rank;
    int32_t nranks;
    int32_t dtype;
    int32_t redop;
    int32_t reduces; /* the collective reduces: inputs are drawn for the operator */
} CsRefExpect;

CS_REF_FN uint32_t
cs_ref_float_bits(float value)
{
    uint32_t x;
    memcpy(&x, &value, sizeof x);
    return x;
}

CS_REF_FN float
cs_ref_bits_float(uint32_t x)
{
    float value;
    memcpy(&value, &x, sizeof value);
    return value;
}

/* IEEE binary16, round to nearest even. */
CS_REF_FN uint16_t
cs_ref_float_to_half(float value)
{
    uint32_t x = cs_ref_float_bits(value);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mant = x & 0x7fffffu;
    int exp = (int)((x >> 23) & 0xffu);

    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant != 0 ? 0x200u : 0u));
    int e = exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        /* Subnormal half: the implicit one joins the mantissa, shifted to 2^-24 units. */
        if (e < -10)
            return (uint16_t)sign;
        uint32_t full = mant | 0x800000u;
        int shift = 14 - e;
        uint32_t h = full >> shift;
        uint32_t rem = full & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    /* A carry out of the mantissa correctly bumps the exponent (up to infinity). */
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)h;
}

CS_REF_FN float
cs_ref_half_to_float(uint16_t bits)
{
    uint32_t sign = ((uint32_t)bits & 0x8000u) << 16;
    uint32_t exp = (bits >> 10) & 0x1fu;
    uint32_t mant = bits & 0x3ffu;
    uint32_t x;

    if (exp == 0x1f)
        x = sign | 0x7f800000u | (mant << 13);
    else if (exp != 0)
        x = sign | ((exp + 112u) << 23) | (mant << 13);
    else if (mant == 0)
        x = sign;
    else {
        /* Subnormal: normalise into a float, which has the range for it. */
        int e = -1;
        do {
            mant <<= 1;
            e++;
        } while ((mant & 0x400u) == 0);
        x = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
    return cs_ref_bits_float(x);
}

/* bfloat16, round to nearest even; a NaN stays a (quiet) NaN. */
CS_REF_FN uint16_t
cs_ref_float_to_bf16(float value)
{
    uint32_t x = cs_ref_float_bits(value);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

CS_REF_FN float
cs_ref_bf16_to_float(uint16_t bits)
{
    return cs_ref_bits_float((uint32_t)bits << 16);
}

/* splitmix64's finaliser: a well-mixed hash of (rank, index). */
CS_REF_FN uint64_t
cs_ref_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Input element @index of @rank: small integers, so that sums, products (at most one factor 2
 * per element) and extrema are exact in every type and any order while P * 7 stays in range. */
CS_REF_FN int64_t
cs_ref_input_value(int reduces, int redop, int rank, int nranks, int64_t index)
{
    uint64_t h = cs_ref_mix(((uint64_t)(uint32_t)rank << 40) ^ (uint64_t)index);

    if (!reduces)
        return (int64_t)(h % 64);
    switch (redop) {
    case CS_REF_PROD: {
        int64_t v = (h % 4 == 0) ? -1 : 1;
        if (index % nranks == rank)
            v *= 2;
        return v;
    }
    case CS_REF_MAX:
    case CS_REF_MIN:
        return (int64_t)(h % 64);
    default:
        return (int64_t)(h % 8);
    }
}

CS_REF_FN int
cs_ref_dtype_size(int dtype)
{
    switch (dtype) {
    case CS_REF_INT8:
    case CS_REF_UINT8:
        return 1;
    case CS_REF_HALF:
    case CS_REF_BFLOAT16:
        return 2;
    case CS_REF_INT32:
    case CS_REF_UINT32:
    case CS_REF_FLOAT:
        return 4;
    default:
        return 8;
    }
}

/* @value in @dtype's storage. */
CS_REF_FN uint64_t
cs_ref_encode(int dtype, int64_t value)
{
    switch (dtype) {
    case CS_REF_INT8:
    case CS_REF_UINT8:
        return (uint8_t)value;
    case CS_REF_INT32:
    case CS_REF_UINT32:
        return (uint32_t)value;
    case CS_REF_HALF:
        return cs_ref_float_to_half((float)value);
    case CS_REF_BFLOAT16:
        return cs_ref_float_to_bf16((float)value);
    case CS_REF_FLOAT:
        return cs_ref_float_bits((float)value);
    case CS_REF_DOUBLE: {
        double d = (double)value;
        uint64_t x;
        memcpy(&x, &d, sizeof x);
        return x;
    }
    default:
        return (uint64_t)value;
    }
}

CS_REF_FN uint64_t
cs_ref_load(int dtype, const void *buf, int64_t i)
{
    switch (cs_ref_dtype_size(dtype)) {
    case 1:
        return ((const uint8_t *)buf)[i];
    case 2:
        return ((const uint16_t *)buf)[i];
    case 4:
        return ((const uint32_t *)buf)[i];
    default:
        return ((const uint64_t *)buf)[i];
    }
}

CS_REF_FN void
cs_ref_store(int dtype, void *buf, int64_t i, uint64_t bits)
{
    switch (cs_ref_dtype_size(dtype)) {
    case 1:
        ((uint8_t *)buf)[i] = (uint8_t)bits;
        break;
    case 2:
        ((uint16_t *)buf)[i] = (uint16_t)bits;
        break;
    case 4:
        ((uint32_t *)buf)[i] = (uint32_t)bits;
        break;
    default:
        ((uint64_t *)buf)[i] = bits;
        break;
    }
}

/* The element as a double (floating types only). */
CS_REF_FN double
cs_ref_as_double(int dtype, uint64_t bits)
{
    switch (dtype) {
    case CS_REF_HALF:
        return cs_ref_half_to_float((uint16_t)bits);
    case CS_REF_BFLOAT16:
        return cs_ref_bf16_to_float((uint16_t)bits);
    case CS_REF_FLOAT:
        return cs_ref_bits_float((uint32_t)bits);
    default: {
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    }
}

#define CS_REF_APPLY(redop, x, y)                                                                  \
    ((redop) == CS_REF_PROD  ? (x) * (y)                                                           \
     : (redop) == CS_REF_MAX ? ((x) > (y) ? (x) : (y))                                             \
     : (redop) == CS_REF_MIN ? ((x) < (y) ? (x) : (y))                                             \
                             : (x) + (y))

/* a (+) b as the host reference reduces (reference.c): integers wrap through their unsigned
 * twin, half and bfloat16 compute in float and round; AVG sums (the division comes last). */
CS_REF_FN uint64_t
cs_ref_combine(int dtype, int redop, uint64_t a, uint64_t b)
{
    switch (dtype) {
    case CS_REF_INT8: {
        int8_t x = (int8_t)(uint8_t)a, y = (int8_t)(uint8_t)b;
        if (redop == CS_REF_MAX || redop == CS_REF_MIN)
            return (uint8_t)CS_REF_APPLY(redop, x, y);
        return (uint8_t)CS_REF_APPLY(redop, (uint8_t)a, (uint8_t)b);
    }
    case CS_REF_UINT8:
        return (uint8_t)CS_REF_APPLY(redop, (uint8_t)a, (uint8_t)b);
    case CS_REF_INT32: {
        int32_t x = (int32_t)(uint32_t)a, y = (int32_t)(uint32_t)b;
        if (redop == CS_REF_MAX || redop == CS_REF_MIN)
            return (uint32_t)CS_REF_APPLY(redop, x, y);
        return (uint32_t)CS_REF_APPLY(redop, (uint32_t)a, (uint32_t)b);
    }
    case CS_REF_UINT32:
        return (uint32_t)CS_REF_APPLY(redop, (uint32_t)a, (uint32_t)b);
    case CS_REF_INT64: {
        int64_t x = (int64_t)a, y = (int64_t)b;
        if (redop == CS_REF_MAX || redop == CS_REF_MIN)
            return (uint64_t)CS_REF_APPLY(redop, x, y);
        return CS_REF_APPLY(redop, a, b);
    }
    case CS_REF_UINT64:
        return CS_REF_APPLY(redop, a, b);
    case CS_REF_HALF: {
        float x = cs_ref_half_to_float((uint16_t)a), y = cs_ref_half_to_float((uint16_t)b);
        return cs_ref_float_to_half(CS_REF_APPLY(redop, x, y));
    }
    case CS_REF_BFLOAT16: {
        float x = cs_ref_bf16_to_float((uint16_t)a), y = cs_ref_bf16_to_float((uint16_t)b);
        return cs_ref_float_to_bf16(CS_REF_APPLY(redop, x, y));
    }
    case CS_REF_FLOAT: {
        float x = cs_ref_bits_float((uint32_t)a), y = cs_ref_bits_float((uint32_t)b);
        return cs_ref_float_bits(CS_REF_APPLY(redop, x, y));
    }
    default: {
        double x, y;
        memcpy(&x, &a, sizeof x);
        memcpy(&y, &b, sizeof y);
        double r = CS_REF_APPLY(redop, x, y);
        uint64_t bits;
        memcpy(&bits, &r, sizeof bits);
        return bits;
    }
    }
}

/* The end of an average: C division for integers, the type's own for floating types. */
CS_REF_FN uint64_t
cs_ref_divide(int dtype, uint64_t a, int divisor)
{
    switch (dtype) {
    case CS_REF_INT8:
        return (uint8_t)(int8_t)((int8_t)(uint8_t)a / divisor);
    case CS_REF_UINT8:
        return (uint8_t)((uint8_t)a / (uint32_t)divisor);
    case CS_REF_INT32:
        return (uint32_t)((int32_t)(uint32_t)a / divisor);
    case CS_REF_UINT32:
        return (uint32_t)a / (uint32_t)divisor;
    case CS_REF_INT64:
        return (uint64_t)((int64_t)a / (int64_t)divisor);
    case CS_REF_UINT64:
        return a / (uint64_t)divisor;
    case CS_REF_HALF:
        return cs_ref_float_to_half(cs_ref_half_to_float((uint16_t)a) / (float)divisor);
    case CS_REF_BFLOAT16:
        return cs_ref_float_to_bf16(cs_ref_bf16_to_float((uint16_t)a) / (float)divisor);
    case CS_REF_FLOAT:
        return cs_ref_float_bits(cs_ref_bits_float((uint32_t)a) / (float)divisor);
    default: {
        double d;
        memcpy(&d, &a, sizeof d);
        d /= (double)divisor;
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        return bits;
    }
    }
}

CS_REF_FN uint64_t
cs_ref_input_bits(const CsRefExpect *e, int rank, int64_t index)
{
    return cs_ref_encode(e->dtype,
                         cs_ref_input_value(e->reduces, e->redop, rank, e->nranks, index));
}

/* Element @i of the output @e describes. */
CS_REF_FN uint64_t
cs_ref_expected(const CsRefExpect *e, int64_t i)
{
    if (e->source == CS_REF_FROM_BLOCK)
        return cs_ref_input_bits(e, (int)(i / e->block), e->first + i % e->block);
    if (e->source == CS_REF_FROM_RANK)
        return cs_ref_input_bits(e, e->rank, e->first + i);
    uint64_t acc = cs_ref_input_bits(e, 0, e->first + i);
    for (int q = 1; q < e->nranks; q++)
        acc = cs_ref_combine(e->dtype, e->redop, acc, cs_ref_input_bits(e, q, e->first + i));
    if (e->redop == CS_REF_AVG)
        acc = cs_ref_divide(e->dtype, acc, e->nranks);
    return acc;
}

/* Whether @got is wrong against @expected: integers must be equal; floating types within
 * P + 2 units of the type's epsilon relative to max(1, |expected|) (one rounding per reduction
 * step at most, and NCCL's pre-scaled average). */
CS_REF_FN int
cs_ref_wrong(int dtype, int nranks, uint64_t got, uint64_t expected)
{
    double eps;
    switch (dtype) {
    case CS_REF_HALF:
        eps = 0x1p-10;
        break;
    case CS_REF_BFLOAT16:
        eps = 0x1p-7;
        break;
    case CS_REF_FLOAT:
        eps = 0x1p-23;
        break;
    case CS_REF_DOUBLE:
        eps = 0x1p-52;
        break;
    default:
        return got != expected;
    }
    double g = cs_ref_as_double(dtype, got);
    double x = cs_ref_as_double(dtype, expected);
    double scale = x > 1.0 || x < -1.0 ? (x < 0 ? -x : x) : 1.0;
    double diff = g - x;
    return !((diff < 0 ? -diff : diff) <= eps * (double)(nranks + 2) * scale);
}
