// GRU on the CPU: each direction projects the whole input through W with one BLAS GEMM, then steps through time,
// the batch entries in parallel. The state is kept in the compute type (float for float16).
#include "../../core/ops/recurrent.h"

#include <algorithm>

#include "../../executor/scalar_math.h"
#include "blas_gemm.h"
#include "kernel.h"

namespace dml::cpu {

namespace {

// Element offsets of a strided 4-D tensor.
struct Strided4 {
    Strides s;
    explicit Strided4(const TensorDesc& d) : s(d.effective_strides()) {}
    int64_t operator()(uint32_t a, uint32_t b, uint32_t c, uint32_t e) const {
        return int64_t(a) * s[0] + int64_t(b) * s[1] + int64_t(c) * s[2] + int64_t(e) * s[3];
    }
};

struct GruShape {
    uint32_t seq, batch, input_size, hidden, dirs;
    explicit GruShape(const Node& node)
        : seq(node.inputs[0]->desc.sizes[1]), batch(node.inputs[0]->desc.sizes[2]),
          input_size(node.inputs[0]->desc.sizes[3]), hidden(node.inputs[2]->desc.sizes[3]),
          dirs(node.inputs[1]->desc.sizes[1]) {}
    // Workspace: packed input [seq * batch, input], its projection [seq * batch, 3 hidden], W and R of one direction.
    uint64_t workspace_elements() const {
        const uint64_t rows = uint64_t(seq) * batch, gates = 3ull * hidden;
        return rows * input_size + rows * gates + gates * input_size + gates * hidden;
    }
};

template <class T>
void run_gru_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<GRUDesc>();
    const GruShape sh(args.node);
    const TensorArg &x = args.inputs[0], &w = args.inputs[1], &r = args.inputs[2], &bias = args.inputs[3],
                    &h0 = args.inputs[4], &lens = args.inputs[5];
    T* seq_out = d.output_sequence ? args.outputs[0].as<T>() : nullptr;
    T* single_out = d.output_single ? args.outputs[d.output_sequence ? 1 : 0].as<T>() : nullptr;
    const uint32_t S = sh.seq, B = sh.batch, I = sh.input_size, H = sh.hidden, G = 3 * H;
    C* xs = reinterpret_cast<C*>(args.workspace);
    C* xw = xs + uint64_t(S) * B * I;
    C* wd = xw + uint64_t(S) * B * G;
    C* rd = wd + uint64_t(G) * I;

    const Strided4 sx(*x.desc), sw(*w.desc), sr(*r.desc);
    for (uint32_t t = 0; t < S; ++t)
        for (uint32_t b = 0; b < B; ++b)
            for (uint32_t i = 0; i < I; ++i) xs[(uint64_t(t) * B + b) * I + i] = C(x.as<T>()[sx(0, t, b, i)]);
    // Steps past a sequence's length leave zeros in the sequence output.
    if (seq_out) std::fill_n(seq_out, uint64_t(S) * sh.dirs * B * H, T(C(0)));
    std::vector<uint32_t> length(B, S);
    if (lens) {
        const Strided4 sl(*lens.desc);
        for (uint32_t b = 0; b < B; ++b) length[b] = std::min(lens.as<uint32_t>()[sl(0, 0, 0, b)], S);  // clamped to seq
    }

    for (uint32_t dir = 0; dir < sh.dirs; ++dir) {
        const bool reverse = d.direction == RecurrentNetworkDirection::Backward || dir == 1;
        const FusedActivation &f = d.activations[2 * dir], &g = d.activations[2 * dir + 1];
        for (uint32_t j = 0; j < G; ++j) {
            for (uint32_t i = 0; i < I; ++i) wd[uint64_t(j) * I + i] = C(w.as<T>()[sw(0, dir, j, i)]);
            for (uint32_t i = 0; i < H; ++i) rd[uint64_t(j) * H + i] = C(r.as<T>()[sr(0, dir, j, i)]);
        }
        // xw[t * B + b] = x[t, b] W^T, the input's part of every gate
        blas_gemm<C>(args.pool, false, true, int(S * B), int(G), int(I), C(1), xs, int(I), wd, int(I), C(0), xw, int(G));
        std::vector<C> wb(G, C(0)), rb(G, C(0));
        if (bias) {
            const Strided4 sb(*bias.desc);
            for (uint32_t j = 0; j < G; ++j) {
                wb[j] = C(bias.as<T>()[sb(0, 0, dir, j)]);
                rb[j] = C(bias.as<T>()[sb(0, 0, dir, G + j)]);
            }
        }
        // hr = R h + Rb for the z and r gates, and for h's when its linear part comes before the reset
        const uint32_t recurrent_rows = d.linear_before_reset ? G : 2 * H;
        args.pool.parallel_for(B, 1, [&](size_t b_begin, size_t b_end) {
            std::vector<C> h(H), hr(G), reset(H), reset_h(H), next(H);
            for (size_t b = b_begin; b < b_end; ++b) {
                if (h0) {
                    const Strided4 s0(*h0.desc);
                    for (uint32_t i = 0; i < H; ++i) h[i] = C(h0.as<T>()[s0(0, dir, uint32_t(b), i)]);
                } else {
                    std::fill(h.begin(), h.end(), C(0));
                }
                for (uint32_t step = 0; step < length[b]; ++step) {
                    const uint32_t t = reverse ? length[b] - 1 - step : step;
                    const C* xg = xw + (uint64_t(t) * B + b) * G;
                    for (uint32_t j = 0; j < recurrent_rows; ++j) {
                        C acc = rb[j];
                        const C* row = rd + uint64_t(j) * H;
                        for (uint32_t i = 0; i < H; ++i) acc += row[i] * h[i];
                        hr[j] = acc;
                    }
                    for (uint32_t i = 0; i < H; ++i) {
                        reset[i] = apply_activation(f, xg[H + i] + wb[H + i] + hr[H + i]);
                        reset_h[i] = reset[i] * h[i];
                    }
                    for (uint32_t i = 0; i < H; ++i) {
                        const C z = apply_activation(f, xg[i] + wb[i] + hr[i]);
                        C linear;
                        if (d.linear_before_reset) {
                            linear = reset[i] * hr[2 * H + i];
                        } else {  // Rh (r * h) + Rbh
                            const C* row = rd + uint64_t(2 * H + i) * H;
                            linear = rb[2 * H + i];
                            for (uint32_t k = 0; k < H; ++k) linear += row[k] * reset_h[k];
                        }
                        const C candidate = apply_activation(g, xg[2 * H + i] + wb[2 * H + i] + linear);
                        next[i] = (C(1) - z) * candidate + z * h[i];
                    }
                    h.swap(next);
                    if (seq_out) {
                        T* o = seq_out + ((uint64_t(t) * sh.dirs + dir) * B + b) * H;
                        for (uint32_t i = 0; i < H; ++i) o[i] = T(h[i]);
                    }
                }
                if (single_out) {
                    T* o = single_out + (uint64_t(dir) * B + b) * H;
                    for (uint32_t i = 0; i < H; ++i) o[i] = T(h[i]);
                }
            }
        });
    }
}

void run_gru(const KernelArgs& args) {
    visit_data_type(args.inputs[0].desc->data_type, [&]<class T>() {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) run_gru_typed<T>(args);
    });
}

uint64_t gru_workspace(const Node& node) { return GruShape(node).workspace_elements() * sizeof(float); }

}  // namespace

void register_recurrent_kernels(KernelTable& t) { add_kernel<GRUDesc>(t, {run_gru, gru_workspace}); }

}  // namespace dml::cpu
