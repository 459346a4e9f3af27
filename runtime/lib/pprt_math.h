/* The few math functions the runtime needs, so libpprt.a never needs -lm. */
#ifndef PPRT_MATH_H
#define PPRT_MATH_H

#include <stdint.h>

/* Square root of x >= 0 by Newton's method from above, which stops where
   an iteration no longer decreases (within an ulp of the exact root). */
static inline double pprt_sqrt(double x) {
  if (x <= 0.0)
    return 0.0;
  /* Halving the exponent bits guesses within a factor of 1.1, so a few
     iterations suffice; one iteration from any guess lands above. */
  union {
    double d;
    uint64_t u;
  } guess = {x};
  guess.u = (guess.u >> 1) + 0x1FF8000000000000ull;
  double r = 0.5 * (guess.d + x / guess.d);
  for (int i = 0; i < 200; ++i) {
    double next = 0.5 * (r + x / r);
    if (next >= r)
      break;
    r = next;
  }
  return r;
}

/* exp(-y) for 0 <= y <= 64: exp(-r) * 2^-k with |r| <= ln2/2. */
static inline double pprt_exp_neg(double y) {
  const double ln2 = 0.69314718055994530942;
  int k = (int)(y / ln2 + 0.5);
  double r = y - k * ln2;
  double term = 1.0, sum = 1.0;
  for (int n = 1; n <= 18; ++n) {
    term *= -r / n;
    sum += term;
  }
  for (int i = 0; i < k; ++i)
    sum *= 0.5;
  return sum;
}

static inline double pprt_tanh(double x) {
  double ax = x < 0 ? -x : x;
  if (ax > 20.0)
    return x < 0 ? -1.0 : 1.0;
  double e = pprt_exp_neg(2.0 * ax);
  double t = (1.0 - e) / (1.0 + e);
  return x < 0 ? -t : t;
}

/* base^n for n >= 0 by repeated squaring. */
static inline double pprt_powi(double base, int64_t n) {
  double result = 1.0;
  for (; n > 0; n >>= 1, base *= base)
    if (n & 1)
      result *= base;
  return result;
}

static inline uint64_t pprt_splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Counter-based: a value depends only on its coordinates, so every
   process derives identical numbers without sharing any state. */
static inline uint64_t pprt_hash(uint64_t seed, const uint64_t *keys, int n) {
  uint64_t h = pprt_splitmix64(seed);
  for (int i = 0; i < n; ++i)
    h = pprt_splitmix64(h ^ keys[i]);
  return h;
}

#endif /* PPRT_MATH_H */
