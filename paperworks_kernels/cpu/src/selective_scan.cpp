// Fused selective scan on the CPU: forward and backward of Mamba-1 (A: d×N) and Mamba-2 (A: one
// scalar per head), with D, the SiLU(z) gate, Δ bias and softplus fused in. Python side and the
// maths: paperworks_kernels/selective_scan/fused.py.
//
// Work split: one task per (batch element, block of VL channels); the VL channels are the vector
// lanes, so the recurrence h_n ← e^{Δ·a_n}·h_n + (Δ·x)·B_n runs on N vectors kept in registers
// (N = 8, 16 are compiled for that; other N keep the state in an L1 array) and needs no
// horizontal sums in the forward pass. Inputs are read through strides (no copies on the Python
// side) one time chunk at a time into lane-major L1 buffers.
//
// Backward: the forward stores the state at the start of every time chunk (b·d·N·L/chunk values).
// The backward walks the chunks in reverse; for each it recomputes the chunk's states and decays
// from the stored start (one more exponential per state and step) and then runs the reverse
// recurrence dh_{t-1} = e^{Δ_t·a}·(dh_t) with dh_t += dy_t·C_t. dB and dC sum over channels: each
// task writes its partial sums (lanes reduced by reduce_lanes) and Python adds the blocks.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

extern "C" {

struct PwScanArgs {
    int64_t batch, dim, length, state, head_dim, scalar_a, softplus, chunk, nthreads;
    int64_t double_precision;
    int64_t su[3], sdelta[3], sz[3], sb[3], sc[3], sy[3], sdy[3];  // element strides (b, d|h|n, t)
    const void *u, *delta, *A, *B, *C, *D, *z, *bias;  // D per channel (d,); bias per head (h,)
    void *y, *hlast, *ckpt;                            // forward outputs (ckpt: null unless training)
    const void *dy, *dhlast;                           // backward inputs (dhlast may be null)
    void *du, *ddelta, *dz, *dD, *dA, *dB, *dC;        // backward outputs (du, ddelta, dz: (b, L, d) memory)
};
}

namespace pw {
namespace {

constexpr int MAXN = 256;

template <typename T>
struct Work {  // one thread's L1/L2 buffers, reused across its tasks
    int64_t chunk, n;
    std::vector<V<T>> x, draw, zz, yy, out, dt, dtx, sig, du, dd, dz, h, dA;
    std::vector<T> bb, cc;
    Work(int64_t chunk_, int64_t n_, bool backward, bool scalar_a) : chunk(chunk_), n(n_) {
        for (auto* b : {&x, &draw, &zz, &yy, &out, &dt, &dtx, &sig, &du, &dd, &dz}) b->resize(chunk);
        bb.resize(chunk * n);
        cc.resize(chunk * n);
        dA.resize(scalar_a ? chunk : chunk * n);
        if (backward) h.resize(chunk * n);
    }
};

// dst[t][lane] = src[row[lane] + (t0 + t)·st] for t < nt, 0 for lanes ≥ nl. Fast paths: the lanes'
// channels adjacent in memory (one vector load per step), or every row contiguous in time (VL×VL
// tiles loaded row by row and transposed in registers).
template <typename T>
inline void gather(V<T>* dst, const T* src, const int64_t* row, int nl, int64_t st, int64_t t0, int64_t nt) {
    T* d = reinterpret_cast<T*>(dst);
    bool adjacent = nl == VL;
    for (int l = 1; l < VL && adjacent; ++l) adjacent = row[l] == row[0] + l;
    if (adjacent) {
        const T* s = src + row[0] + t0 * st;
        for (int64_t t = 0; t < nt; ++t) dst[t] = vload<T>(s + t * st);
        return;
    }
    int64_t t = 0;
    if (st == 1) {
        V<T> tile[VL];
        for (; t + VL <= nt; t += VL) {
            for (int l = 0; l < VL; ++l) tile[l] = l < nl ? vload<T>(src + row[l] + t0 + t) : vset<T>(0);
            transpose<T>(tile);
            for (int i = 0; i < VL; ++i) dst[t + i] = tile[i];
        }
    }
    for (int l = 0; l < VL; ++l) {
        if (l < nl) {
            const T* s = src + row[l] + t0 * st;
            for (int64_t u = t; u < nt; ++u) d[u * VL + l] = s[u * st];
        } else {
            for (int64_t u = t; u < nt; ++u) d[u * VL + l] = 0;
        }
    }
}

// dst[row[lane] + (t0 + t)·st] = src[t][lane] for lanes < nl (fast path: adjacent channels).
template <typename T>
inline void scatter(T* dst, const V<T>* src, const int64_t* row, int nl, int64_t st, int64_t t0, int64_t nt) {
    const T* s = reinterpret_cast<const T*>(src);
    bool adjacent = true;
    for (int l = 1; l < nl && adjacent; ++l) adjacent = row[l] == row[0] + l;
    if (adjacent) {
        T* d = dst + row[0] + t0 * st;
        if (nl == VL)
            for (int64_t t = 0; t < nt; ++t) vstore<T>(d + t * st, src[t]);
        else
            for (int64_t t = 0; t < nt; ++t) std::memcpy(d + t * st, s + t * VL, nl * sizeof(T));
        return;
    }
    for (int l = 0; l < nl; ++l) {
        T* d = dst + row[l] + t0 * st;
        for (int64_t t = 0; t < nt; ++t) d[t * st] = s[t * VL + l];
    }
}

// dst[t·N + n] = src[n·sn + (t0 + t)·st]
template <typename T>
inline void gather_bc(T* dst, const T* src, int64_t n, int64_t sn, int64_t st, int64_t t0, int64_t nt) {
    for (int64_t k = 0; k < n; ++k) {
        const T* s = src + k * sn + t0 * st;
        for (int64_t t = 0; t < nt; ++t) dst[t * n + k] = s[t * st];
    }
}

template <typename T>
struct Lanes {  // per-task constants of the VL channels c0 … c0+VL−1
    int64_t c0;
    int nl;
    int64_t row_u[VL], row_delta[VL], row_z[VL], row_y[VL], row_dy[VL], row_out[VL];
    V<T> a2, dskip, bias;     // Mamba-2 A of each lane's head; D; Δ bias
    std::vector<V<T>> a1;     // Mamba-1: a1[n][lane] = A[c, n]
};

template <typename T>
void setup_lanes(const PwScanArgs& a, int64_t bi, int64_t blk, Lanes<T>& ln) {
    const int64_t d = a.dim, N = a.state, P = a.head_dim, L = a.length;
    ln.c0 = blk * VL;
    ln.nl = (int)std::min<int64_t>(VL, d - ln.c0);
    const T* A = static_cast<const T*>(a.A);
    const T* D = static_cast<const T*>(a.D);
    const T* bias = static_cast<const T*>(a.bias);
    ln.a2 = vset<T>(0);
    ln.dskip = vset<T>(0);
    ln.bias = vset<T>(0);
    if (!a.scalar_a) ln.a1.assign(N, vset<T>(0));
    for (int l = 0; l < VL; ++l) {
        const int64_t c = std::min<int64_t>(ln.c0 + l, d - 1), hd = c / P;
        const bool on = l < ln.nl;
        ln.row_u[l] = bi * a.su[0] + c * a.su[1];
        ln.row_delta[l] = bi * a.sdelta[0] + hd * a.sdelta[1];
        ln.row_z[l] = bi * a.sz[0] + c * a.sz[1];
        ln.row_y[l] = bi * a.sy[0] + c * a.sy[1];
        ln.row_dy[l] = bi * a.sdy[0] + c * a.sdy[1];
        ln.row_out[l] = bi * L * d + c;  // backward outputs in (b, L, d) memory
        if (!on) continue;
        if (a.scalar_a)
            ln.a2[l] = A[hd];
        else
            for (int64_t k = 0; k < N; ++k) ln.a1[k][l] = A[c * N + k];
        if (D) ln.dskip[l] = D[c];
        if (bias) ln.bias[l] = bias[hd];
    }
}

// Load one time chunk of x, Δ (raw), z, B, C into the work buffers.
template <typename T>
void load_chunk(const PwScanArgs& a, int64_t bi, const Lanes<T>& ln, Work<T>& w, int64_t t0, int64_t nt) {
    gather<T>(w.x.data(), static_cast<const T*>(a.u), ln.row_u, ln.nl, a.su[2], t0, nt);
    gather<T>(w.draw.data(), static_cast<const T*>(a.delta), ln.row_delta, ln.nl, a.sdelta[2], t0, nt);
    if (a.z) gather<T>(w.zz.data(), static_cast<const T*>(a.z), ln.row_z, ln.nl, a.sz[2], t0, nt);
    gather_bc<T>(w.bb.data(), static_cast<const T*>(a.B) + bi * a.sb[0], a.state, a.sb[1], a.sb[2], t0, nt);
    gather_bc<T>(w.cc.data(), static_cast<const T*>(a.C) + bi * a.sc[0], a.state, a.sc[1], a.sc[2], t0, nt);
}

template <typename T, bool SIG>
inline void delta_of(const PwScanArgs& a, const Lanes<T>& ln, V<T> raw, V<T>& dt, V<T>& sig) {
    V<T> v = raw + ln.bias;
    if (a.softplus) {
        vsoftplus<T, SIG>(v, dt, sig);
    } else {
        dt = v;
        sig = vset<T>(1);
    }
}

// One chunk of the forward recurrence from the state h, in two passes. The first computes, for
// every step, Δ (bias, softplus), Δ·x and the decays e^{Δ·a} (and the gate SiLU(z)): no step depends
// on another, so the exponentials pipeline at full throughput. The second runs the recurrence
// h ← e^{Δ·a}·h + (Δ·x)·B and Σ_n h·C, whose only loop-carried dependence is one multiply-add per
// state (Σ_n is summed in two interleaved halves). With KEEP (backward) the states go to w.h and
// Σ_n h·C to w.out; otherwise y (with D and the gate) to w.yy.
template <typename T, int NC, bool KEEP>
void forward_chunk(const PwScanArgs& a, const Lanes<T>& ln, Work<T>& w, V<T>* h, int64_t nt) {
    const int N = NC ? NC : (int)a.state;
    const int nd = a.scalar_a ? 1 : N;  // decays per step
    for (int64_t t = 0; t < nt; ++t) {
        V<T> dt, sig;
        delta_of<T, KEEP>(a, ln, w.draw[t], dt, sig);
        w.dt[t] = dt;
        w.dtx[t] = dt * w.x[t];
        if (KEEP) w.sig[t] = sig;
        V<T>* dA = w.dA.data() + t * nd;
        if (a.scalar_a) {
            dA[0] = vexp(dt * ln.a2);
        } else {
            for (int k = 0; k < N; ++k) dA[k] = vexp(dt * ln.a1[k]);
        }
        if (!KEEP && a.z) {
            const V<T> z = w.zz[t];
            w.zz[t] = z * vsigmoid<T>(z);
        }
    }
    const T* bb = w.bb.data();
    const T* cc = w.cc.data();
    for (int64_t t = 0; t < nt; ++t) {
        const V<T> dtx = w.dtx[t];
        const V<T>* dA = w.dA.data() + t * nd;
        const T* bt = bb + t * N;
        const T* ct = cc + t * N;
        V<T> acc0 = vset<T>(0), acc1 = vset<T>(0);
        int k = 0;
        for (; k + 1 < N; k += 2) {
            h[k] = (a.scalar_a ? dA[0] : dA[k]) * h[k] + dtx * bt[k];
            h[k + 1] = (a.scalar_a ? dA[0] : dA[k + 1]) * h[k + 1] + dtx * bt[k + 1];
            acc0 += h[k] * ct[k];
            acc1 += h[k + 1] * ct[k + 1];
        }
        if (k < N) {
            h[k] = (a.scalar_a ? dA[0] : dA[k]) * h[k] + dtx * bt[k];
            acc0 += h[k] * ct[k];
        }
        const V<T> acc = acc0 + acc1;
        if (KEEP) {
            for (int j = 0; j < N; ++j) w.h[t * N + j] = h[j];
            w.out[t] = acc;
        } else {
            V<T> y = acc + ln.dskip * w.x[t];
            if (a.z) y = y * w.zz[t];
            w.yy[t] = y;
        }
    }
}

template <typename T, int NC>
void fwd_task(const PwScanArgs& a, int64_t bi, int64_t blk, Work<T>& w) {
    const int N = NC ? NC : (int)a.state;
    const int64_t L = a.length, TC = a.chunk, nchunk = (L + TC - 1) / TC, nblk = (a.dim + VL - 1) / VL;
    Lanes<T> ln;
    setup_lanes<T>(a, bi, blk, ln);
    V<T> h[NC ? NC : MAXN];
    for (int k = 0; k < N; ++k) h[k] = vset<T>(0);
    T* ckpt = static_cast<T*>(a.ckpt);
    for (int64_t ci = 0; ci < nchunk; ++ci) {
        const int64_t t0 = ci * TC, nt = std::min(TC, L - t0);
        if (ckpt) {
            T* dst = ckpt + ((bi * nblk + blk) * nchunk + ci) * N * VL;
            for (int k = 0; k < N; ++k) vstore<T>(dst + k * VL, h[k]);
        }
        load_chunk<T>(a, bi, ln, w, t0, nt);
        forward_chunk<T, NC, false>(a, ln, w, h, nt);
        scatter<T>(static_cast<T*>(a.y), w.yy.data(), ln.row_y, ln.nl, a.sy[2], t0, nt);
    }
    T* hl = static_cast<T*>(a.hlast);
    for (int l = 0; l < ln.nl; ++l)
        for (int k = 0; k < N; ++k) hl[((bi * a.dim) + ln.c0 + l) * N + k] = h[k][l];
}

template <typename T, int NC>
void bwd_task(const PwScanArgs& a, int64_t bi, int64_t blk, Work<T>& w) {
    const int N = NC ? NC : (int)a.state;
    const int64_t L = a.length, TC = a.chunk, nchunk = (L + TC - 1) / TC, nblk = (a.dim + VL - 1) / VL;
    const int64_t d = a.dim;
    Lanes<T> ln;
    setup_lanes<T>(a, bi, blk, ln);
    V<T> dh[NC ? NC : MAXN], h0[NC ? NC : MAXN], dA1[NC ? NC : MAXN];
    for (int k = 0; k < N; ++k) {
        dh[k] = vset<T>(0);
        dA1[k] = vset<T>(0);
        if (a.dhlast)
            for (int l = 0; l < ln.nl; ++l) dh[k][l] = static_cast<const T*>(a.dhlast)[(bi * d + ln.c0 + l) * N + k];
    }
    V<T> dA2 = vset<T>(0), dDacc = vset<T>(0);
    const T* ckpt = static_cast<const T*>(a.ckpt);
    T* dBp = static_cast<T*>(a.dB) + (bi * nblk + blk) * L * N;
    T* dCp = static_cast<T*>(a.dC) + (bi * nblk + blk) * L * N;
    const int nred = (2 * N + VL - 1) / VL;
    V<T> red[2 * MAXN + VL];
    T sums[2 * MAXN + VL];
    for (int k = 2 * N; k < nred * VL; ++k) red[k] = vset<T>(0);
    for (int64_t ci = nchunk - 1; ci >= 0; --ci) {
        const int64_t t0 = ci * TC, nt = std::min(TC, L - t0);
        const T* src = ckpt + ((bi * nblk + blk) * nchunk + ci) * N * VL;
        V<T> h[NC ? NC : MAXN];
        for (int k = 0; k < N; ++k) h0[k] = h[k] = vload<T>(src + k * VL);
        load_chunk<T>(a, bi, ln, w, t0, nt);
        gather<T>(w.yy.data(), static_cast<const T*>(a.dy), ln.row_dy, ln.nl, a.sdy[2], t0, nt);
        forward_chunk<T, NC, true>(a, ln, w, h, nt);
        for (int64_t t = nt - 1; t >= 0; --t) {
            const V<T> x = w.x[t], dt = w.dt[t], dtx = dt * x, gy = w.yy[t];
            const V<T> pre = w.out[t] + ln.dskip * x;
            V<T> dout = gy;
            if (a.z) {
                const V<T> z = w.zz[t], s = vsigmoid<T>(z);
                w.dz[t] = gy * pre * (s * (z * ((T)1 - s) + (T)1));
                dout = gy * (z * s);
            }
            dDacc += dout * x;
            const T* bt = w.bb.data() + t * N;
            const T* ct = w.cc.data() + t * N;
            const V<T>* ht = w.h.data() + t * N;
            const V<T>* hp = t ? w.h.data() + (t - 1) * N : h0;
            V<T> ddtx = vset<T>(0), ddt = vset<T>(0);
            if (a.scalar_a) {
                const V<T> dA = w.dA[t];
                V<T> g = vset<T>(0);
                for (int k = 0; k < N; ++k) {
                    dh[k] += dout * ct[k];
                    red[k] = dout * ht[k];
                    red[N + k] = dh[k] * dtx;
                    ddtx += dh[k] * bt[k];
                    g += dh[k] * hp[k];
                    dh[k] *= dA;
                }
                g *= dA;  // ∂/∂(Δ·a) of e^{Δ·a}·h_{t−1}, summed over the states
                ddt += g * ln.a2;
                dA2 += g * dt;
            } else {
                const V<T>* dAt = w.dA.data() + t * N;
                for (int k = 0; k < N; ++k) {
                    dh[k] += dout * ct[k];
                    red[k] = dout * ht[k];
                    red[N + k] = dh[k] * dtx;
                    ddtx += dh[k] * bt[k];
                    const V<T> g = dh[k] * hp[k] * dAt[k];
                    ddt += g * ln.a1[k];
                    dA1[k] += g * dt;
                    dh[k] *= dAt[k];
                }
            }
            for (int r = 0; r < nred; ++r) reduce_lanes<T>(red + r * VL, sums + r * VL);
            T* dct = dCp + (t0 + t) * N;
            T* dbt = dBp + (t0 + t) * N;
            for (int k = 0; k < N; ++k) {
                dct[k] = sums[k];
                dbt[k] = sums[N + k];
            }
            w.du[t] = ddtx * dt + dout * ln.dskip;
            ddt += ddtx * x;
            w.dd[t] = ddt * w.sig[t];
        }
        scatter<T>(static_cast<T*>(a.du), w.du.data(), ln.row_out, ln.nl, d, t0, nt);
        scatter<T>(static_cast<T*>(a.ddelta), w.dd.data(), ln.row_out, ln.nl, d, t0, nt);
        if (a.z) scatter<T>(static_cast<T*>(a.dz), w.dz.data(), ln.row_out, ln.nl, d, t0, nt);
    }
    T* dD = static_cast<T*>(a.dD);
    T* dA = static_cast<T*>(a.dA);
    for (int l = 0; l < ln.nl; ++l) {
        const int64_t c = ln.c0 + l;
        dD[bi * d + c] = dDacc[l];
        if (a.scalar_a)
            dA[bi * d + c] = dA2[l];
        else
            for (int k = 0; k < N; ++k) dA[(bi * d + c) * N + k] = dA1[k][l];
    }
}

template <typename T, int NC>
void run(const PwScanArgs& a, bool backward) {
    const int64_t nblk = (a.dim + VL - 1) / VL, ntask = a.batch * nblk;
    const int nth = (int)std::max<int64_t>(1, std::min<int64_t>(a.nthreads, ntask));
    auto task = [&](Work<T>& w, int64_t i) {
        if (backward)
            bwd_task<T, NC>(a, i / nblk, i % nblk, w);
        else
            fwd_task<T, NC>(a, i / nblk, i % nblk, w);
    };
    if (nth == 1) {
        Work<T> w(a.chunk, a.state, backward, a.scalar_a != 0);
        for (int64_t i = 0; i < ntask; ++i) task(w, i);
        return;
    }
#pragma omp parallel num_threads(nth)
    {
        Work<T> w(a.chunk, a.state, backward, a.scalar_a != 0);
#pragma omp for schedule(dynamic, 1)
        for (int64_t i = 0; i < ntask; ++i) task(w, i);
    }
}

template <typename T>
void dispatch(const PwScanArgs& a, bool backward) {
    switch (a.state) {
        case 4: return run<T, 4>(a, backward);
        case 8: return run<T, 8>(a, backward);
        case 16: return run<T, 16>(a, backward);
        default: return run<T, 0>(a, backward);
    }
}

int check(const PwScanArgs* a) {
    if (!a || a->batch < 0 || a->dim < 0 || a->length < 0) return 1;
    if (a->state < 1 || a->state > MAXN || a->chunk < 1 || a->head_dim < 1) return 2;
    if (!a->u || !a->delta || !a->A || !a->B || !a->C) return 3;
    return 0;
}

}  // namespace
}  // namespace pw

extern "C" {

int pw_vector_lanes(void) { return pw::VL; }

int pw_scan_max_state(void) { return pw::MAXN; }

int pw_scan_forward(const PwScanArgs* a) {
    if (int e = pw::check(a)) return e;
    if (!a->y || !a->hlast) return 4;
    if (a->double_precision)
        pw::dispatch<double>(*a, false);
    else
        pw::dispatch<float>(*a, false);
    return 0;
}

int pw_scan_backward(const PwScanArgs* a) {
    if (int e = pw::check(a)) return e;
    if (!a->ckpt || !a->dy || !a->du || !a->ddelta || !a->dD || !a->dA || !a->dB || !a->dC) return 4;
    if (a->z && !a->dz) return 4;
    if (a->double_precision)
        pw::dispatch<double>(*a, true);
    else
        pw::dispatch<float>(*a, true);
    return 0;
}
}
