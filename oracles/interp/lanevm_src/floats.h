/* One lane of each float and shift helper of oracles/interp/floats.py, bit for bit as numpy
 * computes it on x86-64 (numpy is the reference; tests/oracles/interp/test_lanevm_run.py
 * compares every op with it). Lanes are uint64 rows; f32(x) reads the low 32 bits as a
 * float32, f16(x) the low 16 as a half; results are raw bits with every NaN canonical.
 *
 * Static inline so that run.c's lane loops make no call per lane. Half conversions are
 * written from bits (round to nearest even, subnormals kept, as numpy's npy_half code and
 * the F16C instructions round) rather than through _Float16, whose conversions go through
 * libgcc and are not what numpy calls.
 */
#ifndef AGXFUZZ_LANEVM_FLOATS_H
#define AGXFUZZ_LANEVM_FLOATS_H

#include <stdint.h>
#include <string.h>

#define CANONICAL_NAN32 0x7fc00000u
#define CANONICAL_NAN16 0x7e00u

static inline uint32_t
bits_of_float(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static inline float
float_of_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline uint64_t
bits_of_double(double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static inline double
double_of_bits(uint64_t bits)
{
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Exact: every half is a float. */
static inline float
half_to_float(uint64_t lane)
{
    const uint32_t sign = ((uint32_t)lane & 0x8000u) << 16;
    const uint32_t exponent = ((uint32_t)lane >> 10) & 0x1f;
    uint32_t mantissa = (uint32_t)lane & 0x3ff;
    if (exponent == 0x1f)
        return float_of_bits(sign | 0x7f800000u | (mantissa << 13));
    if (exponent != 0)
        return float_of_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
    if (mantissa == 0)
        return float_of_bits(sign);
    /* A subnormal half, mantissa * 2**-24: normalise it so bit 10 is the leading one. */
    const int shift = __builtin_clz(mantissa) - 21;
    mantissa <<= shift;
    return float_of_bits(sign | ((uint32_t)(113 - shift) << 23) | ((mantissa & 0x3ff) << 13));
}

/* Rounds `value`'s bits right by `shift` to nearest, ties to even. */
#define ROUND_SHIFT_RNE(value, shift, one)                                          \
    (((value) >> (shift)) +                                                         \
     ((((value) & (((one) << (shift)) - 1)) > ((one) << ((shift) - 1))) |           \
      ((((value) & (((one) << (shift)) - 1)) == ((one) << ((shift) - 1))) &         \
       (((value) >> (shift)) & 1))))

static inline uint64_t
float_to_half(float value)
{
    const uint32_t bits = bits_of_float(value);
    const uint32_t sign = (bits >> 16) & 0x8000u;
    const uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u)
        return CANONICAL_NAN16;
    if (magnitude >= 0x477ff000u) /* 65520 and above round to infinity */
        return sign | 0x7c00u;
    if (magnitude >= 0x38800000u) { /* 2**-14 and above: a normal half */
        /* Rebias the exponent and keep 10 mantissa bits; a carry out of the mantissa
         * correctly bumps the exponent. */
        const uint32_t rebased = magnitude - (112u << 23);
        return sign | (uint32_t)ROUND_SHIFT_RNE(rebased, 13, 1u);
    }
    if (magnitude <= 0x33000000u) /* 2**-25 and below: zero (2**-25 ties to even) */
        return sign;
    const uint32_t exponent = magnitude >> 23;
    const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent; /* 14..24: into units of 2**-24 */
    return sign | (uint32_t)ROUND_SHIFT_RNE(significand, shift, 1u);
}

static inline uint64_t
double_to_half(double value)
{
    const uint64_t bits = bits_of_double(value);
    const uint64_t sign = (bits >> 48) & 0x8000u;
    const uint64_t magnitude = bits & 0x7fffffffffffffffull;
    if (magnitude > 0x7ff0000000000000ull)
        return CANONICAL_NAN16;
    if (magnitude >= 0x40effe0000000000ull) /* 65520 and above */
        return sign | 0x7c00u;
    if (magnitude >= 0x3f10000000000000ull) { /* 2**-14 and above */
        const uint64_t rebased = magnitude - (1008ull << 52);
        return sign | ROUND_SHIFT_RNE(rebased, 42, 1ull);
    }
    if (magnitude <= 0x3e60000000000000ull) /* 2**-25 and below */
        return sign;
    const uint64_t exponent = magnitude >> 52;
    const uint64_t significand = (magnitude & 0xfffffffffffffull) | (1ull << 52);
    const uint64_t shift = 1051 - exponent; /* 43..53 */
    return sign | ROUND_SHIFT_RNE(significand, shift, 1ull);
}

static inline uint64_t
canonical32(float value)
{
    return value != value ? CANONICAL_NAN32 : bits_of_float(value);
}

static inline float
lane_float(uint64_t lane, int64_t fw)
{
    return fw == 32 ? float_of_bits((uint32_t)lane) : half_to_float(lane);
}

static inline uint64_t
lane_isnan(uint64_t lane, int64_t fw)
{
    return fw == 32 ? (lane & 0x7fffffffu) > 0x7f800000u : (lane & 0x7fffu) > 0x7c00u;
}

static inline uint64_t
lane_fadd32(uint64_t a, uint64_t b)
{
    return canonical32(float_of_bits((uint32_t)a) + float_of_bits((uint32_t)b));
}

static inline uint64_t
lane_fmul32(uint64_t a, uint64_t b)
{
    return canonical32(float_of_bits((uint32_t)a) * float_of_bits((uint32_t)b));
}

/* numpy's half add and multiply compute in float32 and round to half once. */
static inline uint64_t
lane_fadd16(uint64_t a, uint64_t b)
{
    return float_to_half(half_to_float(a) + half_to_float(b));
}

static inline uint64_t
lane_fmul16(uint64_t a, uint64_t b)
{
    return float_to_half(half_to_float(a) * half_to_float(b));
}

/* floats.ffma step by step: the product exact in float64, the float64 sum, and on lanes
 * where rounding that sum again could differ from one rounding (a midpoint of the target
 * format, or below its smallest normal) the sum rounded to odd by TwoSum. Returns the
 * float64 the final cast starts from. */
static inline double
ffma_total(double product, double addend, uint64_t below_target, uint64_t midpoint,
           double smallest_normal)
{
    double total = product + addend;
    const uint64_t total_bits = bits_of_double(total);
    const int suspect = (total_bits & below_target) == midpoint ||
                        (__builtin_fabs(total) < smallest_normal && total != 0);
    if (!suspect)
        return total;
    const double b_virtual = total - product;
    const double error = (product - (total - b_virtual)) + (addend - b_virtual);
    const int even = (total_bits & 1) == 0;
    if (error != 0 && even && __builtin_isfinite(total)) {
        /* nextafter(total, copysign(inf, error)): total is nonzero here (a zero is neither
         * a midpoint nor tiny), so one ulp away from zero when error has total's sign,
         * one ulp toward it otherwise. */
        const int away = (error > 0) == (total > 0);
        total = double_of_bits(away ? total_bits + 1 : total_bits - 1);
    }
    return total;
}

static inline uint64_t
lane_ffma32(uint64_t a, uint64_t b, uint64_t c)
{
    const double product =
        (double)float_of_bits((uint32_t)a) * (double)float_of_bits((uint32_t)b);
    const double total = ffma_total(product, (double)float_of_bits((uint32_t)c),
                                    (1ull << 29) - 1, 1ull << 28, 0x1p-126);
    return canonical32((float)total);
}

static inline uint64_t
lane_ffma16(uint64_t a, uint64_t b, uint64_t c)
{
    const double product = (double)half_to_float(a) * (double)half_to_float(b);
    const double total = ffma_total(product, (double)half_to_float(c), (1ull << 42) - 1,
                                    1ull << 41, 0x1p-14);
    return double_to_half(total);
}

static inline uint64_t
lane_fconvert(uint64_t lane, int64_t from_fw, int64_t to_fw)
{
    const float value = lane_float(lane, from_fw);
    return to_fw == 32 ? canonical32(value) : float_to_half(value);
}

static inline uint64_t
width_mask(int64_t width)
{
    return width >= 64 ? ~0ull : (1ull << width) - 1;
}

/* floats.int_to_float: a signed source sign-extends from `width` (xor/subtract), an
 * unsigned narrower one is read as int64, an unsigned 64-bit one as uint64; half goes
 * through float64. */
static inline uint64_t
lane_int_to_float(uint64_t lane, int64_t width, int64_t fw, int64_t is_signed)
{
    if (is_signed || width < 64) {
        int64_t integer;
        if (is_signed) {
            const uint64_t bit = 1ull << (width - 1);
            integer = (int64_t)((lane ^ bit) - bit);
        } else {
            integer = (int64_t)lane;
        }
        return fw == 32 ? canonical32((float)integer) : double_to_half((double)integer);
    }
    return fw == 32 ? canonical32((float)lane) : double_to_half((double)lane);
}

/* floats.float_to_int: trunc through float64, non-finite -> 0, clip to [-2**63, 2**63]
 * (2.0**63 - 1 is 2**63 in float64), astype(int64), mask. numpy's cast of 2**63 on x86-64
 * is cvttsd2si's overflow value 0x8000000000000000; C leaves that cast undefined, so it is
 * written out. Inside the range a C cast truncates exactly as trunc then cast does. */
static inline uint64_t
lane_float_to_int(uint64_t lane, int64_t fw, int64_t width)
{
    const double value = (double)lane_float(lane, fw);
    uint64_t integer;
    if (!__builtin_isfinite(value))
        integer = 0;
    else if (value >= 0x1p63 || value <= -0x1p63)
        integer = 0x8000000000000000ull;
    else
        integer = (uint64_t)(int64_t)value;
    return integer & width_mask(width);
}

/* floats.ashr: sign-extend from `width`, numpy's int64 >> (an amount of 64 or more, or a
 * negative one, fills with the sign), mask back to `width`. */
static inline uint64_t
lane_ashr(uint64_t lane, uint64_t amount, int width)
{
    const uint64_t bit = 1ull << (width - 1);
    const int64_t value = (int64_t)((lane ^ bit) - bit);
    const int64_t shifted = amount < 64 ? value >> amount : (value < 0 ? -1 : 0);
    return (uint64_t)shifted & width_mask(width);
}

#endif
