// Shared helpers of the CPU kernels: portable SIMD vectors (GCC/Clang vector extensions),
// vectorised exp / log1p / sigmoid, and the lane reduction used by the scan's backward pass.
//
// The library is compiled on the user's machine with -march=native (paperworks_kernels/cpu/build.py),
// so PW_VL follows the widest float vector it has: 16 lanes with AVX-512, else 8 (AVX2, NEON as two
// 128-bit registers, or plain SSE). Nothing here depends on an ISA; any4_gemm.cpp adds x86 intrinsics.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__)
#define PW_VL 16
#else
#define PW_VL 8
#endif

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define PW_HAS_SHUFFLEVECTOR 1
#endif
#endif

namespace pw {

constexpr int VL = PW_VL;

// Vector of VL lanes of T, and the same-width integer type its comparisons return.
template <typename T>
struct Vec;
template <>
struct Vec<float> {
    typedef float type __attribute__((vector_size(PW_VL * 4)));
    typedef int32_t mask __attribute__((vector_size(PW_VL * 4)));
};
template <>
struct Vec<double> {
    typedef double type __attribute__((vector_size(PW_VL * 8)));
    typedef int64_t mask __attribute__((vector_size(PW_VL * 8)));
};

template <typename T>
using V = typename Vec<T>::type;
template <typename T>
using M = typename Vec<T>::mask;

template <typename T>
static inline V<T> vset(T a) {
    V<T> v = {};
    return v + a;
}

template <typename T>
static inline V<T> vload(const T* p) {
    V<T> v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <typename T>
static inline void vstore(T* p, V<T> v) {
    std::memcpy(p, &v, sizeof v);
}

template <typename T>
static inline V<T> vsel(M<T> m, V<T> a, V<T> b) {  // m ? a : b, lane by lane (m is 0 or all ones)
    return (V<T>)(((M<T>)a & m) | ((M<T>)b & ~m));
}

template <typename T>
static inline V<T> vmax(V<T> a, V<T> b) {
    return vsel<T>(a > b, a, b);
}

template <typename T>
static inline V<T> vmin(V<T> a, V<T> b) {
    return vsel<T>(a < b, a, b);
}

template <typename T>
static inline V<T> vabs(V<T> a) {
    return vsel<T>(a < 0, -a, a);
}

// exp: Cephes' single-precision expf (range reduction by ln 2 in two parts, degree-6 polynomial),
// relative error about 2 ulp. Arguments are clamped to [-87.3, 88]: below, exp is < 1.2e-38 and the
// result is that bound instead of a denormal or 0.
static inline V<float> vexp(V<float> x) {
    x = vmin<float>(vmax<float>(x, vset(-87.33654f)), vset(88.0f));
    const V<float> magic = vset(12582912.0f);  // 1.5·2^23: adding it rounds to an integer
    V<float> t = x * 1.44269504088896341f + magic;
    V<float> n = t - magic;
    M<float> ni = (M<float>)t - (M<float>)magic;  // the same integer, from the bits
    V<float> r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    V<float> p = vset(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    M<float> e = (ni + 127) << 23;
    return p * (V<float>)e;
}

// log1p(u) for u in [0, 1]: Cephes' logf on w = 1 + u (reduced to [√½, √2)), plus the rounding
// error of 1 + u divided by w: (u − (w − 1))/w, with 1/w ≈ 1.5 − w/2 (exact at w = 1; the term is
// below one ulp of w, so the approximation's error stays below 2e-8 absolute). No division.
static inline V<float> vlog1p_unit(V<float> u) {
    V<float> w = u + 1.0f;
    M<float> big = w > 1.41421356f;
    V<float> m = vsel<float>(big, w * 0.5f, w);
    V<float> e = vsel<float>(big, vset(1.0f), vset(0.0f));
    V<float> f = m - 1.0f;
    V<float> z = f * f;
    V<float> y = vset(7.0376836292e-2f);
    y = y * f - 1.1514610310e-1f;
    y = y * f + 1.1676998740e-1f;
    y = y * f - 1.2420140846e-1f;
    y = y * f + 1.4249322787e-1f;
    y = y * f - 1.6668057665e-1f;
    y = y * f + 2.0000714765e-1f;
    y = y * f - 2.4999993993e-1f;
    y = y * f + 3.3333331174e-1f;
    y = y * f * z;
    y = y + e * -2.12194440e-4f;
    y = y - z * 0.5f;
    V<float> lg = f + y + e * 0.693359375f;
    return lg + (u - (w - 1.0f)) * (1.5f - 0.5f * w);
}

// Double precision (the float64 path exists for gradcheck, not for speed): libm lane by lane.
static inline V<double> vexp(V<double> x) {
    V<double> r;
    for (int i = 0; i < VL; ++i) r[i] = std::exp(x[i]);
    return r;
}

static inline V<double> vlog1p_unit(V<double> u) {
    V<double> r;
    for (int i = 0; i < VL; ++i) r[i] = std::log1p(u[i]);
    return r;
}

// softplus(x) = max(x, 0) + log1p(e^{-|x|}) and, with SIG, its derivative sigmoid(x) (sharing e^{-|x|}).
// torch returns x itself above 20; the difference there is log1p(e^{-20}) ≈ 2e-9.
template <typename T, bool SIG>
static inline void vsoftplus(V<T> x, V<T>& sp, V<T>& sig) {
    V<T> e = vexp(-vabs<T>(x));
    sp = vmax<T>(x, vset<T>(0)) + vlog1p_unit(e);
    if (SIG) {
        V<T> inv = (T)1 / (e + (T)1);
        sig = vsel<T>(x >= 0, inv, e * inv);
    }
}

template <typename T>
static inline V<T> vsigmoid(V<T> x) {
    V<T> e = vexp(-vabs<T>(x));
    V<T> inv = (T)1 / (e + (T)1);
    return vsel<T>(x >= 0, inv, e * inv);
}

// out[i] = sum of the lanes of v[i], i < VL (a transpose-and-add tree: about three operations per
// vector instead of a horizontal sum each).
template <typename T>
static inline void reduce_lanes(const V<T>* v, T* out) {
#if defined(PW_HAS_SHUFFLEVECTOR)
#define SH __builtin_shufflevector
#if PW_VL == 16
    V<T> w[8], x[4], y[2];
    for (int i = 0; i < 8; ++i)
        w[i] = SH(v[2 * i], v[2 * i + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
               SH(v[2 * i], v[2 * i + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    for (int i = 0; i < 4; ++i)
        x[i] = SH(w[2 * i], w[2 * i + 1], 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27) +
               SH(w[2 * i], w[2 * i + 1], 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
    for (int i = 0; i < 2; ++i)
        y[i] = SH(x[2 * i], x[2 * i + 1], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29) +
               SH(x[2 * i], x[2 * i + 1], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    V<T> z = SH(y[0], y[1], 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30) +
             SH(y[0], y[1], 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
    vstore<T>(out, SH(z, z, 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15));
#else
    V<T> w[4], x[2];
    for (int i = 0; i < 4; ++i)
        w[i] = SH(v[2 * i], v[2 * i + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
               SH(v[2 * i], v[2 * i + 1], 4, 5, 6, 7, 12, 13, 14, 15);
    for (int i = 0; i < 2; ++i)
        x[i] = SH(w[2 * i], w[2 * i + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
               SH(w[2 * i], w[2 * i + 1], 2, 3, 10, 11, 6, 7, 14, 15);
    V<T> z = SH(x[0], x[1], 0, 8, 2, 10, 4, 12, 6, 14) + SH(x[0], x[1], 1, 9, 3, 11, 5, 13, 7, 15);
    vstore<T>(out, SH(z, z, 0, 4, 2, 6, 1, 5, 3, 7));
#endif
#undef SH
#else
    for (int i = 0; i < VL; ++i) {
        T s = 0;
        for (int j = 0; j < VL; ++j) s += v[i][j];
        out[i] = s;
    }
#endif
}

// In-place transpose of the VL×VL matrix whose rows are r[0..VL): afterwards r[i][j] is the old r[j][i]
// (log2(VL) rounds of two-source shuffles that swap the off-diagonal blocks).
template <typename T>
static inline void transpose(V<T>* r) {
#if defined(PW_HAS_SHUFFLEVECTOR)
#define SH __builtin_shufflevector
#if PW_VL == 16
    for (int i = 0; i < 16; ++i) {
        if (i & 8) continue;
        const V<T> a = r[i], b = r[i + 8];
        r[i] = SH(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
        r[i + 8] = SH(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    }
    for (int i = 0; i < 16; ++i) {
        if (i & 4) continue;
        const V<T> a = r[i], b = r[i + 4];
        r[i] = SH(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
        r[i + 4] = SH(a, b, 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
    }
    for (int i = 0; i < 16; ++i) {
        if (i & 2) continue;
        const V<T> a = r[i], b = r[i + 2];
        r[i] = SH(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
        r[i + 2] = SH(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    }
    for (int i = 0; i < 16; ++i) {
        if (i & 1) continue;
        const V<T> a = r[i], b = r[i + 1];
        r[i] = SH(a, b, 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
        r[i + 1] = SH(a, b, 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
    }
#else
    for (int i = 0; i < 8; ++i) {
        if (i & 4) continue;
        const V<T> a = r[i], b = r[i + 4];
        r[i] = SH(a, b, 0, 1, 2, 3, 8, 9, 10, 11);
        r[i + 4] = SH(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
    }
    for (int i = 0; i < 8; ++i) {
        if (i & 2) continue;
        const V<T> a = r[i], b = r[i + 2];
        r[i] = SH(a, b, 0, 1, 8, 9, 4, 5, 12, 13);
        r[i + 2] = SH(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (int i = 0; i < 8; ++i) {
        if (i & 1) continue;
        const V<T> a = r[i], b = r[i + 1];
        r[i] = SH(a, b, 0, 8, 2, 10, 4, 12, 6, 14);
        r[i + 1] = SH(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
    }
#endif
#undef SH
#else
    T tmp[VL][VL];
    for (int i = 0; i < VL; ++i)
        for (int j = 0; j < VL; ++j) tmp[j][i] = r[i][j];
    for (int i = 0; i < VL; ++i) r[i] = vload<T>(tmp[i]);
#endif
}

}  // namespace pw
