// Packed 4-bit LUT GEMV/GEMM on the CPU: y (M×N) = x (M×K) · Ŵᵀ with
//   ŵ[n, k] = lut[n, code[n, k]] · s[k/g, n] + zero[k/g, n]
// from the operands of paperworks_kernels/any4_gemm/packing.py (codes two per byte, low nibble =
// even k; LUT (N, 16) per row or (16,) global; scales_and_zeros (K/g, N, 2)). Covers any4, int4,
// nf4 and fp4 alike: they differ only in the table.
//
// Code paths, chosen per call:
// * M = 1, K a multiple of 128 and g = 64 or a multiple of 128, on AVX-512 (VL): the 128-weight GEMV
//   (gemv128_rows): the same trick on 64 bytes and 16 lanes, _mm512_permutexvar_ps on a one-register table.
// * g a multiple of 64 on AVX-512 (VL): the 64-weight path. 32 bytes of codes are loaded as 8 dwords;
//   shifting them right by 4j puts the code of k = 8i + j in the low nibble of lane i, and
//   _mm256_permutex2var_ps looks 8 codes up in the row's 16-entry table held in two registers.
// * g a multiple of 32 (AVX-512 or AVX2): 16 bytes widened to 16 (AVX2: 2 × 8) dwords; the low and
//   the high nibbles are looked up with _mm512_permutexvar_ps (AVX2: two 8-entry permutes and a blend).
// * anything else, or a CPU without those: plain loops.
// The activations are reordered once per call to meet the codes in that order. M = 1 walks 4 rows at
// a time through all groups, accumulating Σ lut·x per group and applying the group's scale once
// (Σ ŵ·x = s·Σ lut·x + zero·Σ x), tables and sums in registers. M > 1 dequantizes each block of codes
// in registers (ŵ = lut·s + zero) and reuses it for up to 8 activation rows. Parallel over blocks of
// 64 output rows (OpenMP; nthreads = torch.get_num_threads()).
//
// Memory traffic, for a GEMV whose weights come from DRAM (every layer of a decode step in a model
// larger than the caches): the SIMD paths read the scales from a copy blocked by 4 rows (szb, made
// once per layer by cpu.py: +8 bytes per row and group, the size of scales_and_zeros again), one
// sequential stream beside the block's 4 code streams, where the (K/g, N, 2) layout costs a cache
// line per group at a stride of 8·N bytes; and they prefetch the codes, scales and tables of the block
// about 4 KiB ahead in software (the hardware prefetchers alone left the GEMV at a third of the
// bandwidth a dense GEMV gets). The codes themselves are read in place, in their packed layout.
#include <algorithm>
#include <vector>

#include "common.h"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace pw {
namespace {

struct Gemm {
    int64_t M, N, K, g;
    const float* x;
    int64_t sxm;
    const uint8_t* packed;
    const float* lut;
    int64_t row_lut;
    const float* sz;
    float* y;
    const float* bias;  // (N,) or null
    const float* xd;    // activations reordered for the SIMD path (M × K)
    const float* xs;    // Σ x per group (M × K/g)
    const float* szb;   // the SIMD paths' copy of the scales, blocked by 4 rows (see PwAny4Layer)
    int64_t pf_rows;    // how far ahead (in rows, a multiple of 4) the SIMD paths prefetch
    int64_t G;          // K / g (kept: no division in the inner loops)
};

inline float scale(const Gemm& a, int64_t q, int64_t n) { return a.sz[(q * a.N + n) * 2]; }
inline float zero(const Gemm& a, int64_t q, int64_t n) { return a.sz[(q * a.N + n) * 2 + 1]; }
inline const float* table(const Gemm& a, int64_t n) { return a.row_lut ? a.lut + n * 16 : a.lut; }
inline float bias(const Gemm& a, int64_t n) { return a.bias ? a.bias[n] : 0.0f; }
// The blocked copy: per block of 4 rows and per group, s of the 4 rows then zero of the 4 rows.
inline const float* block_sz(const Gemm& a, int64_t n) { return a.szb + (n >> 2) * a.G * 8; }

#if defined(__AVX512F__) || defined(__AVX2__)
// prefetcht0 as an asm statement: GCC 12 left every __builtin_prefetch (_mm_prefetch) of these helpers
// out of the compiled code (a prefetch has no effect the compiler must keep).
inline void prefetch(const void* p) { asm volatile("prefetcht0 %0" : : "m"(*(const char*)p)); }

// One SIMD block of R ≤ 4 rows starting at n0 (all in one 4-row block of szb): where its scales are,
// and what it prefetches. The hardware prefetchers alone follow a block's R code streams too late: a
// GEMV with its weights in DRAM ran at a third of the bandwidth a dense GEMV gets (docs/bench/any4.md).
// So while computing rows [n0, n0 + R) the walk prefetches the R rows pf_rows further on: their codes
// are contiguous (R·K/2 bytes) and each step of the walk, which reads B bytes of each of its R rows,
// prefetches the next R·B bytes of them (in step with it: the walk's last step reaches their end); each
// group prefetches their blocked scales of that group, and the start their tables.
template <int R>
struct Block {
    const float* sz;     // scales of row n0 in group q: sz[8q], zeros: sz[8q + 4]
    const char* codes;   // the next codes to prefetch, of the rows ahead (this block's own at the end)
    const float* ahead;  // their blocked scales

    Block(const Gemm& a, int64_t n0) {
        const int64_t nf = n0 + a.pf_rows + R <= a.N ? n0 + a.pf_rows : n0;
        sz = block_sz(a, n0) + (n0 & 3);
        codes = (const char*)(a.packed + nf * (a.K / 2));
        ahead = block_sz(a, nf);
        if (a.row_lut)
            for (int o = 0; o < R * 64; o += 64) prefetch((const char*)(a.lut + nf * 16) + o);
    }
    float s(int64_t q, int r) const { return sz[8 * q + r]; }
    float z(int64_t q, int r) const { return sz[8 * q + 4 + r]; }
    void group(int64_t q) const { prefetch(ahead + 8 * q); }
    template <int B>  // one step that reads B bytes of codes per row
    void step() {
        constexpr int bytes = R * B;
        if (bytes >= 64) {
            for (int o = 0; o < bytes; o += 64) prefetch(codes + o);
        } else if (((uintptr_t)codes & 63) < bytes) {  // the step that enters a new line
            prefetch(codes);
        }
        codes += bytes;
    }
};
#endif

// Plain loops (any CPU, any even g): rows [n0, n1).
void rows_scalar(const Gemm& a, int64_t n0, int64_t n1) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    for (int64_t n = n0; n < n1; ++n) {
        const float* t = table(a, n);
        const uint8_t* p = a.packed + n * half;
        for (int64_t m = 0; m < a.M; ++m) {
            const float* x = a.x + m * a.sxm;
            double acc = 0;  // the reference sums in fp32 through a matmul; double keeps this path exact enough
            for (int64_t q = 0; q < G; ++q) {
                float part = 0, xsum = 0;
                for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 2) {
                    const uint8_t b = p[k / 2];
                    part += t[b & 15] * x[k] + t[b >> 4] * x[k + 1];
                    xsum += x[k] + x[k + 1];
                }
                acc += (double)scale(a, q, n) * part + (double)zero(a, q, n) * xsum;
            }
            a.y[m * a.N + n] = (float)acc + bias(a, n);
        }
    }
}

#if defined(__AVX512F__)
constexpr bool SIMD = true;

// xd: per 32 k, the 16 even-k values then the 16 odd-k values.
void reorder_x(const float* x, float* xd, int64_t K) {
    for (int64_t j = 0; j < K; j += 32)
        for (int i = 0; i < 16; ++i) {
            xd[j + i] = x[j + 2 * i];
            xd[j + 16 + i] = x[j + 2 * i + 1];
        }
}

inline float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }

template <int R>
void gemv_block(const Gemm& a, int64_t n0) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    __m512 tb[R], tot[R];
    float zs[R];
    const uint8_t* p[R];
    for (int r = 0; r < R; ++r) {
        tb[r] = _mm512_loadu_ps(table(a, n0 + r));
        tot[r] = _mm512_setzero_ps();
        zs[r] = 0;
        p[r] = a.packed + (n0 + r) * half;
    }
    Block<R> blk(a, n0);
    for (int64_t q = 0; q < G; ++q) {
        blk.group(q);
        __m512 ae[R], ao[R];
        for (int r = 0; r < R; ++r) ae[r] = ao[r] = _mm512_setzero_ps();
        for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 32) {
            blk.template step<16>();
            const __m512 xe = _mm512_loadu_ps(a.xd + k), xo = _mm512_loadu_ps(a.xd + k + 16);
            for (int r = 0; r < R; ++r) {
                const __m512i c = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)(p[r] + k / 2)));
                ae[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(c, tb[r]), xe, ae[r]);
                ao[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(c, 4), tb[r]), xo, ao[r]);
            }
        }
        const float xs = a.xs[q];
        for (int r = 0; r < R; ++r) {
            tot[r] = _mm512_fmadd_ps(_mm512_add_ps(ae[r], ao[r]), _mm512_set1_ps(blk.s(q, r)), tot[r]);
            zs[r] += blk.z(q, r) * xs;
        }
    }
    for (int r = 0; r < R; ++r) a.y[n0 + r] = hsum(tot[r]) + zs[r] + bias(a, n0 + r);
}

// R rows × MB activation rows; the weights of a 32-k block are dequantized once and used MB times.
template <int R, int MB>
void gemm_block(const Gemm& a, int64_t n0, int64_t m0) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    __m512 tb[R], acc[R * MB];
    const uint8_t* p[R];
    for (int r = 0; r < R; ++r) {
        tb[r] = _mm512_loadu_ps(table(a, n0 + r));
        p[r] = a.packed + (n0 + r) * half;
    }
    for (int i = 0; i < R * MB; ++i) acc[i] = _mm512_setzero_ps();
    Block<R> blk(a, n0);
    for (int64_t q = 0; q < G; ++q) {
        blk.group(q);
        __m512 s[R], z[R];
        for (int r = 0; r < R; ++r) {
            s[r] = _mm512_set1_ps(blk.s(q, r));
            z[r] = _mm512_set1_ps(blk.z(q, r));
        }
        for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 32) {
            blk.template step<16>();
            for (int r = 0; r < R; ++r) {
                const __m512i c = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)(p[r] + k / 2)));
                const __m512 we = _mm512_fmadd_ps(_mm512_permutexvar_ps(c, tb[r]), s[r], z[r]);
                const __m512 wo = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(c, 4), tb[r]), s[r], z[r]);
                for (int m = 0; m < MB; ++m) {
                    const float* xm = a.xd + (m0 + m) * a.K + k;
                    acc[r * MB + m] = _mm512_fmadd_ps(we, _mm512_loadu_ps(xm), acc[r * MB + m]);
                    acc[r * MB + m] = _mm512_fmadd_ps(wo, _mm512_loadu_ps(xm + 16), acc[r * MB + m]);
                }
            }
        }
    }
    if (R * MB == 16) {
        float out[16];
        reduce_lanes<float>(reinterpret_cast<const V<float>*>(acc), out);
        for (int r = 0; r < R; ++r)
            for (int m = 0; m < MB; ++m) a.y[(m0 + m) * a.N + n0 + r] = out[r * MB + m] + bias(a, n0 + r);
    } else {
        for (int r = 0; r < R; ++r)
            for (int m = 0; m < MB; ++m) a.y[(m0 + m) * a.N + n0 + r] = hsum(acc[r * MB + m]) + bias(a, n0 + r);
    }
}

// Ŵ rows [n0, n1) in fp32, natural k order.
void dequant_rows(const Gemm& a, float* w, int64_t n0, int64_t n1) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    for (int64_t n = n0; n < n1; ++n) {
        const __m512 tb = _mm512_loadu_ps(table(a, n));
        const uint8_t* p = a.packed + n * half;
        float* row = w + (n - n0) * a.K;
        for (int64_t q = 0; q < G; ++q) {
            const __m512 s = _mm512_set1_ps(scale(a, q, n)), z = _mm512_set1_ps(zero(a, q, n));
            for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 32) {
                const __m512i c = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)(p + k / 2)));
                const __m512 we = _mm512_fmadd_ps(_mm512_permutexvar_ps(c, tb), s, z);
                const __m512 wo = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(c, 4), tb), s, z);
                _mm512_storeu_ps(row + k, _mm512_permutex2var_ps(we, lo, wo));
                _mm512_storeu_ps(row + k + 16, _mm512_permutex2var_ps(we, hi, wo));
            }
        }
    }
}


#if defined(__AVX512VL__)
// The 64-weight path (g a multiple of 64; AVX-512VL): 32 bytes of codes are loaded as 8 dwords, each
// holding the codes of 8 consecutive k; shifting the dwords right by 4j puts the code of k = 8i + j in
// the low nibble of lane i, and _mm256_permutex2var_ps looks all 8 up in the row's 16-entry table
// (two registers, index bit 3 picks one; higher bits are ignored). No widening shuffle per load,
// and one group scale per 64 weights. xd holds x at k = 64b + 8i + j in position 64b + 8j + i.
void reorder_x64(const float* x, float* xd, int64_t K) {
    for (int64_t b = 0; b < K; b += 64)
        for (int j = 0; j < 8; ++j)
            for (int i = 0; i < 8; ++i) xd[b + 8 * j + i] = x[b + 8 * i + j];
}

struct Table8 {
    __m256 lo, hi;
};

inline Table8 load_table8(const float* t) { return {_mm256_loadu_ps(t), _mm256_loadu_ps(t + 8)}; }

inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

template <int J>
inline __m256 look8(const Table8& t, __m256i v) {
    const __m256i idx = J ? _mm256_srli_epi32(v, 4 * J) : v;
    return _mm256_permutex2var_ps(t.lo, idx, t.hi);
}

// Rows [n0, n1) (a multiple of R of them), R at a time.
template <int R>
void gemv64_rows(const Gemm& a, int64_t n0, int64_t n1) {
    const int64_t G = a.G, g = a.g, half = a.K / 2;
    const float* const xd = a.xd;
    const float* const xsum = a.xs;
    for (int64_t n = n0; n + R <= n1; n += R) {
        Table8 tb[R];
        __m256 tot[R];
        float zs[R];
        const uint8_t* const p = a.packed + n * half;
        for (int r = 0; r < R; ++r) {
            tb[r] = load_table8(table(a, n + r));
            tot[r] = _mm256_setzero_ps();
            zs[r] = 0;
        }
        Block<R> blk(a, n);
        for (int64_t q = 0; q < G; ++q) {
            blk.group(q);
            __m256 ae[R], ao[R];
            for (int r = 0; r < R; ++r) ae[r] = ao[r] = _mm256_setzero_ps();
            for (int64_t k = q * g; k < (q + 1) * g; k += 64) {
                blk.template step<32>();
                const float* xb = xd + k;
                for (int r = 0; r < R; ++r) {
                    const __m256i v = _mm256_loadu_si256((const __m256i*)(p + r * half + k / 2));
                    ae[r] = _mm256_fmadd_ps(look8<0>(tb[r], v), _mm256_loadu_ps(xb), ae[r]);
                    ao[r] = _mm256_fmadd_ps(look8<1>(tb[r], v), _mm256_loadu_ps(xb + 8), ao[r]);
                    ae[r] = _mm256_fmadd_ps(look8<2>(tb[r], v), _mm256_loadu_ps(xb + 16), ae[r]);
                    ao[r] = _mm256_fmadd_ps(look8<3>(tb[r], v), _mm256_loadu_ps(xb + 24), ao[r]);
                    ae[r] = _mm256_fmadd_ps(look8<4>(tb[r], v), _mm256_loadu_ps(xb + 32), ae[r]);
                    ao[r] = _mm256_fmadd_ps(look8<5>(tb[r], v), _mm256_loadu_ps(xb + 40), ao[r]);
                    ae[r] = _mm256_fmadd_ps(look8<6>(tb[r], v), _mm256_loadu_ps(xb + 48), ae[r]);
                    ao[r] = _mm256_fmadd_ps(look8<7>(tb[r], v), _mm256_loadu_ps(xb + 56), ao[r]);
                }
            }
            const float xs = xsum[q];
            for (int r = 0; r < R; ++r) {
                tot[r] = _mm256_fmadd_ps(_mm256_add_ps(ae[r], ao[r]), _mm256_set1_ps(blk.s(q, r)), tot[r]);
                zs[r] += blk.z(q, r) * xs;
            }
        }
        for (int r = 0; r < R; ++r) a.y[n + r] = hsum8(tot[r]) + zs[r] + bias(a, n + r);
    }
}

// R rows × MB activation rows; each 64-weight block of a row is dequantized once (ŵ = lut·s + zero)
// and used MB times, in two halves so that both rows' halves (8 registers), the R·MB accumulators and
// one activation vector fit in the 32 registers; each activation vector is loaded once for all R rows.
template <int R, int MB>
void gemm64_block(const Gemm& a, int64_t n0, int64_t m0) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    Table8 tb[R];
    __m256 acc[R][MB];
    const uint8_t* p[R];
    for (int r = 0; r < R; ++r) {
        tb[r] = load_table8(table(a, n0 + r));
        p[r] = a.packed + (n0 + r) * half;
        for (int m = 0; m < MB; ++m) acc[r][m] = _mm256_setzero_ps();
    }
    Block<R> blk(a, n0);
    for (int64_t q = 0; q < G; ++q) {
        blk.group(q);
        __m256 s[R], z[R];
        for (int r = 0; r < R; ++r) {
            s[r] = _mm256_set1_ps(blk.s(q, r));
            z[r] = _mm256_set1_ps(blk.z(q, r));
        }
        for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 64) {
            blk.template step<32>();
            __m256i v[R];
            for (int r = 0; r < R; ++r) v[r] = _mm256_loadu_si256((const __m256i*)(p[r] + k / 2));
            {
                __m256 w[R][4];
                for (int r = 0; r < R; ++r) {
                    w[r][0] = _mm256_fmadd_ps(look8<0>(tb[r], v[r]), s[r], z[r]);
                    w[r][1] = _mm256_fmadd_ps(look8<1>(tb[r], v[r]), s[r], z[r]);
                    w[r][2] = _mm256_fmadd_ps(look8<2>(tb[r], v[r]), s[r], z[r]);
                    w[r][3] = _mm256_fmadd_ps(look8<3>(tb[r], v[r]), s[r], z[r]);
                }
                for (int m = 0; m < MB; ++m) {
                    const float* xm = a.xd + (m0 + m) * a.K + k;
                    for (int j = 0; j < 4; ++j) {
                        const __m256 xv = _mm256_loadu_ps(xm + 8 * j);
                        for (int r = 0; r < R; ++r) acc[r][m] = _mm256_fmadd_ps(w[r][j], xv, acc[r][m]);
                    }
                }
            }
            {
                __m256 w[R][4];
                for (int r = 0; r < R; ++r) {
                    w[r][0] = _mm256_fmadd_ps(look8<4>(tb[r], v[r]), s[r], z[r]);
                    w[r][1] = _mm256_fmadd_ps(look8<5>(tb[r], v[r]), s[r], z[r]);
                    w[r][2] = _mm256_fmadd_ps(look8<6>(tb[r], v[r]), s[r], z[r]);
                    w[r][3] = _mm256_fmadd_ps(look8<7>(tb[r], v[r]), s[r], z[r]);
                }
                for (int m = 0; m < MB; ++m) {
                    const float* xm = a.xd + (m0 + m) * a.K + k + 32;
                    for (int j = 0; j < 4; ++j) {
                        const __m256 xv = _mm256_loadu_ps(xm + 8 * j);
                        for (int r = 0; r < R; ++r) acc[r][m] = _mm256_fmadd_ps(w[r][j], xv, acc[r][m]);
                    }
                }
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int m = 0; m < MB; ++m) a.y[(m0 + m) * a.N + n0 + r] = hsum8(acc[r][m]) + bias(a, n0 + r);
}

// The 128-weight GEMV (M = 1, g a multiple of 64, K of 128): 64 bytes of codes are loaded as 16 dwords
// (the codes of k = 8i..8i+7 in lane i), each lookup covers 16 weights with _mm512_permutexvar_ps on the
// row's 16-entry table in one register (Zen 4 runs a 512-bit op as two 256-bit halves: the gain, ~8%
// over the 64-weight GEMV here, is fewer instructions, half the shifts per weight). Lanes 0-7 hold
// k ∈ [b, b+64), lanes 8-15 k ∈ [b+64, b+128): groups b/g and (b+64)/g, so each step applies the scales
// of both halves at once; Σ zero·Σx is summed per group afterwards. xd holds x at k = 128b + 8i + j in
// position 128b + 16j + i.
void reorder_x128(const float* x, float* xd, int64_t K) {
    for (int64_t b = 0; b < K; b += 128)
        for (int j = 0; j < 8; ++j)
            for (int i = 0; i < 16; ++i) xd[b + 16 * j + i] = x[b + 8 * i + j];
}

template <int J>
inline __m512 look16(__m512 t, __m512i v) {
    return _mm512_permutexvar_ps(J ? _mm512_srli_epi32(v, 4 * J) : v, t);
}

// PAIR: g = 64, the two halves of a step are groups 2s and 2s + 1; else g is a multiple of 128 and a
// step lies in one group.
template <int R, bool PAIR>
void gemv128_rows(const Gemm& a, int64_t n0, int64_t n1) {
    const int64_t steps = a.g / 128, half = a.K / 2;
    const float* const xd = a.xd;
    const float* const xsum = a.xs;
    for (int64_t n = n0; n + R <= n1; n += R) {
        __m512 tb[R], tot[R];
        const uint8_t* const p = a.packed + n * half;
        for (int r = 0; r < R; ++r) {
            tb[r] = _mm512_loadu_ps(table(a, n + r));
            tot[r] = _mm512_setzero_ps();
        }
        Block<R> blk(a, n);
        __m128 zv = _mm_setzero_ps();  // Σ_q zero·Σx of the 4 rows (R = 4)
        float zs[4] = {0, 0, 0, 0};    // the same for R < 4
        auto zeros = [&](int64_t q) {  // a group's zeros, once, as the walk enters it
            if (R == 4)
                zv = _mm_fmadd_ps(_mm_loadu_ps(blk.sz + 8 * q + 4), _mm_set1_ps(xsum[q]), zv);
            else
                for (int r = 0; r < R; ++r) zs[r] += blk.z(q, r) * xsum[q];
            blk.group(q);
        };
        int64_t q = 0, left = steps;  // (g ≥ 128) the step's group, and how many steps it has left
        for (int64_t k = 0; k < a.K; k += 128) {
            const int64_t qlo = PAIR ? k >> 6 : q, qhi = PAIR ? qlo + 1 : q;
            if (PAIR || left == steps) zeros(qlo);
            if (PAIR) zeros(qhi);
            if (!PAIR && --left == 0) ++q, left = steps;
            blk.template step<64>();
            const float* xb = xd + k;
            for (int r = 0; r < R; ++r) {
                const __m512i v = _mm512_loadu_si512((const void*)(p + r * half + k / 2));
                __m512 e = _mm512_mul_ps(look16<0>(tb[r], v), _mm512_loadu_ps(xb));
                __m512 o = _mm512_mul_ps(look16<1>(tb[r], v), _mm512_loadu_ps(xb + 16));
                e = _mm512_fmadd_ps(look16<2>(tb[r], v), _mm512_loadu_ps(xb + 32), e);
                o = _mm512_fmadd_ps(look16<3>(tb[r], v), _mm512_loadu_ps(xb + 48), o);
                e = _mm512_fmadd_ps(look16<4>(tb[r], v), _mm512_loadu_ps(xb + 64), e);
                o = _mm512_fmadd_ps(look16<5>(tb[r], v), _mm512_loadu_ps(xb + 80), o);
                e = _mm512_fmadd_ps(look16<6>(tb[r], v), _mm512_loadu_ps(xb + 96), e);
                o = _mm512_fmadd_ps(look16<7>(tb[r], v), _mm512_loadu_ps(xb + 112), o);
                const __m512 sv = _mm512_mask_broadcastss_ps(_mm512_set1_ps(blk.s(qlo, r)), 0xFF00,
                                                             _mm_set_ss(blk.s(qhi, r)));
                tot[r] = _mm512_fmadd_ps(_mm512_add_ps(e, o), sv, tot[r]);
            }
        }
        if (R == 4) _mm_storeu_ps(zs, zv);
        for (int r = 0; r < R; ++r) a.y[n + r] = _mm512_reduce_add_ps(tot[r]) + zs[r] + bias(a, n + r);
    }
}
#define PW_HAVE_64 1
#endif

#elif defined(__AVX2__) && defined(__FMA__)
constexpr bool SIMD = true;

// xd: per 16 k, the 8 even-k values then the 8 odd-k values.
void reorder_x(const float* x, float* xd, int64_t K) {
    for (int64_t j = 0; j < K; j += 16)
        for (int i = 0; i < 8; ++i) {
            xd[j + i] = x[j + 2 * i];
            xd[j + 8 + i] = x[j + 2 * i + 1];
        }
}

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

struct Table {
    __m256 lo, hi;  // entries 0-7 and 8-15
};

inline Table load_table(const float* t) { return {_mm256_loadu_ps(t), _mm256_loadu_ps(t + 8)}; }

// Values of the low (HIGH = false) or high nibbles of the 8 bytes zero-extended in c.
template <bool HIGH>
inline __m256 lookup(const Table& t, __m256i c) {
    const __m256i idx = HIGH ? _mm256_srli_epi32(c, 4) : c;      // permutevar reads bits 0-2
    const __m256i sel = HIGH ? _mm256_slli_epi32(c, 24) : _mm256_slli_epi32(c, 28);  // bit 3 of the nibble → sign
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(t.lo, idx), _mm256_permutevar8x32_ps(t.hi, idx),
                            _mm256_castsi256_ps(sel));
}

inline __m256i codes8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)p)); }

template <int R>
void gemv_block(const Gemm& a, int64_t n0) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    Table tb[R];
    __m256 tot[R];
    float zs[R];
    const uint8_t* p[R];
    for (int r = 0; r < R; ++r) {
        tb[r] = load_table(table(a, n0 + r));
        tot[r] = _mm256_setzero_ps();
        zs[r] = 0;
        p[r] = a.packed + (n0 + r) * half;
    }
    Block<R> blk(a, n0);
    for (int64_t q = 0; q < G; ++q) {
        blk.group(q);
        __m256 ae[R], ao[R];
        for (int r = 0; r < R; ++r) ae[r] = ao[r] = _mm256_setzero_ps();
        for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 16) {
            blk.template step<8>();
            const __m256 xe = _mm256_loadu_ps(a.xd + k), xo = _mm256_loadu_ps(a.xd + k + 8);
            for (int r = 0; r < R; ++r) {
                const __m256i c = codes8(p[r] + k / 2);
                ae[r] = _mm256_fmadd_ps(lookup<false>(tb[r], c), xe, ae[r]);
                ao[r] = _mm256_fmadd_ps(lookup<true>(tb[r], c), xo, ao[r]);
            }
        }
        const float xs = a.xs[q];
        for (int r = 0; r < R; ++r) {
            tot[r] = _mm256_fmadd_ps(_mm256_add_ps(ae[r], ao[r]), _mm256_set1_ps(blk.s(q, r)), tot[r]);
            zs[r] += blk.z(q, r) * xs;
        }
    }
    for (int r = 0; r < R; ++r) a.y[n0 + r] = hsum(tot[r]) + zs[r] + bias(a, n0 + r);
}

template <int R, int MB>
void gemm_block(const Gemm& a, int64_t n0, int64_t m0) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    Table tb[R];
    __m256 acc[R * MB];
    const uint8_t* p[R];
    for (int r = 0; r < R; ++r) {
        tb[r] = load_table(table(a, n0 + r));
        p[r] = a.packed + (n0 + r) * half;
    }
    for (int i = 0; i < R * MB; ++i) acc[i] = _mm256_setzero_ps();
    Block<R> blk(a, n0);
    for (int64_t q = 0; q < G; ++q) {
        blk.group(q);
        __m256 s[R], z[R];
        for (int r = 0; r < R; ++r) {
            s[r] = _mm256_set1_ps(blk.s(q, r));
            z[r] = _mm256_set1_ps(blk.z(q, r));
        }
        for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 16) {
            blk.template step<8>();
            for (int r = 0; r < R; ++r) {
                const __m256i c = codes8(p[r] + k / 2);
                const __m256 we = _mm256_fmadd_ps(lookup<false>(tb[r], c), s[r], z[r]);
                const __m256 wo = _mm256_fmadd_ps(lookup<true>(tb[r], c), s[r], z[r]);
                for (int m = 0; m < MB; ++m) {
                    const float* xm = a.xd + (m0 + m) * a.K + k;
                    acc[r * MB + m] = _mm256_fmadd_ps(we, _mm256_loadu_ps(xm), acc[r * MB + m]);
                    acc[r * MB + m] = _mm256_fmadd_ps(wo, _mm256_loadu_ps(xm + 8), acc[r * MB + m]);
                }
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int m = 0; m < MB; ++m) a.y[(m0 + m) * a.N + n0 + r] = hsum(acc[r * MB + m]) + bias(a, n0 + r);
}

void dequant_rows(const Gemm& a, float* w, int64_t n0, int64_t n1) {
    const int64_t G = a.K / a.g, half = a.K / 2;
    for (int64_t n = n0; n < n1; ++n) {
        const Table tb = load_table(table(a, n));
        const uint8_t* p = a.packed + n * half;
        float* row = w + (n - n0) * a.K;
        for (int64_t q = 0; q < G; ++q) {
            const __m256 s = _mm256_set1_ps(scale(a, q, n)), z = _mm256_set1_ps(zero(a, q, n));
            for (int64_t k = q * a.g; k < (q + 1) * a.g; k += 16) {
                const __m256i c = codes8(p + k / 2);
                const __m256 we = _mm256_fmadd_ps(lookup<false>(tb, c), s, z);
                const __m256 wo = _mm256_fmadd_ps(lookup<true>(tb, c), s, z);
                const __m256 l = _mm256_unpacklo_ps(we, wo), h = _mm256_unpackhi_ps(we, wo);
                _mm256_storeu_ps(row + k, _mm256_permute2f128_ps(l, h, 0x20));
                _mm256_storeu_ps(row + k + 8, _mm256_permute2f128_ps(l, h, 0x31));
            }
        }
    }
}

#else
constexpr bool SIMD = false;
void reorder_x(const float*, float*, int64_t) {}
template <int R>
void gemv_block(const Gemm&, int64_t) {}
template <int R, int MB>
void gemm_block(const Gemm&, int64_t, int64_t) {}
void dequant_rows(const Gemm&, float*, int64_t, int64_t) {}
#endif

inline bool simd_ok(const Gemm& a) { return SIMD && a.g % 32 == 0; }

void dequant_rows_scalar(const Gemm& a, float* w, int64_t n0, int64_t n1) {
    const int64_t half = a.K / 2;
    for (int64_t n = n0; n < n1; ++n) {
        const float* t = table(a, n);
        for (int64_t k = 0; k < a.K; ++k) {
            const uint8_t b = a.packed[n * half + k / 2];
            const int c = (k & 1) ? b >> 4 : b & 15;
            w[(n - n0) * a.K + k] = t[c] * scale(a, k / a.g, n) + zero(a, k / a.g, n);
        }
    }
}

#if defined(PW_HAVE_64)
// with w64: gemv128_rows
inline bool w128(const Gemm& a) { return a.M == 1 && a.K % 128 == 0 && (a.g == 64 || a.g % 128 == 0); }
#endif

template <int MB>
void gemm_rows(const Gemm& a, int64_t n0, int64_t n1, int64_t m0, bool w64) {
    int64_t n = n0;
#if defined(PW_HAVE_64)
    if (w64) {  // 2 rows × up to 8 activation rows: 16 accumulators, each dequantized block used 8 times
        for (; n + 2 <= n1; n += 2) gemm64_block<2, MB>(a, n, m0);
        for (; n < n1; ++n) gemm64_block<1, MB>(a, n, m0);
        return;
    }
#endif
    if (MB <= 4) {
        for (; n + 4 <= n1; n += 4) gemm_block<4, (MB <= 4 ? MB : 4)>(a, n, m0);
        for (; n < n1; ++n) gemm_block<1, (MB <= 4 ? MB : 4)>(a, n, m0);
    }
}

// Output rows [n0, n1) for every activation row (w64: the 64-weight path, see gemv64_rows).
void rows_simd(const Gemm& a, int64_t n0, int64_t n1, bool w64) {
    if (a.M == 1) {
        int64_t n = n0;
#if defined(PW_HAVE_64)
        if (w64) {
            const int64_t n4 = n0 + (n1 - n0) / 4 * 4;
            if (w128(a) && a.g == 64) {
                gemv128_rows<4, true>(a, n0, n4);
                gemv128_rows<1, true>(a, n4, n1);
            } else if (w128(a)) {
                gemv128_rows<4, false>(a, n0, n4);
                gemv128_rows<1, false>(a, n4, n1);
            } else {
                gemv64_rows<4>(a, n0, n4);
                gemv64_rows<1>(a, n4, n1);
            }
            return;
        }
#endif
        for (; n + 4 <= n1; n += 4) gemv_block<4>(a, n);
        for (; n < n1; ++n) gemv_block<1>(a, n);
        return;
    }
    const int step = w64 ? 8 : 4;  // activation rows per pass over the weights
    int64_t m = 0;
    for (; m + step <= a.M; m += step) {
        if (step == 8)
            gemm_rows<8>(a, n0, n1, m, w64);
        else
            gemm_rows<4>(a, n0, n1, m, w64);
    }
    switch (a.M - m) {
        case 7: gemm_rows<7>(a, n0, n1, m, w64); break;
        case 6: gemm_rows<6>(a, n0, n1, m, w64); break;
        case 5: gemm_rows<5>(a, n0, n1, m, w64); break;
        case 4: gemm_rows<4>(a, n0, n1, m, w64); break;
        case 3: gemm_rows<3>(a, n0, n1, m, w64); break;
        case 2: gemm_rows<2>(a, n0, n1, m, w64); break;
        case 1: gemm_rows<1>(a, n0, n1, m, w64); break;
        default: break;
    }
}

// Σ of one group's n activations (n a multiple of VL: the SIMD paths need g % 32 == 0) in VL partial sums:
// a scalar running sum is a chain of n dependent adds (~1.5 µs per call at K = 1536, 4% of the GEMV).
inline float group_sum(const float* p, int64_t n) {
    V<float> acc = vset<float>(0.0f);
    for (int64_t k = 0; k < n; k += VL) acc += vload<float>(p + k);
    float s = 0;
    for (int i = 0; i < VL; ++i) s += acc[i];
    return s;
}

int check(int64_t M, int64_t N, int64_t K, int64_t g) {
    if (M < 0 || N < 0 || K < 0) return 1;
    if (g < 2 || g % 2 || K % g) return 2;
    return 0;
}

}  // namespace
}  // namespace pw

extern "C" {

// One layer's operands (filled once by paperworks_kernels/any4_gemm/cpu.py, passed by pointer).
// szb: the scales and zeros again, blocked for the SIMD GEMV/GEMM: for each block of 4 rows (N padded
// with zero rows to a multiple of 4) and each group q, the 4 scales then the 4 zeros (8 floats), so
// that a block's walk along k reads them as one sequential stream instead of one line per group at a
// stride of 8·N bytes. Null on a build or a group size without the SIMD paths (they need it).
struct PwAny4Layer {
    int64_t N, K, g, row_lut;
    const uint8_t* packed;
    const float *lut, *sz, *bias;  // bias (N,) or null
    const float* szb;
};

// y (M×N, contiguous) = x (M×K, row stride sxm, unit k stride) · Ŵᵀ (+ bias). Returns 0, or an error code.
int pw_any4_gemm(const PwAny4Layer* layer, const float* x, int64_t M, int64_t sxm, float* y, int64_t nthreads) {
    const int64_t N = layer->N, K = layer->K, g = layer->g, row_lut = layer->row_lut;
    const uint8_t* packed = layer->packed;
    const float *lut = layer->lut, *sz = layer->sz, *bias = layer->bias;
    using namespace pw;
    if (int e = check(M, N, K, g)) return e;
    if (M == 0 || N == 0) return 0;
    // prefetch about 4 KiB of codes ahead, in whole blocks of 4 rows (at least one)
    const int64_t pf_rows = 4 * std::max<int64_t>(1, (4096 + K) / (2 * K));
    Gemm a{M, N, K, g, x, sxm, packed, lut, row_lut, sz, y, bias, nullptr, nullptr, layer->szb, pf_rows, K / g};
    const int64_t G = K / g;
    const bool simd = simd_ok(a) && a.szb;
#if defined(PW_HAVE_64)
    const bool w64 = simd && g % 64 == 0;
#else
    const bool w64 = false;
#endif
    thread_local std::vector<float> xbuf, xs;  // reused across calls: a decode step calls every layer
    if (simd) {  // reorder the activations and sum them per group (shared by all rows)
        if ((int64_t)xbuf.size() < M * K + 16) xbuf.resize(M * K + 16);
        if ((int64_t)xs.size() < M * G) xs.resize(M * G);
        // 64-byte aligned: a vector load of activations that straddles two cache lines costs twice
        float* xd = xbuf.data() + ((64 - (uintptr_t)xbuf.data() % 64) % 64) / sizeof(float);
        for (int64_t m = 0; m < M; ++m) {
#if defined(PW_HAVE_64)
            if (w64 && w128(a))
                reorder_x128(x + m * sxm, xd + m * K, K);
            else if (w64)
                reorder_x64(x + m * sxm, xd + m * K, K);
            else
#endif
                reorder_x(x + m * sxm, xd + m * K, K);
            for (int64_t q = 0; q < G; ++q) xs[m * G + q] = group_sum(x + m * sxm + q * g, g);
        }
        a.xd = xd;
        a.xs = xs.data();
    }
    // blocks of 64 rows (a multiple of 4): enough tasks to balance threads, long enough runs per task
    const int64_t rows = 64, nblk = (N + rows - 1) / rows;
    const int nth = (int)std::max<int64_t>(1, std::min<int64_t>(nthreads, nblk));
    auto block = [&](int64_t b) {
        const int64_t n0 = b * rows, n1 = std::min(N, n0 + rows);
        if (simd)
            rows_simd(a, n0, n1, w64);
        else
            rows_scalar(a, n0, n1);
    };
    if (nth == 1) {
        for (int64_t b = 0; b < nblk; ++b) block(b);
    } else {
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
        for (int64_t b = 0; b < nblk; ++b) block(b);
    }
    return 0;
}

// Ŵ rows [n0, n1) into w ((n1 − n0) × K, contiguous, fp32).
int pw_any4_dequant(const PwAny4Layer* layer, int64_t n0, int64_t n1, float* w, int64_t nthreads) {
    using namespace pw;
    const int64_t N = layer->N, K = layer->K, g = layer->g, row_lut = layer->row_lut;
    const uint8_t* packed = layer->packed;
    const float *lut = layer->lut, *sz = layer->sz;
    if (int e = check(0, N, K, g)) return e;
    if (n0 < 0 || n1 > N || n0 > n1) return 3;
    Gemm a{0, N, K, g, nullptr, 0, packed, lut, row_lut, sz, nullptr, nullptr, nullptr, nullptr, nullptr, 0, K / g};
    const bool simd = simd_ok(a);
    const int64_t rows = 16, nblk = (n1 - n0 + rows - 1) / rows;
    const int nth = (int)std::max<int64_t>(1, std::min<int64_t>(nthreads, nblk));
    auto block = [&](int64_t b) {
        const int64_t r0 = n0 + b * rows, r1 = std::min(n1, r0 + rows);
        if (simd)
            dequant_rows(a, w + (r0 - n0) * K, r0, r1);
        else
            dequant_rows_scalar(a, w + (r0 - n0) * K, r0, r1);
    };
    if (nth == 1) {
        for (int64_t b = 0; b < nblk; ++b) block(b);
    } else {
#pragma omp parallel for num_threads(nth) schedule(static)
        for (int64_t b = 0; b < nblk; ++b) block(b);
    }
    return 0;
}

// 1 when pw_any4_gemm takes a SIMD path for group size g (it then needs PwAny4Layer.szb), else 0.
int pw_any4_uses_blocked_scales(int64_t g) { return pw::SIMD && g > 0 && g % 32 == 0 ? 1 : 0; }

// Which code path this build takes: 2 = AVX-512, 1 = AVX2, 0 = plain loops.
int pw_any4_isa(void) {
#if defined(__AVX512F__)
    return 2;
#elif defined(__AVX2__) && defined(__FMA__)
    return 1;
#else
    return 0;
#endif
}
}
